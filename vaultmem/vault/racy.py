"""Whether a file still holds what was read from it: by its stat when that can be trusted.

git's "racy clean" rule. A stat (size, mtime) says a file is unchanged only if every edit
would have changed it, and an edit in the clock tick of the mtime that was seen keeps both
(two saves in one tick, a disk stamping to 1 s or 2 s — FAT's 2 s the coarsest — a tool
that puts the mtime back). So a stat is trusted only when its mtime is RACY_WINDOW_NS older
than the moment the file was read; a younger file is read and hashed again, until a read
safely after its mtime found it unchanged.

index/catalog.py applies the rule to every note of a scan. `look` and `look_again` apply it
to one small file a long-lived process keeps what it read from: vaultmem.toml in the
watcher (access rules), the token file in the HTTP server (a revoke must hold).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

RACY_WINDOW_NS = 2_000_000_000


def now_ns() -> int:
    """Now, by the clock that stamps mtimes (the system's: vaultmem.clock may be fixed).
    Tests fix it here (one hook for the catalog and the single files)."""
    return time.time_ns()


def is_racy(mtime_ns: int, seen_ns: int) -> bool:
    """Pure: a stat with this mtime, seen at `seen_ns`, may hide a later edit in its tick."""
    return mtime_ns >= seen_ns - RACY_WINDOW_NS


@dataclass(frozen=True, slots=True)
class SeenFile:
    """What a file was when it was read."""

    stat: tuple[int, int, int, int, int]  # (device, inode, size, mtime_ns, ctime_ns)
    sha256: str
    seen_ns: int  # taken before the stat and the read


def stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    # ctime too (git's default): an edit whose mtime was put back still moves it, unless
    # that too falls in one tick; the rename of a rewrite changes the inode.
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def trusted(before: SeenFile, stat_now: tuple[int, int, int, int, int]) -> bool:
    """Pure: `stat_now` proves the file unchanged since `before` without reading it."""
    return stat_now == before.stat and not is_racy(before.stat[3], before.seen_ns)


def look(path: Path) -> SeenFile | None:
    """The file as it is now; None when it cannot be read (missing, or refused). Take it
    before the caller reads the file itself: an edit in between is then seen next time."""
    seen = now_ns()
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except OSError:
        return None
    return SeenFile(stat_key(st), hashlib.sha256(data).hexdigest(), seen)


def look_again(before: SeenFile | None, path: Path) -> tuple[SeenFile | None, bool]:
    """(the file now, whether its bytes differ from `before`'s or it came or went). Read
    only when its stat cannot be trusted; bytes found the same are recorded as seen now,
    so once its mtime is a window old the stat alone answers again."""
    if before is not None:
        try:
            if trusted(before, stat_key(os.stat(path))):
                return before, False
        except OSError:
            pass  # gone or refused: look says which
    now = look(path)
    return now, _bytes(now) != _bytes(before)


def _bytes(seen: SeenFile | None) -> str | None:
    return None if seen is None else seen.sha256
