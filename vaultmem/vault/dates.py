"""ISO-8601 dates as users and tools write them, normalized to UTC. Pure.

vaultmem writes note times in Obsidian's Date & time form, `2026-11-21T10:00:00` (no zone;
UTC by the vault's convention); older vaults hold `2026-11-21T10:00:00Z`, and people and
tools write offsets or bare dates. They name the same moments, so whatever compares or
sorts times of notes compares what `parse_iso` makes of them, never their text."""

from __future__ import annotations

from datetime import UTC, date, datetime

from vaultmem import clock

FAR_FUTURE = 253402300799  # 9999-12-31T23:59:59Z: "never expires"


def parse_iso(value: object) -> datetime | None:
    """A UTC datetime from `2026-11-21`, `2026-11-21T10:00:00` (no zone: UTC),
    `2026-11-21T10:00:00Z`, offsets, or None."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str) and value.strip():
        text = value.strip().replace(" ", "T", 1)
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def to_epoch(value: object, default: int | None = None) -> int | None:
    moment = parse_iso(value)
    return int(moment.timestamp()) if moment is not None else default


iso_utc = clock.iso


def epoch_to_iso(seconds: float) -> str:
    return iso_utc(datetime.fromtimestamp(seconds, UTC))


def note_time_of(value: object) -> str | None:
    """`value` as vaultmem writes a note time (`clock.note_time`), or None if it is none."""
    moment = parse_iso(value)
    return clock.note_time(moment) if moment is not None else None


def same_moment(a: object, b: object) -> bool:
    """Whether two note times name the same moment, whatever their form."""
    x, y = parse_iso(a), parse_iso(b)
    return x == y if x is not None and y is not None else a == b


def later(a: object, b: object) -> object:
    """The later of two note times, as written (an unreadable or missing one loses; both
    unreadable: `a`, else `b`)."""
    x, y = parse_iso(a), parse_iso(b)
    if x is None and y is None:
        return a if a is not None else b
    if y is None or (x is not None and x >= y):
        return a
    return b
