"""The one clock: every "now" vaultmem reads comes from here.

Dates written into notes, recency in scores, expiry filters, trash stamps, heartbeats and
new ids all ask this module, so a test can fix time for the whole program in one place
(`tests/golden` does) and no two modules disagree on what a timestamp looks like: notes get
`note_time` (Obsidian's Date & time form, UTC by convention), everything else `iso`.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

_fixed: float | None = None  # seconds since the epoch, when a test has fixed time


def epoch() -> float:
    """Now, in seconds since the epoch."""
    return time.time() if _fixed is None else _fixed


def now() -> datetime:
    """Now in UTC, to the second (the precision notes record)."""
    return datetime.fromtimestamp(int(epoch()), UTC)


def iso(moment: datetime) -> str:
    """`2026-11-21T10:00:00Z`: a time outside the notes (status files, tokens, the bounds
    handed to git), where the zone is spelled out."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso() -> str:
    return iso(now())


def note_time(moment: datetime) -> str:
    """`2026-11-21T10:00:00`: how vaultmem writes a time into a note's properties.

    The form of Obsidian's Date & time property (`YYYY-MM-DDTHH:MM:SS`, no zone), so a
    person sees and sorts `created`/`updated` as dates in Obsidian. Obsidian keeps no zone,
    so the vault's convention is that a time without one is UTC (README, "Note format");
    every reader (vault/dates.py) takes it so, and still reads the `Z` and offset forms
    older vaults hold."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def now_note_time() -> str:
    return note_time(now())


def fix(seconds: float | None) -> None:
    """Fix the clock at `seconds` (None: the real clock again). For tests."""
    global _fixed
    _fixed = seconds
