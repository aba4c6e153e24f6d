"""Note writes wait while `sync` has git merge (services/sync.py).

git's merge checks that a note is unchanged, runs the merge driver (a fresh Python process,
a few tenths of a second) and only then writes its result over the file: a write of ours
that lands in between is lost without a word, though it reported success (a review raced
an agent's appends against syncs: 13 of 117 lost). So every note write (store.py) holds a
shared lock on a file in the vault's state folder, many writers at once, and sync holds it
alone while git merges. A write waits at most WAIT_S for a merge to end, then refuses
(Conflict): nothing is written. A plain `git pull` by hand takes no such lock.

Writers of ours also take turns at the last step of a replace (the check that the note is
still what was read, and the swap): two of ours swapping one note at once each took the
other's file for a person's save (six agents commenting at once left a conflicted copy).
That turn lasts a hash and a rename; a person's editor, which takes no lock, is what the
check and the swap still guard against.
"""

from __future__ import annotations

import fcntl
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from vaultmem.config import STATE_DIR
from vaultmem.errors import Conflict

LOCK_NAME = "writers.lock"
SWAP_LOCK_NAME = "swap.lock"
WAIT_S = 60.0  # a merge of many notes runs a driver process for each
_POLL_S = 0.05

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def held(root: Path, exclusive: bool = False, wait_s: float = WAIT_S, name: str = LOCK_NAME) -> Iterator[None]:
    """The writers' lock of the vault at `root`: shared for a write, `exclusive` for a
    merge (or, by `name`, the swap's turn). Where the state folder cannot be made (a
    read-only vault) there is nothing to exclude, and nothing is locked."""
    try:
        (root / STATE_DIR).mkdir(exist_ok=True)
        fd = os.open(root / STATE_DIR / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        yield
        return
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    what = "other writes are still going on" if exclusive else "a sync is merging"
                    raise Conflict(f"{what} after {wait_s:.0f} s; nothing done: try again") from None
                time.sleep(_POLL_S)
        yield
    finally:
        os.close(fd)  # closing releases the lock


# Checking that a name is free and taking it: two `note create --title Plan` at once each
# found no "Plan" among the shared notes and both wrote one (then every `get Plan` was
# ambiguous); two `write`s of one memory each found no duplicate; two promotions of one
# capture each wrote its note. Such a write takes this turn, catches the index up inside
# it and only then checks. Re-entered by a write inside another (ingest's creates).
NAMES_LOCK_NAME = "names.lock"
_turns = threading.local()


@contextmanager
def naming_turn(root: Path) -> Iterator[None]:
    """This thread's turn, among vaultmem's writers, to check a name is free and take it."""
    mine: set[str] = _turns.__dict__.setdefault("roots", set())
    key = os.path.realpath(root)
    if key in mine:
        yield
        return
    with held(root, exclusive=True, name=NAMES_LOCK_NAME):
        mine.add(key)
        try:
            yield
        finally:
            mine.discard(key)


def swap_turn(root: Path) -> AbstractContextManager[None]:
    """This process's turn, among vaultmem's writers, to check a note and swap it in."""
    return held(root, exclusive=True, name=SWAP_LOCK_NAME)


def writing(fn: F) -> F:
    """A store function whose first argument is the vault's root, run holding the lock shared."""

    @functools.wraps(fn)
    def wrapper(root: Path, *args: Any, **kwargs: Any) -> Any:
        with held(root):
            return fn(root, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
