"""ISO-8601 dates as users and tools write them, normalized to UTC. Pure."""

from __future__ import annotations

from datetime import UTC, date, datetime

from vaultmem import clock

FAR_FUTURE = 253402300799  # 9999-12-31T23:59:59Z: "never expires"


def parse_iso(value: object) -> datetime | None:
    """A UTC datetime from `2026-11-21`, `2026-11-21T10:00:00Z`, offsets, or None."""
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
