"""Issue 11, acceptance 4: `write` keeps a memory's event time (`source.timestamp`, seed 001)
as the note's `created`, TTL counts from it, and `context` stays searchable metadata."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.cli._util import front_matter
from tests.conftest import Cli
from vaultmem import clock

NOW = datetime(2025, 11, 20, 12, 0, 0, tzinfo=UTC)
EVENT = "2025-11-05T10:30:00Z"
STORED = "2025-11-05T10:30:00"  # as notes hold it: Obsidian's Date & time form, UTC
EVENT_EPOCH = int(datetime(2025, 11, 5, 10, 30, tzinfo=UTC).timestamp())


@pytest.fixture(autouse=True)
def fixed_clock() -> Iterator[None]:
    clock.fix(NOW.timestamp())
    try:
        yield
    finally:
        clock.fix(None)


def _write(cli: Cli, items: Any) -> Any:
    return cli.ok("write", "-", ghost="alice", input=json.dumps(items))


def _turn(content: str, timestamp: Any, **more: Any) -> dict[str, Any]:
    return {"type": "conversation", "content": content, "role": "user", "source": {"timestamp": timestamp}, **more}


def _fm(vault: Path, data: Any, index: int) -> dict[str, Any]:
    path = next(w["path"] for w in data["written"] if w["index"] == index)
    return front_matter(vault / path)


ACCEPTED = [
    (EVENT, STORED),
    ("2025-11-05T12:30:00+02:00", STORED),
    ("2025-11-05T05:30:00-05:00", STORED),
    ("2025-11-05T10:30:00.789Z", STORED),
    ("2025-11-05T10:30:00", STORED),  # no zone: UTC
    ("2025-11-05", "2025-11-05T00:00:00"),
    (EVENT_EPOCH, STORED),  # epoch seconds
    (EVENT_EPOCH * 1000 + 250, STORED),  # epoch milliseconds
    (float(EVENT_EPOCH) + 0.5, STORED),
]


def test_event_time_becomes_created_and_updated(vault: Path, cli: Cli) -> None:
    items = [_turn(f"turn number {i}", ts) for i, (ts, _) in enumerate(ACCEPTED)]
    items.append({"type": "episodic", "content": "top-level timestamp", "timestamp": EVENT})
    items.append({"type": "semantic", "content": "no timestamp at all", "source": {"tool": "t"}})
    items.append(_turn("blank timestamp", ""))
    data = _write(cli, items)
    assert data["rejected"] == [] and len(data["written"]) == len(items)
    for i, (_, want) in enumerate(ACCEPTED):
        fm = _fm(vault, data, i)
        assert (fm["created"], fm["updated"]) == (want, want), ACCEPTED[i]
        assert fm["role"] == "user" and fm["type"] == "conversation"
    assert _fm(vault, data, len(ACCEPTED))["created"] == STORED
    now = clock.note_time(NOW)
    for i in (len(ACCEPTED) + 1, len(ACCEPTED) + 2):
        fm = _fm(vault, data, i)
        assert (fm["created"], fm["updated"]) == (now, now)
    # what get and search report is the event time too
    got = cli.ok("get", data["written"][0]["id"], ghost="alice")["note"]
    assert got["created"] == STORED


@pytest.mark.parametrize(
    ("timestamp", "reason"),
    [
        ("yesterday", "ISO-8601"),
        ("2025-13-01T00:00:00Z", "ISO-8601"),
        ("2025-11-05T10:30:00+25:00", "ISO-8601"),
        (True, "ISO-8601"),
        ({"at": EVENT}, "ISO-8601"),
        ([EVENT], "ISO-8601"),
        (1e300, "ISO-8601"),
        (0, "1970"),
        (-5, "1970"),
        ("1969-07-20T20:17:00Z", "1970"),
        ("2025-11-20T12:11:00Z", "future"),  # 11 minutes ahead of now
        ("2999-01-01T00:00:00Z", "future"),
        (int(NOW.timestamp() + 3600) * 1000, "future"),
    ],
)
def test_invalid_event_time_rejects_only_that_item(vault: Path, cli: Cli, timestamp: Any, reason: str) -> None:
    data = _write(cli, [_turn("before", EVENT), _turn("the bad one", timestamp), _turn("after", EVENT)])
    assert [w["index"] for w in data["written"]] == [0, 2]
    [rejected] = data["rejected"]
    assert rejected["index"] == 1
    assert "timestamp" in rejected["reason"] and reason in rejected["reason"], rejected["reason"]


def test_small_clock_skew_is_stored_as_now(vault: Path, cli: Cli) -> None:
    data = _write(cli, [_turn("from a fast clock", "2025-11-20T12:04:00Z")])
    assert data["rejected"] == []
    assert _fm(vault, data, 0)["created"] == "2025-11-20T12:00:00"


def test_ttl_counts_from_the_event_time(vault: Path, cli: Cli) -> None:
    items = [
        {"type": "episodic", "content": "Paris weather lookup", "ttl_days": 30, "source": {"timestamp": EVENT}},
        {"type": "episodic", "content": "Lyon weather lookup", "ttl_days": 7, "source": {"timestamp": EVENT}},
        {"type": "episodic", "content": "Nice weather lookup", "ttl_days": 30},
    ]
    data = _write(cli, items)
    assert len(data["written"]) == 3
    assert _fm(vault, data, 0)["expires"] == "2025-12-05T10:30:00"
    assert _fm(vault, data, 1)["expires"] == "2025-11-12T10:30:00"  # already past: written, expired
    assert _fm(vault, data, 2)["expires"] == "2025-12-20T12:00:00"  # no event time: from now
    [warning] = data["warnings"]
    assert warning.startswith("write 1: expired at 2025-11-12T10:30:00Z") and "--include-expired" in warning

    def found(*args: str) -> set[str]:
        res = cli.ok("search", "weather lookup", "--mode", "bm25", *args, ghost="alice")
        return {r["summary"]["path"] for r in res["results"]}

    def queried(*args: str) -> set[str]:
        return {m["path"] for m in cli.ok("query", "weather lookup", *args, ghost="alice")["matches"]}

    paths = {w["index"]: w["path"] for w in data["written"]}
    assert found() == queried() == {paths[0], paths[2]}
    assert found("--include-expired") == queried("--include-expired") == set(paths.values())
    clock.fix(datetime(2025, 12, 6, tzinfo=UTC).timestamp())  # a day after the first one's TTL ran out
    assert found() == queried() == {paths[2]}


def test_duplicates_with_event_times(vault: Path, cli: Cli) -> None:
    items = [
        _turn("Thanks!", "2025-11-05T10:00:00Z"),
        _turn("Thanks!", "2025-11-05T11:00:00Z"),  # said again later: another turn
        _turn("Thanks!", "2025-11-05T10:00:00Z"),  # the same turn twice in one batch
        {"type": "semantic", "content": "Lyon is in France", "source": {"timestamp": "2025-11-01T00:00:00Z"}},
        {"type": "semantic", "content": "Lyon is in France", "source": {"timestamp": "2025-11-02T00:00:00Z"}},
    ]
    first = _write(cli, items)
    assert [w["index"] for w in first["written"]] == [0, 1, 3]
    assert [(d["index"], d["path"]) for d in first["duplicates"]] == [
        (2, first["written"][0]["path"]),
        (4, first["written"][2]["path"]),  # a fact is timeless: seen again later, still one note
    ]
    again = _write(cli, items)
    assert again["written"] == [] and sorted(d["index"] for d in again["duplicates"]) == [0, 1, 2, 3, 4]
    later = _write(cli, [_turn("Thanks!", "2025-11-06T09:00:00Z")])
    assert len(later["written"]) == 1


def test_a_turn_an_older_vault_holds_with_a_zone_is_a_duplicate(vault: Path, cli: Cli) -> None:
    """The same turn written before vaultmem wrote Obsidian's form (`created: …Z`) is the
    same moment: seen again, it is a duplicate, not a second note."""
    first = _write(cli, [_turn("See you Sunday", "2025-11-05T10:00:00Z")])
    path = vault / first["written"][0]["path"]
    text = path.read_text(encoding="utf-8")
    assert "created: 2025-11-05T10:00:00\n" in text
    path.write_text(text.replace("created: 2025-11-05T10:00:00\n", "created: 2025-11-05T10:00:00Z\n"), encoding="utf-8")
    again = _write(cli, [_turn("See you Sunday", "2025-11-05T12:00:00+02:00")])
    assert again["written"] == [] and [d["path"] for d in again["duplicates"]] == [first["written"][0]["path"]]


def test_context_is_searchable_metadata(vault: Path, cli: Cli) -> None:
    context = {"goal_id": "answer_weather_query", "user_id": "user_123", "channel": "mobile app", "attempt": 2}
    data = _write(
        cli,
        [
            {"type": "episodic", "content": "Called weather_api for Paris", "context": context},
            {"type": "episodic", "content": "Called weather_api for Rome", "context": {"user_id": "user_456"}},
            {"type": "episodic", "content": "Called weather_api for Oslo", "context": "not an object"},
        ],
    )
    assert len(data["written"]) == 3
    assert data["warnings"] == ["write 2: context is not an object; ignored"]
    fm = _fm(vault, data, 0)
    assert fm["context"] == [
        "goal_id: answer_weather_query",
        "user_id: user_123",
        "channel: mobile app",
        "attempt: 2",
    ]
    assert "context" not in _fm(vault, data, 2)
    res = cli.ok("search", "user_123", "--mode", "bm25", ghost="alice")
    assert [r["summary"]["path"] for r in res["results"]] == [data["written"][0]["path"]]
    res = cli.ok("search", "answer_weather_query", "--mode", "bm25", ghost="alice")
    assert [r["summary"]["path"] for r in res["results"]] == [data["written"][0]["path"]]
