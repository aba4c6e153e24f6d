"""Run a forwarded command line through the very Typer app the CLI runs, in the watcher.

The client sends its argv; the watcher runs `vaultmem ARGV` here with stdout and stderr
captured, and with the client's rendering environment (NO_COLOR, COLUMNS, whether stdout
is a terminal ...), so what the client prints is byte for byte what the command would have
printed in-process. Commands reach the watcher's warm App through the `app_provider` the
root context carries (cli/common.py open_app). Requests run one at a time on the watcher's
worker, which is what makes swapping sys.stdout and os.environ safe.

The daemon never imports the CLI: the `watch` command hands the watcher a CommandRunner
(cli/serve.py, `run_cli` over the CLI's click command).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from typing import Any

from vaultmem.daemon.client import FORWARDED, forwardable, passed_env
from vaultmem.daemon.forwarding import passes_env
from vaultmem.daemon.server import BadRequest

Provider = Callable[..., Any]
# (argv, env, tty, app provider) -> {"stdout", "stderr", "exit_code"}: one forwarded command line.
CommandRunner = Callable[[list[str], Mapping[str, str], bool, Provider], dict[str, Any]]


class Captured(io.StringIO):
    """A text stream that answers isatty() as the client's terminal would."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def check_cli_request(request: Mapping[str, Any]) -> tuple[list[str], dict[str, str], bool, str]:
    argv, env, tty, cwd = (
        request.get("argv"),
        request.get("env", {}),
        request.get("tty", False),
        request.get("cwd", "/"),
    )
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise BadRequest('"argv" must be a list of strings')
    if forwardable(argv) is None:
        raise BadRequest(f"the watcher runs only {', '.join(sorted(FORWARDED))} (without --help)")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise BadRequest('"env" must map strings to strings')
    if not isinstance(tty, bool) or not isinstance(cwd, str):
        raise BadRequest('"tty" must be a boolean and "cwd" a string')
    return argv, passed_env(env), tty, cwd


@contextmanager
def client_environment(env: Mapping[str, str]) -> Iterator[None]:
    """os.environ as the client had it, for the keys that matter; restored afterwards."""
    keys = {k for k in os.environ if passes_env(k)} | set(env)
    saved = {k: os.environ.get(k) for k in keys}
    try:
        for key in keys:
            if key in env:
                os.environ[key] = env[key]
            else:
                os.environ.pop(key, None)
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_cli(command: Any, argv: list[str], env: Mapping[str, str], tty: bool, provider: Provider) -> dict[str, Any]:
    out, err = Captured(tty), Captured(False)  # stderr: no progress bars through a socket
    saved_stdin = sys.stdin
    with client_environment(env), redirect_stdout(out), redirect_stderr(err):
        sys.stdin = io.StringIO("")
        try:
            # VaultmemGroup.main translates every error into its exit code and message.
            code = command.main(list(argv), prog_name="vaultmem", standalone_mode=False, obj={"app_provider": provider})
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            sys.stdin = saved_stdin
    exit_code = code if isinstance(code, int) and not isinstance(code, bool) else 0
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit_code": exit_code}
