"""The CLI side of the watcher's socket. Stdlib only, so `vaultmem search` through a running
watcher costs a bare interpreter start plus one round trip: no typer, rich, yaml, whoosh,
chromadb or model import in the client process. The forwarding path goes further and
imports neither `socket` (its enum set-up costs ~8 ms) nor `json` (~4 ms): it speaks through
`_socket`, writes its one request with `_json`'s string encoder, and asks for a framed reply.

Protocol (JSON lines, one request and one reply per connection; see server.py):
    {"op": "cli", "argv": [...], "env": {...}, "tty": bool, "cwd": str}
        -> {"stdout": str, "stderr": str, "exit_code": int}
    the same with "reply": "frame"
        -> b"VMF1 <exit_code> <stdout bytes> <stderr bytes>\n" + stdout + stderr (UTF-8);
           an error reply stays a JSON line
    {"op": "call", "use_case": "search"|"get"|"query"|"reference", "ghost": str|null,
     "root": str, "request": {...}}
        -> {"result": {...}, "warnings": [...]} or {"error": {"code", "message", ...}}:
           a typed read (services/reads.py) for a front end that is not the CLI (MCP)
    {"op": "sync", "paths": [...]}  -> {"ok": true} once a reconcile that started after
        the request has finished, or {"ok": false, "error": str}
    {"op": "ping"}                  -> {"ok": true, "pid": ..., "state": ..., ...}
    anything else                   -> {"error": {"code": "invalid_request", "message": str}}
While a request waits for the watcher, the server sends a space every few seconds (JSON
allows leading whitespace): silence for longer than STALL_S means a hung watcher.
"""

from __future__ import annotations

import os
import sys

try:
    from _json import encode_basestring_ascii as _encode_string  # C, no import cost
except ImportError:  # a Python without the C accelerator
    from json.encoder import py_encode_basestring_ascii as _encode_string

from vaultmem.daemon.forwarding import (
    COMMANDS,
    FIRST_BYTE_S,
    HELP_FLAGS,
    MAX_REPLY_BYTES,
    ROOT_FLAGS,
    ROOT_OPTIONS,
    STALL_S,
    TIMEOUT_ENV,
    UNRESPONSIVE_ENV,
    VAULT_OPTION,
    passes_env,
)
from vaultmem.daemon.paths import CONFIG_NAME, connect_path

TYPE_CHECKING = False  # not `from typing import ...`: typing costs this process ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

FORWARDED = frozenset(COMMANDS)  # what is forwarded: forwarding.py
_ROOT_ASSIGNED = tuple(f"{option}=" for option in ROOT_OPTIONS)  # `--vault=X`
_VAULT_ASSIGNED = f"{VAULT_OPTION}="
CONNECT_TIMEOUT_S = 2.0
WAIT_TICK_S = 1.0  # how often a waiting command may tell the person what it waits for
SYNC_TIMEOUT_S = 10.0


def first_byte_s() -> float:
    try:
        value = float(os.environ.get(TIMEOUT_ENV) or FIRST_BYTE_S)
    except ValueError:
        return FIRST_BYTE_S
    return value if value > 0 else FIRST_BYTE_S


def passed_env(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if passes_env(k)}


def command_of(argv: list[str]) -> str | None:
    """The command word after the root options (`--vault X`, `--ghost X`, `--json`)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ROOT_OPTIONS:
            i += 2
        elif arg.startswith(_ROOT_ASSIGNED) or arg in ROOT_FLAGS:
            i += 1
        else:
            return None if arg.startswith("-") else arg
    return None


def forwardable(argv: list[str]) -> str | None:
    command = command_of(argv)
    if command not in FORWARDED:
        return None
    for arg in argv:
        if arg == "--":
            break
        if arg in HELP_FLAGS:
            return None
    return command


def vault_flag(argv: list[str]) -> str | None:
    """The last --vault given (a command's own flag comes after the root's, and wins)."""
    value = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            break
        if arg == VAULT_OPTION and i + 1 < len(argv):
            value = argv[i + 1]
            i += 2
            continue
        if arg.startswith(_VAULT_ASSIGNED):
            value = arg[len(_VAULT_ASSIGNED) :]
        i += 1
    return value


def find_root(argv: list[str], environ: Mapping[str, str], cwd: str) -> str | None:
    """The vault as vaultmem.config.find_vault finds it; None when there is none."""
    explicit = vault_flag(argv) or environ.get("VAULTMEM_VAULT")
    if explicit:
        root = os.path.realpath(os.path.join(cwd, os.path.expanduser(explicit)))
        return root if os.path.isfile(os.path.join(root, CONFIG_NAME)) else None
    here = os.path.realpath(cwd)
    while True:
        if os.path.isfile(os.path.join(here, CONFIG_NAME)):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _encode(value: object) -> str:
    """JSON for the request's types (str, bool, int, list, dict of str) without importing json."""
    if isinstance(value, str):
        return _quote(value)
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise TypeError("JSON has no NaN or infinity")
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_encode(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_quote(str(k))}: {_encode(v)}" for k, v in value.items()) + "}"
    if value is None:
        return "null"
    raise TypeError(f"cannot encode {type(value).__name__}")


def _quote(text: str) -> str:
    return str(_encode_string(text))


def _read_reply(data: bytes) -> dict[str, Any] | None:
    """A JSON reply, or a framed `cli` reply turned into the same dict; None if neither."""
    data = data.lstrip(b" ")  # keepalives
    if data.startswith(b"VMF1 "):
        head, _, rest = data.partition(b"\n")
        try:
            code, n_out, n_err = (int(x) for x in head.split()[1:4])
        except ValueError:
            return None
        if len(rest) != n_out + n_err:
            return None
        try:
            return {
                "exit_code": code,
                "stdout": rest[:n_out].decode("utf-8"),
                "stderr": rest[n_out:].decode("utf-8"),
            }
        except UnicodeDecodeError:
            return None
    import json

    try:
        reply = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return reply if isinstance(reply, dict) else None


def peer_uid(sock: Any) -> int | None:
    """The user id of the process at the other end of a connected Unix socket (Linux
    SO_PEERCRED, macOS LOCAL_PEERCRED); None where the platform cannot tell."""
    import _socket

    if hasattr(_socket, "SO_PEERCRED"):  # struct ucred {pid_t pid; uid_t uid; gid_t gid;}
        raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    elif hasattr(_socket, "LOCAL_PEERCRED"):  # struct xucred {u_int version; uid_t uid; ...}
        raw = sock.getsockopt(0, _socket.LOCAL_PEERCRED, 76)
    else:
        return None
    return int.from_bytes(raw[4:8], sys.byteorder)


def exchange(
    path: str,
    request: dict[str, Any],
    deadline_s: float | None = None,
    on_wait: Callable[[float], None] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """One request: (reply, "ok"), or (None, why not): "no_watcher" (no socket, refused),
    "foreign" (the process listening is another user's: nothing is sent to it),
    "unresponsive" (not even the receipt of the request within first_byte_s), "timeout"
    (`deadline_s` passed), "stalled" (no keepalive), "broken" (died mid-reply)."""
    import _socket
    import time

    start = time.monotonic()
    chunks: list[bytes] = []
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            sock.settimeout(CONNECT_TIMEOUT_S)
            sock.connect(path)
        except OSError:
            return None, "no_watcher"
        try:
            uid = peer_uid(sock)
        except OSError:
            return None, "foreign"
        if uid is not None and uid != os.getuid():
            return None, "foreign"
        try:
            sock.sendall(_encode(request).encode("utf-8") + b"\n")
            size = 0
            heard = start  # when the watcher last sent something (its receipt, a keepalive)
            while True:
                wait = (STALL_S if size else first_byte_s()) - (time.monotonic() - heard)
                if deadline_s is not None:
                    wait = min(wait, deadline_s - (time.monotonic() - start))
                    if wait <= 0:
                        return None, "timeout"
                if wait <= 0:
                    raise TimeoutError
                # `on_wait` is called about once a second while the reply is awaited
                sock.settimeout(min(wait, WAIT_TICK_S) if on_wait is not None else wait)
                try:
                    chunk = sock.recv(1 << 16)
                except TimeoutError:
                    if on_wait is None or time.monotonic() - heard >= wait:
                        raise
                    on_wait(time.monotonic() - start)
                    continue
                heard = time.monotonic()
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_REPLY_BYTES:
                    return None, "broken"
        except TimeoutError:
            if deadline_s is not None and time.monotonic() - start >= deadline_s:
                return None, "timeout"
            return None, "stalled" if size else "unresponsive"
        except OSError:
            return None, "broken"
    finally:
        sock.close()
    reply = _read_reply(b"".join(chunks))
    return (reply, "ok") if reply is not None else (None, "broken")


def ping(root: str, timeout_s: float = 2.0) -> dict[str, Any] | None:
    path = connect_path(root)
    if path is None:
        return None
    reply, _ = exchange(path, {"op": "ping"}, deadline_s=timeout_s)
    return reply if reply is not None and reply.get("ok") else None


def sync(root: str, paths: list[str], timeout_s: float = SYNC_TIMEOUT_S) -> str:
    """After a write: "synced" once a watcher has indexed it, "no_watcher" when none runs
    (or it is stopping: the next read catches up by itself), else what went wrong."""
    path = connect_path(root)
    if path is None or not os.path.exists(path):
        return "no_watcher"
    # With the vault it means: a watcher of another vault (reached through a symlinked or
    # moved socket) refuses, and a write is never reported as indexed by it.
    reply, why = exchange(path, {"op": "sync", "paths": paths, "root": root}, deadline_s=timeout_s)
    if reply is None:
        return "no_watcher" if why == "no_watcher" else f"{why} after {timeout_s:.0f} s" if why == "timeout" else why
    if reply.get("ok"):
        return "synced"
    error = reply.get("error")
    if isinstance(error, dict) and error.get("code") in ("stopping", "not_this_vault"):
        return "no_watcher"
    return str(error.get("message") if isinstance(error, dict) else error)


def synced_after_write(root: str, notice: Callable[[str], None]) -> Callable[[list[str]], None]:
    """An App's `after_write` for a process beside a watcher (the CLI, the MCP server): after
    a write, wait (bounded) until a running watcher has indexed the files, so the search
    that follows finds them."""

    def after_write(paths: list[str]) -> None:
        outcome = sync(root, paths, SYNC_TIMEOUT_S)
        if outcome not in ("synced", "no_watcher"):
            notice(f"warning: written, but the watcher has not indexed it yet ({outcome}); it will shortly")

    return after_write


def _stderr_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class WaitNotice:
    """What a command forwarded to a busy watcher waits for, told on a terminal's stderr
    within a second and kept up to date: the first index of a vault (with its progress),
    the embedding model loading, or just the watcher. stdout stays the command's."""

    def __init__(self, path: str, counted: bool = True) -> None:
        self.path = path
        self.counted = counted
        self.shown = False

    def __call__(self, waited: float) -> None:
        reply, _ = exchange(self.path, {"op": "ping"}, deadline_s=0.5)
        text = wait_text(reply, waited, self.counted)
        sys.stderr.write(f"\r\x1b[K{text}")
        sys.stderr.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def wait_text(status: dict[str, Any] | None, waited: float, counted: bool = True) -> str:
    """The line a waiting command shows, from the watcher's ping. Pure. `counted`: with the
    indexing's counts, which are the whole vault's (another ghost's private notes too), so
    only for a command run without a ghost."""
    progress = (status or {}).get("progress")
    if isinstance(progress, dict) and progress.get("total") and not counted:
        stage = progress.get("stage")
        return f"vaultmem: {'embedding notes' if stage == 'embedding' else 'indexing the vault'} ({waited:.0f} s)…"
    if isinstance(progress, dict) and progress.get("total"):
        stage, done, total = progress.get("stage"), progress.get("done", 0), progress.get("total")
        what = "embedding notes" if stage == "embedding" else "indexing the vault" if stage else "indexing"
        return f"vaultmem: {what}: {done:,} of {total:,} ({waited:.0f} s)…"
    if isinstance(progress, dict):
        return f"vaultmem: reading the vault's notes ({waited:.0f} s)…"
    if (status or {}).get("model") == "loading":
        return f"vaultmem: waiting for the embedding model to load ({waited:.0f} s)…"
    return f"vaultmem: waiting for the watcher ({waited:.0f} s)…"


def _ghost_acts(argv: list[str], env: dict[str, str]) -> bool:
    """Whether a ghost runs the command (a `--ghost` anywhere, or $VAULTMEM_GHOST): when in
    doubt, yes."""
    return bool(env.get("VAULTMEM_GHOST")) or any(a == "--ghost" or a.startswith("--ghost=") for a in argv)


def _terminal_columns() -> str | None:
    try:
        return str(os.get_terminal_size(sys.stdout.fileno()).columns)
    except (OSError, ValueError):
        return None


def forward(argv: list[str]) -> int | None:
    """Run `vaultmem ARGV` in a live watcher and print its output; the exit code, or None
    when the command is not one the watcher answers or no watcher answers (an unresponsive
    one is noted in $VAULTMEM_WATCHER_UNRESPONSIVE for the command run here instead)."""
    if forwardable(argv) is None or os.environ.get(UNRESPONSIVE_ENV):
        return None
    if os.environ.get("GIT_INDEX_FILE") or os.environ.get("GIT_DIR"):
        # run by git (a hook): git's environment is this command's to read (review
        # --staged reads the index git is committing), not the watcher's
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    root = find_root(argv, os.environ, cwd)
    path = connect_path(root) if root is not None else None
    if path is None or not os.path.exists(path):
        return None
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    env = passed_env(os.environ)
    if tty and "COLUMNS" not in env:
        # rich sizes a terminal from COLUMNS first; the watcher has no terminal to ask.
        columns = _terminal_columns()
        if columns:
            env["COLUMNS"] = columns
    request = {"op": "cli", "argv": argv, "env": env, "tty": tty, "cwd": cwd, "reply": "frame"}
    waiting = WaitNotice(path, counted=not _ghost_acts(argv, env)) if _stderr_tty() else None
    try:
        reply, why = exchange(path, request, on_wait=waiting)
    finally:
        if waiting is not None:
            waiting.done()
    if reply is None or not isinstance(reply.get("exit_code"), int):
        error = reply.get("error") if reply is not None else None
        if why == "unresponsive" or (isinstance(error, dict) and error.get("code") == "unresponsive"):
            os.environ[UNRESPONSIVE_ENV] = str(error.get("message")) if isinstance(error, dict) else why
        return None
    try:
        if reply.get("stderr"):
            sys.stderr.write(str(reply["stderr"]))
            sys.stderr.flush()
        if reply.get("stdout"):
            sys.stdout.write(str(reply["stdout"]))
            sys.stdout.flush()
    except BrokenPipeError:
        # `vaultmem search … | head`: stop quietly, as the in-process CLI does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return int(reply["exit_code"])
