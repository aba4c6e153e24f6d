"""Starting and stopping a watcher from another process: `watch --detach`, `watch --stop`."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from vaultmem.daemon.client import ping
from vaultmem.errors import IndexBusy, VaultmemError
from vaultmem.index.lock import IndexLock, pid_alive
from vaultmem.paths import StatePaths

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


class WatcherFailed(VaultmemError):
    """The watcher could not start, or would not stop."""


def live_watcher_pid(root: Path) -> int | None:
    """The pid of the watcher holding this vault's index lock, or None."""
    lock = IndexLock(StatePaths(root).lock, "probe", wait_s=0)
    holder = lock.holder()
    if not holder or holder.get("role") != "watcher":
        return None
    try:
        # holder() trusts any live pid; the flock tells whether that process still holds
        # the lock (after a kill -9 the kernel dropped it, and the pid may be reused).
        lock.acquire()
    except IndexBusy:
        return int(str(holder["pid"]))
    lock.release()
    return None


def running(pid: int) -> bool:
    """Alive and not a zombie (a watcher started by this very process, not yet reaped)."""
    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc: trust kill(pid, 0)


def _log_tail(root: Path) -> str:
    try:
        lines = StatePaths(root).watcher_log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return next((line for line in reversed(lines) if line.strip()), "")


def start_detached(root: Path, argv: list[str], timeout_s: float = START_TIMEOUT_S) -> dict[str, Any]:
    """Start a watcher (the process `argv` runs: cli/serve.py) in its own session; return
    once its socket answers."""
    existing = ping(str(root))
    if existing is not None:
        return {"pid": existing.get("pid"), "socket": existing.get("socket"), "already_running": True}
    files = StatePaths(root)
    files.make()
    with open(files.watcher_log, "ab") as log:
        # Its own session: no terminal, no SIGINT from the shell that started it. Output
        # goes to the log, where a crash before logging is set up still leaves a trace.
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=str(root), start_new_session=True
        )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            other = ping(str(root))
            if other is not None:  # another `watch --detach` won the race: that is fine
                return {"pid": other.get("pid"), "socket": other.get("socket"), "already_running": True}
            reason = _log_tail(root) or f"exit code {code}"
            if code == IndexBusy.exit_code:
                raise IndexBusy(f"the watcher did not start: {reason}")
            raise WatcherFailed(f"the watcher did not start: {reason}")
        reply = ping(str(root), timeout_s=1.0)
        if reply is not None and reply.get("pid") == proc.pid:
            return {"pid": proc.pid, "socket": reply.get("socket"), "already_running": False}
        time.sleep(0.05)
    raise WatcherFailed(
        f"the watcher (pid {proc.pid}) did not answer within {timeout_s:.0f} s; see {files.watcher_log}"
    )


def stop(root: Path, timeout_s: float = STOP_TIMEOUT_S) -> dict[str, Any]:
    """SIGTERM the vault's watcher and wait until it has exited. No watcher: nothing to do."""
    pid = live_watcher_pid(root)
    if pid is None:
        return {"stopped": False, "running": False, "pid": None}
    start = time.monotonic()
    os.kill(pid, signal.SIGTERM)
    while time.monotonic() - start < timeout_s:
        if not running(pid):
            return {"stopped": True, "running": False, "pid": pid, "seconds": round(time.monotonic() - start, 3)}
        time.sleep(0.05)
    raise WatcherFailed(f"the watcher (pid {pid}) did not stop within {timeout_s:.0f} s")
