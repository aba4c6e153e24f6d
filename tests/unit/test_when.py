"""Dates as typed on a command line (vault/when.py) and parts of a body (vault/sections.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from vaultmem.errors import InvalidInput, NotFound
from vaultmem.vault.sections import lines_of, parse_line_range, section_of
from vaultmem.vault.when import parse_when

NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "end_of_day", "expected"),
    [
        ("2h", False, "2026-11-21T13:30:00"),
        ("3d", False, "2026-11-18T15:30:00"),
        ("3 days ago", False, "2026-11-18T15:30:00"),
        ("1w", False, "2026-11-14T15:30:00"),
        ("45m", False, "2026-11-21T14:45:00"),
        ("today", False, "2026-11-21T00:00:00"),
        ("yesterday", False, "2026-11-20T00:00:00"),
        ("Yesterday", True, "2026-11-20T23:59:59"),
        ("now", False, "2026-11-21T15:30:00"),
        ("2026-11-01", False, "2026-11-01T00:00:00"),
        ("2026-11-01", True, "2026-11-01T23:59:59"),
        ("2026-11-01T10:00:00Z", True, "2026-11-01T10:00:00"),
        ("2026-11-01T12:00:00+02:00", False, "2026-11-01T10:00:00"),
    ],
)
def test_parse_when(text: str, end_of_day: bool, expected: str) -> None:
    moment = parse_when(text, "since", NOW, end_of_day)
    assert moment is not None and moment.strftime("%Y-%m-%dT%H:%M:%S") == expected


@pytest.mark.parametrize("text", ["soon", "3x", "-2d", "2026-02-30"])
def test_parse_when_refuses(text: str) -> None:
    with pytest.raises(InvalidInput, match="--since must be a date"):
        parse_when(text, "since", NOW)


def test_parse_when_nothing() -> None:
    assert parse_when(None, "since", NOW) is None and parse_when("  ", "since", NOW) is None


BODY = "intro\n# A\n\ntext a\n```\n# not a heading\n```\n## A.1\n\nsub\n# B\n\ntext b\n"


def test_section_runs_to_the_next_heading_of_its_level_outside_code() -> None:
    assert section_of(BODY, "a") == ("# A\n\ntext a\n```\n# not a heading\n```\n## A.1\n\nsub\n", 2)
    assert section_of(BODY, "## A.1")[0] == "## A.1\n\nsub\n"
    assert section_of(BODY, "B") == ("# B\n\ntext b\n", 11)
    with pytest.raises(NotFound, match=r"'A', 'A\.1', 'B'"):
        section_of(BODY, "not a heading")


@pytest.mark.parametrize(
    ("spec", "expected"), [("2:3", ("# A\n\n", 2, 3)), ("13:", ("text b\n", 13, 13)), (":1", ("intro\n", 1, 1))]
)
def test_lines_of(spec: str, expected: tuple[str, int, int]) -> None:
    assert lines_of(BODY, spec)[:3] == expected
    assert lines_of(BODY, spec)[3] == 13


@pytest.mark.parametrize("spec", ["0:2", "3:2", "a:b", ""])
def test_bad_line_ranges(spec: str) -> None:
    with pytest.raises(InvalidInput):
        parse_line_range(spec)
