"""Acceptance 9: `write -` ingests a seed-001 `memory_writes` array."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.cli._util import body_of, front_matter, snapshot
from tests.conftest import Cli

WRITES: list[dict[str, Any]] = [
    {
        "type": "episodic",
        "content": "Called weather_api for Paris, received 15°C forecast",
        "tags": ["weather", "paris", "api_call"],
        "confidence": 0.99,
        "ttl_days": 30,
        "source": {"tool": "weather_api", "turn_id": "turn_20251105_001", "timestamp": "2025-11-05T10:30:00Z"},
        "context": {"goal_id": "answer_weather_query", "user_id": "user_123"},
    },
    {
        "type": "semantic",
        "content": "Weather API provides accurate forecasts for European cities",
        "tags": ["weather_api"],
        "confidence": 1.5,
    },
    {"type": "conversation", "content": "User asked about weather", "role": "user", "confidence": 1.0},
    {"type": "bogus", "content": "x"},
    {"type": "semantic", "content": ""},
    "not an object",
    {"type": "semantic", "content": "tags wrong", "tags": "weather"},
]


def _ts(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S")  # as notes hold times (UTC, no zone)


def _write(cli: Cli, items: Any, *args: str, ghost: str | None = "alice") -> Any:
    res = cli("write", "-", *args, ghost=ghost, input=json.dumps(items))
    assert res.exit_code == 0, res.stdout + res.stderr
    return res


def test_write_routes_each_memory_type(vault: Path, cli: Cli) -> None:
    res = _write(cli, WRITES)
    data = res.data
    assert set(data) >= {"written", "duplicates", "rejected"}
    written = {w["index"]: w for w in data["written"]}
    assert sorted(written) == [0, 1, 2]
    assert data["duplicates"] == []

    episodic = vault / written[0]["path"]
    assert written[0]["path"].startswith("diary/alice/")
    fm = front_matter(episodic)
    assert (fm["type"], fm["scope"], fm["owner"], fm["confidence"]) == ("episode", "diary", "alice", 0.99)
    assert fm["tags"] == ["weather", "paris", "api_call"]
    assert _ts(fm["expires"]) - _ts(fm["created"]) == timedelta(days=30)
    assert "weather_api" in fm["source"]
    assert fm["id"] == written[0]["id"]
    assert body_of(episodic) == "Called weather_api for Paris, received 15°C forecast\n"

    semantic = front_matter(vault / written[1]["path"])
    assert written[1]["path"].startswith("private/alice/")
    assert (semantic["type"], semantic["scope"], semantic["confidence"]) == ("fact", "private", 1.0)
    assert "expires" not in semantic

    convo = front_matter(vault / written[2]["path"])
    assert written[2]["path"].startswith("diary/alice/")
    assert (convo["type"], convo["role"]) == ("conversation", "user")

    # confidence 1.5 -> 1.0, with a warning on stderr and in the document
    assert any("1.5" in w and "1.0" in w for w in data["warnings"])
    assert "1.5" in res.stderr

    rejected = {r["index"]: r["reason"] for r in data["rejected"]}
    assert sorted(rejected) == [3, 4, 5, 6]
    assert all(reason for reason in rejected.values())
    assert "bogus" in rejected[3] and "content" in rejected[4] and "tags" in rejected[6]

    for w in data["written"]:
        assert cli.ok("get", w["id"], ghost="alice")["note"]["path"] == w["path"]
        assert cli("get", w["id"], ghost="bob").exit_code == 3


def test_same_write_again_is_a_duplicate(vault: Path, cli: Cli) -> None:
    first = _write(cli, WRITES).data
    files = snapshot(vault, skip=vault / ".vaultmem")
    again = _write(cli, WRITES).data
    assert again["written"] == []
    assert sorted(d["index"] for d in again["duplicates"]) == [0, 1, 2]
    by_index = {w["index"]: w["path"] for w in first["written"]}
    assert all(d["path"] == by_index[d["index"]] for d in again["duplicates"])
    assert snapshot(vault, skip=vault / ".vaultmem") == files  # no new file


def test_duplicates_within_one_batch(vault: Path, cli: Cli) -> None:
    item = {"type": "semantic", "content": "Only once"}
    data = _write(cli, [item, item, dict(item, tags=["x"])]).data
    assert [w["index"] for w in data["written"]] == [0]
    assert [d["index"] for d in data["duplicates"]] == [1, 2]


def test_another_ghosts_identical_write_is_not_a_duplicate(vault: Path, cli: Cli) -> None:
    item = [{"type": "semantic", "content": "Same words"}]
    a = _write(cli, item, ghost="alice").data["written"]
    b = _write(cli, item, ghost="bob").data["written"]
    assert a[0]["path"].startswith("private/alice/") and b[0]["path"].startswith("private/bob/")


def test_semantic_to_shared(vault: Path, cli: Cli) -> None:
    items = [
        {"type": "semantic", "content": "Shared fact one"},
        {"type": "semantic", "content": "Shared fact one, but longer"},
        {"type": "episodic", "content": "still my diary"},
    ]
    data = _write(cli, items, "--scope", "shared").data
    paths = [w["path"] for w in data["written"]]
    assert paths[0].startswith("shared/") and paths[1].startswith("shared/") and paths[2].startswith("diary/alice/")
    assert front_matter(vault / paths[0])["scope"] == "shared"
    assert cli.ok("get", data["written"][0]["id"], ghost="bob")["body"] == "Shared fact one\n"
    # the same shared fact from another ghost is a duplicate, not a second note
    again = _write(cli, items[:1], "--scope", "shared", ghost="bob").data
    assert [d["index"] for d in again["duplicates"]] == [0]


def test_shared_titles_stay_unique(vault: Path, cli: Cli) -> None:
    items = [{"type": "semantic", "content": f"Common opening\nvariant {i}"} for i in range(3)]
    data = _write(cli, items, "--scope", "shared").data
    titles = [front_matter(vault / w["path"])["title"] for w in data["written"]]
    assert len({t.lower() for t in titles}) == 3


def test_shared_titles_stay_unique_in_either_unicode_form(vault: Path, cli: Cli) -> None:
    """A reviewer's find: one batch wrote `Pâté en croûte` (NFC) and the same words in NFD
    as two notes of one title (lint: duplicate_title); titles compare by name_key now."""
    nfc = "P\u00e2t\u00e9 en cro\u00fbte"
    nfd = "Pa\u0302te\u0301 en crou\u0302te"
    items = [
        {"type": "semantic", "content": f"{nfc}\n\nfirst fact"},
        {"type": "semantic", "content": f"{nfd}\n\nsecond"},
    ]
    data = _write(cli, items, "--scope", "shared").data
    assert len(data["written"]) == 2
    assert not [p for p in cli.ok("lint")["problems"] if p["code"] == "duplicate_title"]


def test_tool_response_object_and_file_argument(vault: Path, cli: Cli, tmp_path: Path) -> None:
    response = {
        "request_id": "r1",
        "status": "ok",
        "memory_writes": [{"type": "semantic", "content": "From a response"}],
    }
    src = tmp_path / "resp.json"
    src.write_text("\ufeff" + json.dumps(response), encoding="utf-8")  # with a BOM, as Windows tools write
    data = cli.ok("write", str(src), ghost="alice")
    assert len(data["written"]) == 1


def test_ttl_and_confidence_edge_cases(vault: Path, cli: Cli) -> None:
    items = [
        {"type": "episodic", "content": "negative confidence", "confidence": -3},
        {"type": "episodic", "content": "bad ttl", "ttl_days": "soon"},
        {"type": "episodic", "content": "string confidence", "confidence": "high"},
    ]
    data = _write(cli, items).data
    written = {w["index"]: w for w in data["written"]}
    assert front_matter(vault / written[0]["path"])["confidence"] == 0.0
    assert "expires" not in front_matter(vault / written[1]["path"])
    assert [r["index"] for r in data["rejected"]] == [2]
    assert len(data["warnings"]) == 2


def test_private_memories_without_ghost_are_rejected(vault: Path, cli: Cli) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    res = cli("write", "-", ghost=None, input=json.dumps(WRITES[:3]))
    data = res.data
    assert res.exit_code == 5 and data["written"] == []  # nothing written: invalid input (issue 26)
    assert sorted(r["index"] for r in data["rejected"]) == [0, 1, 2]
    assert snapshot(vault, skip=vault / ".vaultmem") == before


@pytest.mark.parametrize("payload", ["not json", '{"no": "writes"}', "42", ""])
def test_unusable_input_exits_5(vault: Path, cli: Cli, payload: str) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    res = cli("write", "-", ghost="alice", input=payload)
    assert res.exit_code == 5
    assert res.data["error"]["code"] == "invalid_input"
    assert snapshot(vault, skip=vault / ".vaultmem") == before


def test_bad_scope_exits_5(cli: Cli) -> None:
    assert cli("write", "-", "--scope", "project", ghost="alice", input="[]").exit_code == 5


def test_nothing_written_exits_5_with_the_reasons(vault: Path, cli: Cli) -> None:
    """Issue 26: every item refused is invalid input (exit 5), the reasons still listed; one
    item written (or a duplicate) is a success."""
    bad = [{"type": "bogus", "content": "x"}, {"type": "semantic", "content": ""}]
    res = cli("write", "-", ghost="alice", input=json.dumps(bad))
    assert res.exit_code == 5 and [r["index"] for r in res.data["rejected"]] == [0, 1]
    assert res.data["written"] == [] and all(r["reason"] for r in res.data["rejected"])
    good = [*bad, {"type": "semantic", "content": "Kites fly."}]
    assert cli("write", "-", ghost="alice", input=json.dumps(good)).exit_code == 0
    assert cli("write", "-", ghost="alice", input=json.dumps(good[2:])).exit_code == 0  # a duplicate: fine
    assert cli("write", "-", ghost="alice", input="[]").exit_code == 0  # nothing asked, nothing refused


def test_nothing_written_is_said_as_an_error(cli: Cli) -> None:
    """SPEC §6: an error is `{"error": {"code", "message"}}` with --json and `vaultmem: error:`
    on stderr without; exit 5 with every item rejected said neither (the lists stay)."""
    bad = json.dumps([{"type": "bogus", "content": "x"}, {"type": "semantic", "content": ""}])
    res = cli("write", "-", ghost="alice", input=bad)
    assert res.exit_code == 5 and len(res.data["rejected"]) == 2 and res.data["written"] == []
    assert res.data["error"]["code"] == "invalid_input" and "rejected" in res.data["error"]["message"]
    assert "vaultmem: error" not in res.stderr
    human = cli("write", "-", ghost="alice", input=bad, json_=False)
    assert human.exit_code == 5 and human.stdout.count("rejected") == 2
    assert human.stderr.startswith("vaultmem: error: every memory write was rejected (2)")
    assert "error" not in cli.ok(
        "write", "-", ghost="alice", input=json.dumps([{"type": "semantic", "content": "Ok."}])
    )
