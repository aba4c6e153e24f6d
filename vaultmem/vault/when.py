"""Dates as people type them on a command line: ISO-8601 (`2026-11-21`,
`2026-11-21T10:00:00Z`) or relative to now (`30m`, `2h`, `3d`, `2w`, `today`,
`yesterday`). Pure: `now` is an argument.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from vaultmem.errors import InvalidInput
from vaultmem.vault.dates import parse_iso

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}\Z")
_AGO = re.compile(r"^(\d{1,6})\s*(s|sec|secs|m|min|mins|h|hr|hrs|d|day|days|w|wk|wks|week|weeks)(?:\s+ago)?\Z")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _unit_seconds(unit: str) -> int:
    if unit.startswith("min") or unit == "m":
        return _UNITS["m"]
    if unit.startswith("wk") or unit.startswith("week") or unit == "w":
        return _UNITS["w"]
    return _UNITS[unit[0]]


def parse_when(value: str | None, name: str, now: datetime, end_of_day: bool = False) -> datetime | None:
    """The moment `value` names, or None for no value. A relative amount counts back from
    `now`; `today` and `yesterday` are that UTC day, its start (or with `end_of_day`, its last
    second, as a bare ISO date is: `--until 2026-11-21` includes the whole day)."""
    if value is None or not value.strip():
        return None
    text = value.strip().lower()
    day_start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    named = {"now": None, "today": day_start, "yesterday": day_start - timedelta(days=1)}
    if text in named:
        start = named[text]
        if start is None:
            return now
        return start + timedelta(days=1, seconds=-1) if end_of_day else start
    match = _AGO.match(text)
    if match:
        return now - timedelta(seconds=int(match.group(1)) * _unit_seconds(match.group(2)))
    moment = parse_iso(value)
    if moment is None:
        raise InvalidInput(
            f"--{name} must be a date like 2026-11-21, 2026-11-21T10:00:00Z, 2h, 3d, 1w, today or yesterday, "
            f"not {value!r}"
        )
    if end_of_day and _DATE_ONLY.match(value.strip()):
        moment = moment + timedelta(days=1) - timedelta(seconds=1)
    return moment


def when_epoch(value: str | None, name: str, now: datetime, end_of_day: bool = False) -> int | None:
    """`parse_when` in seconds since the epoch."""
    moment = parse_when(value, name, now, end_of_day)
    return None if moment is None else int(moment.timestamp())
