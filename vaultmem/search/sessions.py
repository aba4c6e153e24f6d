"""A conversation memory's session: the turns said just before and after it.

`vaultmem write` keeps each conversation turn as a note of its own (type `conversation`,
`created` = when it was said). A turn alone is often not enough to answer from, nor to be
found: "Yes, every Sunday!" answers the question the turn before it asked. So search reads a
turn in its session, twice: a turn whose neighbour matches the query better moves part of
the way up to it (search/fusion.py `session_lift`), and a conversation result brings the
turns around it as `context` (search/hybrid.py).

A session is the run of conversation memories of one folder (the same scope, owner and
project, so the same readers) in the order they were said — by `created`, then id, which
rises within a write — where each turn follows the one before within `SESSION_GAP`. An
agent that writes each turn as it happens gets turns seconds apart; one that writes a past
conversation with the session's date as every turn's time (LoCoMo) gets turns at the same
second; either way the next conversation, hours or days later, is another session.
Derived from the state db at query time: nothing is stored in the notes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from vaultmem.clock import note_time
from vaultmem.index.statedb import NoteRecord, StateDB
from vaultmem.vault.dates import parse_iso

SESSION_GAP = timedelta(minutes=30)
_SLACK = timedelta(days=1)  # more than any zone's offset from UTC (at most 14 hours)
CONVERSATION = "conversation"


@dataclass(frozen=True, slots=True)
class Said:
    """One turn of a folder's conversation memories, in the order they were said."""

    path: str
    at: datetime


def around(turns: Sequence[Said], path: str, reach: int, gap: timedelta = SESSION_GAP) -> tuple[list[str], list[str]]:
    """The turns of `path`'s session said before it (nearest first) and after it, at most
    `reach` each side. `turns` is in the order said; a step longer than `gap` between two
    turns ends the session there. Pure."""
    where = next((i for i, t in enumerate(turns) if t.path == path), None)
    if where is None or reach <= 0:
        return [], []
    before: list[str] = []
    i = where
    while i > 0 and len(before) < reach and turns[i].at - turns[i - 1].at <= gap:
        i -= 1
        before.append(turns[i].path)
    after: list[str] = []
    i = where
    while i + 1 < len(turns) and len(after) < reach and turns[i + 1].at - turns[i].at <= gap:
        i += 1
        after.append(turns[i].path)
    return before, after


def said_at(created: str | None) -> datetime | None:
    return parse_iso(created) if created else None


TurnsQuery = Callable[[str | None, str | None, str | None, str, str], list[tuple[str, str, str]]]


class Sessions:
    """Session neighbours of conversation memories for one search: one state db query per
    folder and stretch of time, shared by every turn it covers."""

    def __init__(self, turns: TurnsQuery, gap: timedelta = SESSION_GAP) -> None:
        self._turns = turns
        self._gap = gap
        self._windows: dict[tuple[str | None, str | None, str | None, str, str], list[Said]] = {}

    @classmethod
    def of(cls, db: StateDB) -> Sessions:
        return cls(db.conversation_turns)

    def around(self, rec: NoteRecord, reach: int = 1) -> tuple[list[str], list[str]]:
        """(before, after) of a conversation memory (module docstring); ([], []) for any
        other note, or one without a readable time."""
        at = said_at(rec.created) if rec.type == CONVERSATION else None
        if at is None or reach <= 0:
            return [], []
        span = self._gap * reach
        try:
            start, end = at - span, at + span
            # `created` is compared as text in the state db, and it is written in more than
            # one form (Obsidian's `…T10:00:00`, older vaults' `…Z`, offsets up to 14 hours):
            # a day's slack either side holds every form of the moments wanted, and the
            # turns are then kept and ordered by the time they name.
            key = (rec.scope, rec.owner, rec.project, note_time(start - _SLACK), note_time(end + _SLACK))
        except OverflowError:  # a time at the very edge of the calendar
            return [], []
        turns = self._windows.get(key)
        if turns is None:
            found: list[tuple[datetime, str, str]] = []
            for path, note_id, created in self._turns(*key):
                moment = said_at(created)
                if moment is not None and start <= moment <= end:
                    found.append((moment, note_id, path))
            found.sort()
            turns = [Said(path, moment) for moment, _id, path in found]
            self._windows[key] = turns
        return around(turns, rec.path, reach, self._gap)
