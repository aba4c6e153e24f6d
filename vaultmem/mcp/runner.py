"""Runs one tool call as its `vaultmem` command (tools.py) and returns its `--json` document.

When a watcher runs for the vault, the commands it answers (search, get, query, reference)
go to it over its socket, exactly as the CLI forwards them: the watcher stays the one
process that opens the indexes, however many MCP servers run. Write commands run here, as
the CLI runs them (atomic file writes, then a bounded wait until the watcher has indexed
them), so a search issued after a write returns finds it. A watcher this server has just
started (cli/autostart.py) is waited for, a few seconds at most, rather than opening the
indexes here beside it; until its embedding model is loaded it answers searches with BM25 +
graph and says so (a warning in the result). Without a watcher (autostart off, or it could
not start) everything runs here, as a cold CLI command would.

Commands run one at a time per process: running one swaps sys.stdout and os.environ.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.daemon.bridge import Captured, client_environment
from vaultmem.daemon.client import exchange, forwardable, passed_env
from vaultmem.daemon.paths import connect_path
from vaultmem.errors import VaultmemError
from vaultmem.mcp.tools import Tool, split_stdin


@dataclass(frozen=True, slots=True)
class Outcome:
    data: dict[str, Any]  # the command's JSON document; {"error": {code, message}} on failure
    is_error: bool
    warnings: str = ""  # what the command said on stderr (warnings, notices)
    via: str = "process"  # "watcher" or "process"


# How long a call waits for the socket of a watcher this server started: it takes the index
# lock after its imports (~1 s), or waits up to its lock_wait_s (15 s) for an indexer.
WATCHER_START_WAIT_S = 20.0


def error_outcome(code: str, message: str) -> Outcome:
    return Outcome({"error": {"code": code, "message": message}}, True)


class Runner:
    def __init__(self, root: Path, starting: subprocess.Popen[bytes] | None = None) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._command: Any = None
        # A watcher started by this server and not yet answering (cli/autostart.py).
        self._starting = starting
        self._starting_until = time.monotonic() + WATCHER_START_WAIT_S

    def call(self, tool: Tool, arguments: dict[str, Any] | None, ghost: str | None) -> Outcome:
        try:
            argv = tool.command(arguments, ghost)
        except VaultmemError as exc:
            return error_outcome(exc.code, exc.message)
        argv, stdin = split_stdin(argv)
        full = ["--vault", str(self.root), *(["--ghost", ghost] if ghost else []), "--json", *argv]
        # The ghost is the server's, never the environment's.
        env = {k: v for k, v in passed_env(os.environ).items() if k not in ("VAULTMEM_GHOST", "VAULTMEM_VAULT")}
        reply = self._forward(full, env) if forwardable(full) else None
        via = "watcher"
        if reply is None:
            via = "process"
            with self._lock:
                reply = self._run_here(full, env, stdin)
        return _outcome(reply, via)

    def _socket(self) -> str | None:
        """The watcher's socket; waits for the one of a watcher this server is starting."""
        path = connect_path(str(self.root))
        if path is None:
            return None
        proc = self._starting
        if proc is not None:
            while not os.path.exists(path) and proc.poll() is None and time.monotonic() < self._starting_until:
                time.sleep(0.05)
            self._starting = None  # up, gone (another watcher won the race, or none could start) or late
        return path if os.path.exists(path) else None

    def _forward(self, argv: list[str], env: dict[str, str]) -> dict[str, Any] | None:
        path = self._socket()
        if path is None:
            return None
        request = {"op": "cli", "argv": argv, "env": env, "tty": False, "cwd": str(self.root), "reply": "frame"}
        reply, _ = exchange(path, request)
        if reply is None or not isinstance(reply.get("exit_code"), int):
            return None  # no watcher after all, or it is stopping: run it here
        return reply

    def _run_here(self, argv: list[str], env: dict[str, str], stdin: str) -> dict[str, Any]:
        if self._command is None:
            import typer.main

            from vaultmem.cli.main import app

            self._command = typer.main.get_command(app)
        out, err = Captured(False), Captured(False)
        saved_stdin = sys.stdin
        with client_environment(env), redirect_stdout(out), redirect_stderr(err):
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
            try:
                # VaultmemGroup.main turns every error into its code and JSON document.
                code = self._command.main(list(argv), prog_name="vaultmem", standalone_mode=False)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            finally:
                sys.stdin = saved_stdin
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) else 0
        return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit_code": exit_code}


def _outcome(reply: dict[str, Any], via: str) -> Outcome:
    stdout, stderr = str(reply.get("stdout", "")), str(reply.get("stderr", ""))
    try:
        data = json.loads(stdout) if stdout.strip() else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        # Never a traceback to the client: the last line of what the command said.
        lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith((" ", "Traceback"))]
        message = lines[-1].removeprefix("vaultmem: error: ") if lines else "the command gave no answer"
        return Outcome({"error": {"code": "internal", "message": message}}, True, "", via)
    # Warnings only: a failed command's message is already in its error document.
    warnings = "\n".join(line for line in stderr.splitlines() if line.startswith("warning"))
    return Outcome(data, reply.get("exit_code") != 0 or "error" in data, warnings, via)
