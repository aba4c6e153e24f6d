"""Note ids: ULIDs for notes vaultmem creates, path-derived ids for files without one."""

from __future__ import annotations

import hashlib
import os
import re
import threading

from vaultmem import clock

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}\Z")

_lock = threading.Lock()
_last: tuple[int, int] = (0, 0)


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_ulid(now_ms: int | None = None) -> str:
    """A ULID: 48-bit millisecond time + 80 random bits, monotonic within a process."""
    global _last
    ms = int(clock.epoch() * 1000) if now_ms is None else now_ms
    with _lock:
        last_ms, last_rand = _last
        if ms <= last_ms:
            # Same millisecond (or clock step back): increment so ids stay ordered and unique.
            ms, rand = last_ms, (last_rand + 1) & ((1 << 80) - 1)
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last = (ms, rand)
    return _encode(ms, 10) + _encode(rand, 16)


def is_ulid(value: str) -> bool:
    return bool(ULID_RE.match(value))


def derived_id(relpath: str) -> str:
    """Id of a file that has none in its front matter: stable while its path is.

    The `p-` prefix keeps it visibly different from a ULID; `lint --fix` writes real ids.
    """
    return "p-" + hashlib.sha256(relpath.encode("utf-8")).hexdigest()[:20]
