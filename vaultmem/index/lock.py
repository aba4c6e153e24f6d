"""One writer at a time: an advisory lock on .vaultmem/index.lock.

The kernel drops an flock when its holder dies, even by kill -9, so a dead writer never
leaves a stale lock behind; the file also records the holder's pid and role so a waiting
writer can say who it is waiting for. A second writer waits a bounded time, then fails
with IndexBusy (exit 6).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from types import TracebackType

from vaultmem import clock
from vaultmem.errors import IndexBusy

DEFAULT_WAIT_S = 15.0


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class IndexLock:
    def __init__(self, path: Path, role: str = "index", wait_s: float = DEFAULT_WAIT_S) -> None:
        self.path = path
        self.role = role
        self.wait_s = wait_s
        self._fd: int | None = None

    def holder(self) -> dict[str, object] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not pid_alive(int(data.get("pid", 0) or 0)):
            return None  # stale record of a dead process: the lock itself is free
        return data

    def acquire(self) -> IndexLock:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.wait_s
        delay = 0.02
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    holder = self.holder()
                    who = f"{holder.get('role', 'a writer')} (pid {holder.get('pid')})" if holder else "another writer"
                    raise IndexBusy(
                        f"the index is busy: {who} holds {self.path.name}; waited {self.wait_s:.0f} s",
                        holder=holder,
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "role": self.role, "since": clock.epoch()}).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> IndexLock:
        return self.acquire() if self._fd is None else self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
