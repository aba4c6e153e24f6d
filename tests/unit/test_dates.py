"""Note times (vault/dates.py, clock.note_time): vaultmem writes Obsidian's Date & time form
and reads every form older vaults, people and tools write, comparing moments, not text."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from vaultmem import clock
from vaultmem.vault.dates import later, note_time_of, parse_iso, same_moment

# Obsidian Help, "Properties": a Date & time property is stored as `2020-08-21T10:30:00`.
OBSIDIAN_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
MOMENT = datetime(2026, 11, 24, 10, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "moment",
    [
        MOMENT,
        datetime(2026, 11, 24, 12, 30, tzinfo=UTC).astimezone(),
        datetime(1999, 1, 2, 3, 4, 5, 999999, tzinfo=UTC),
    ],
)
def test_note_time_is_obsidians_form_in_utc(moment: datetime) -> None:
    text = clock.note_time(moment)
    assert OBSIDIAN_DATETIME.match(text)
    assert parse_iso(text) == moment.astimezone(UTC).replace(microsecond=0)


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("2026-11-24T10:30:00", MOMENT),  # Obsidian's form: UTC by the vault's convention
        ("2026-11-24T10:30:00Z", MOMENT),  # older vaults
        ("2026-11-24T12:30:00+02:00", MOMENT),
        ("2026-11-24T05:30:00-05:00", MOMENT),
        ("2026-11-24 10:30:00", MOMENT),
        ("2026-11-24T10:30", MOMENT),
        ("2026-11-24", datetime(2026, 11, 24, tzinfo=UTC)),  # Obsidian's Date property
        ("not a date", None),
        ("", None),
        (None, None),
        (20261124, None),
    ],
)
def test_parse_iso_reads_every_form(text: object, wanted: datetime | None) -> None:
    assert parse_iso(text) == wanted
    assert note_time_of(text) == (None if wanted is None else clock.note_time(wanted))


@pytest.mark.parametrize(
    ("a", "b", "same", "latest"),
    [
        ("2026-11-24T10:30:00", "2026-11-24T10:30:00Z", True, "2026-11-24T10:30:00"),
        ("2026-11-24T10:30:00Z", "2026-11-24T12:30:00+02:00", True, "2026-11-24T10:30:00Z"),
        # as text the offset form sorts later; as a time it is earlier
        ("2026-11-24T10:30:00", "2026-11-24T11:00:00+02:00", False, "2026-11-24T10:30:00"),
        # as text `…Z` sorts after the same second without a zone: not a later time
        ("2026-11-24T10:30:01", "2026-11-24T10:30:00Z", False, "2026-11-24T10:30:01"),
        ("2026-11-24", "2026-11-23T23:59:59", False, "2026-11-24"),
        (None, "2026-11-24T10:30:00", False, "2026-11-24T10:30:00"),
        ("garbage", "2026-11-24T10:30:00", False, "2026-11-24T10:30:00"),
        (None, None, True, None),
    ],
)
def test_times_compare_as_moments(a: object, b: object, same: bool, latest: object) -> None:
    assert same_moment(a, b) is same and same_moment(b, a) is same
    assert later(a, b) == latest
    if not same:
        assert later(b, a) == latest


def test_written_times_sort_as_dates_in_text_too() -> None:
    """Obsidian sorts Date & time values by their text: zero-padded and zone-free, the text
    order of what vaultmem writes is the time order."""
    moments = [datetime(2026, m, d, h, tzinfo=UTC) for m, d, h in [(1, 9, 23), (11, 2, 0), (2, 10, 5), (10, 1, 9)]]
    texts = [clock.note_time(m) for m in moments]
    assert sorted(texts) == [clock.note_time(m) for m in sorted(moments)]
