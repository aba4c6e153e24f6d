"""File events become one fact: the vault is dirty. Which file changed hardly matters: the
reconcile that follows is a stat walk that reads only changed files, and it pairs moves by
id. So an editor's save dance (vim: `4913`, `.x.md.swp`, `x.md~`, write, rename), a burst
of writes, a deleted or renamed folder all come down to "reconcile once, soon".

Soon means a quiet window (no relevant event for `quiet_s`) capped by `max_latency_s`, so a
steady stream of writes (a git checkout) is still indexed every `max_latency_s`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vaultmem.config import CONFIG_NAME
from vaultmem.vault.layout import is_ignored_dir, is_note_path

NOTE = "note"
TREE = "tree"
CONFIG = "config"


def classify_path(relpath: str, is_directory: bool) -> str | None:
    """What an event on a vault-relative POSIX path means for the indexes. Pure."""
    if not relpath or relpath.startswith("../"):
        return None
    if relpath == CONFIG_NAME:
        return CONFIG
    parts = relpath.split("/")
    if is_directory:
        # A folder created, deleted or renamed: notes under it may have come or gone.
        return None if any(is_ignored_dir(p) for p in parts) else TREE
    return NOTE if is_note_path(relpath) else None


@dataclass(slots=True)
class Debounce:
    """When to reconcile after a run of events. Pure: the caller passes the clock."""

    quiet_s: float = 0.25
    max_latency_s: float = 1.0
    first: float | None = None
    last: float | None = None
    count: int = 0

    def mark(self, now: float) -> None:
        if self.first is None:
            self.first = now
        self.last = now
        self.count += 1

    @property
    def pending(self) -> bool:
        return self.first is not None

    def due_in(self, now: float) -> float | None:
        """Seconds until a reconcile is due (0: now), or None when nothing is pending."""
        if self.first is None or self.last is None:
            return None
        return max(0.0, min(self.last + self.quiet_s, self.first + self.max_latency_s) - now)

    def clear(self) -> None:
        self.first = self.last = None
        self.count = 0


def git_writing(lock_mtime: float | None, now: float, stale_s: float) -> bool:
    """Whether git is writing the work tree: its index lock exists and is younger than
    `stale_s` (a lock left by a git that crashed must not stop indexing for good). While it
    writes (a pull of a thousand notes, a checkout) the tree is half old, half new: one
    reconcile after it finishes beats one every second during it. Pure."""
    return lock_mtime is not None and now - lock_mtime < stale_s


def watched_event_classes() -> list[type[Any]]:
    """The watchdog events worth a wake-up. Opening and reading files (which every reconcile
    does) is left out at the inotify level, so indexing never wakes the watcher up again."""
    from watchdog import events as e

    return [
        e.FileCreatedEvent,
        e.FileDeletedEvent,
        e.FileModifiedEvent,
        e.FileMovedEvent,
        e.FileClosedEvent,
        e.DirCreatedEvent,
        e.DirDeletedEvent,
        e.DirMovedEvent,
    ]


def make_handler(root: str, on_change: Callable[[str], None]) -> Any:
    """A watchdog handler calling `on_change(kind)` for each event that matters."""
    from watchdog.events import FileSystemEventHandler

    prefix = root.rstrip(os.sep) + os.sep

    def relative(path: str | bytes) -> str:
        text = os.fsdecode(path)
        if not text.startswith(prefix):
            return ""
        rel = text[len(prefix) :]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel

    class VaultEvents(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            if event.event_type not in ("created", "deleted", "modified", "moved", "closed"):
                return
            kinds = {classify_path(relative(event.src_path), event.is_directory)}
            if event.event_type == "moved":
                kinds.add(classify_path(relative(event.dest_path), event.is_directory))
            kinds.discard(None)
            for kind in sorted(k for k in kinds if k is not None):
                on_change(kind)

    return VaultEvents()
