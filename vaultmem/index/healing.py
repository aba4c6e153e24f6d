"""Derived state heals itself (SPEC §4: the markdown is the truth, `.vaultmem/` is derived).

Each store's opener knows its own ways of breaking and raises `Damaged` for them: the state
db (SQLite's errors), the Whoosh index (its TOC and segment errors), the Chroma store (its
errors, and a `chroma.sqlite3` that is no longer a whole SQLite file). `open_or_rebuild`
is the one place that handles it: the damaged files are set aside under `.vaultmem/` as
`<name>.broken-<stamp>` (kept for a post-mortem, never read again), a notice says so, and
the store is opened again from nothing. An empty store makes the next reconcile refill it
from the notes: every command that reads an index reconciles first.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from vaultmem.errors import VaultmemError

T = TypeVar("T")

SQLITE_MAGIC = b"SQLite format 3\x00"


class Damaged(VaultmemError):
    """A derived store cannot be read as it is. Escapes to the CLI only when setting it
    aside failed too (a read-only .vaultmem/, say)."""

    code = "damaged_index"

    def __init__(self, what: str, path: Path, reason: str, companions: Sequence[str] = ()) -> None:
        super().__init__(f"the {what} at {path} is damaged ({reason})")
        self.what = what
        self.path = path
        self.reason = reason
        # Files that belong to `path` and go aside with it: suffixes of its name (SQLite's
        # `-wal` and `-shm`, which must never meet a new database of the same name).
        self.companions = tuple(companions)


def set_aside(path: Path, companions: Sequence[str] = ()) -> Path:
    """Rename `path` (a file or a folder) to `<name>.broken-<stamp>` beside it."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    n = 1
    while os.path.lexists(target):
        target = path.with_name(f"{path.name}.broken-{stamp}-{n}")
        n += 1
    os.rename(path, target)
    for suffix in companions:
        companion = path.with_name(path.name + suffix)
        if os.path.lexists(companion):
            os.rename(companion, target.with_name(target.name + suffix))
    return target


def open_or_rebuild(open_: Callable[[], T], notice: Callable[[str], None]) -> T:
    """`open_()`, or, when it finds its store damaged, set the store aside and open it anew."""
    try:
        return open_()
    except Damaged as exc:
        try:
            aside = set_aside(exc.path, exc.companions)
        except OSError as err:
            raise Damaged(exc.what, exc.path, f"{exc.reason}; cannot set it aside: {err.strerror}") from None
        notice(
            f"warning: the {exc.what} was damaged ({exc.reason}): "
            f"moved it to {aside.parent.name}/{aside.name}, rebuilding it from the notes"
        )
    return open_()


def sqlite_problem(path: Path, check_size: bool = True) -> str | None:
    """Why the SQLite file at `path` cannot be a whole database, from its first 100 bytes
    and its size alone; None when it looks whole (or does not exist yet).

    `check_size`: compare the size with the page count the header records (valid when the
    change counter matches its copy). Only for a file no writer is extending: a SQLite file
    grows during a commit (or a WAL checkpoint) before its header says so."""
    if not os.path.lexists(path):
        return None
    if path.is_symlink() or not path.is_file():
        return "not a regular file"
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    if size == 0:
        return "empty"
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        return "not an SQLite file"
    if check_size:
        (page_size,) = struct.unpack(">H", header[16:18])
        page_size = 65536 if page_size == 1 else page_size
        (pages,) = struct.unpack(">I", header[28:32])
        valid = header[24:28] == header[92:96] and pages > 0
        if valid and size < pages * page_size:
            return f"truncated: {size} bytes of {pages * page_size}"
    return None
