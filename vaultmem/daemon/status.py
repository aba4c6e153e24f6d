"""`.vaultmem/watcher.json`: what the watcher is doing, for `vaultmem status` and people.

    {pid, vault, socket, log, started, heartbeat, state, rescan_interval,
     last_reconcile: {at, reason, added, updated, deleted, moved, seconds},
     reconciles, served, queue, pending_events, recent_errors: [{at, message}]}

state: starting | catching_up | watching | reconciling | stopping | stopped. The heartbeat
is rewritten every few seconds by a thread of its own, so a long reconcile does not look
like a dead watcher. Writes are atomic (temp file + rename): a reader never sees half.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vaultmem import clock

MAX_ERRORS = 10


def now_iso() -> str:
    return clock.now_iso()


class StatusFile:
    def __init__(self, path: Path, snapshot: Callable[[], dict[str, Any]]) -> None:
        self.path = path
        self.snapshot = snapshot
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def write(self, **overrides: Any) -> None:
        data = {**self.snapshot(), "heartbeat": now_iso(), **overrides}
        text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        with self._lock:
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            try:
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, self.path)
            except FileNotFoundError:
                # .vaultmem/ went with the vault (renamed or deleted under the watcher): the
                # runner's own check stops it; a status write must not end it with an error
                return

    def start_heartbeat(self, every_s: float, check: Callable[[], None] = lambda: None) -> None:
        """Rewrite the file every `every_s`, calling `check` first (the runner's own health)."""

        def beat() -> None:
            while not self._stop.wait(every_s):
                check()
                try:
                    self.write()
                except OSError:
                    pass  # a full disk, or .vaultmem/ removed and the runner stopping

        self._thread = threading.Thread(target=beat, name="vaultmem-heartbeat", daemon=True)
        self._thread.start()

    def stop_heartbeat(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


class RecentErrors:
    """The last few things that went wrong, for watcher.json (the log has them all)."""

    def __init__(self) -> None:
        self._items: deque[dict[str, str]] = deque(maxlen=MAX_ERRORS)

    def add(self, message: str) -> None:
        self._items.append({"at": now_iso(), "message": message[:500]})

    def to_list(self) -> list[dict[str, str]]:
        return list(self._items)
