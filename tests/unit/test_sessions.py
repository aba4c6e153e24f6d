"""Conversation turns read in their sessions (search/sessions.py, fusion.session_lift): which
turns are a turn's neighbours, and how far a neighbour's relevance lifts it. Pure."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from vaultmem.index.statedb import NoteRecord
from vaultmem.search.fusion import Fused, session_lift, sigmoid
from vaultmem.search.sessions import SESSION_GAP, Said, Sessions, around

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def turns(*minutes: float) -> list[Said]:
    return [Said(f"t{i}", T0 + timedelta(minutes=m)) for i, m in enumerate(minutes)]


@pytest.mark.parametrize(
    ("said", "path", "reach", "expected"),
    [
        # a past conversation written with the session's date on every turn
        ((0, 0, 0, 0), "t1", 1, (["t0"], ["t2"])),
        ((0, 0, 0, 0), "t0", 1, ([], ["t1"])),
        ((0, 0, 0, 0), "t3", 1, (["t2"], [])),
        ((0, 0, 0, 0), "t1", 2, (["t0"], ["t2", "t3"])),
        # turns written as they happen, a minute apart
        ((0, 1, 2, 3), "t2", 2, (["t1", "t0"], ["t3"])),
        # a long pause ends a session: the next conversation is another one
        ((0, 1, 2 + 24 * 60, 3 + 24 * 60), "t1", 1, (["t0"], [])),
        ((0, 1, 2 + 24 * 60, 3 + 24 * 60), "t2", 1, ([], ["t3"])),
        # a chain: each step within the gap, however long the whole
        ((0, 29, 58, 87), "t0", 3, ([], ["t1", "t2", "t3"])),
        ((0, 0, 0), "t1", 0, ([], [])),
        ((0, 0, 0), "elsewhere", 1, ([], [])),
    ],
    ids=[
        "same-second",
        "first",
        "last",
        "reach-2",
        "minute-apart",
        "pause-before",
        "pause-after",
        "chain",
        "reach-0",
        "not-a-turn",
    ],
)
def test_around(said: tuple[float, ...], path: str, reach: int, expected: tuple[list[str], list[str]]) -> None:
    assert around(turns(*said), path, reach) == expected


def test_the_gap_is_inclusive() -> None:
    gap = SESSION_GAP.total_seconds() / 60
    assert around(turns(0, gap), "t0", 1) == ([], ["t1"])
    assert around(turns(0, gap + 1), "t0", 1) == ([], [])


def rec(path: str, created: str | None, note_type: str = "conversation") -> NoteRecord:
    return NoteRecord(
        path=path, size=0, mtime_ns=0, hash="", status="note", id=path, type=note_type, scope="diary",
        owner="eval", created=created,
    )  # fmt: skip


def test_sessions_ask_the_db_once_per_folder_and_stretch() -> None:
    asked = []
    rows = [("a", "a", "2023-05-08T13:56:00Z"), ("b", "b", "2023-05-08T13:56:00Z"), ("c", "c", "2023-05-08T13:56:00Z")]

    def query(*key: object) -> list[tuple[str, str, str]]:
        asked.append(key)
        return rows

    sessions = Sessions(query)
    assert sessions.around(rec("b", "2023-05-08T13:56:00Z")) == (["a"], ["c"])
    assert sessions.around(rec("a", "2023-05-08T13:56:00Z")) == ([], ["b"])
    # the db compares `created` as text: a day's slack each side covers every form of the
    # wanted moments; the turns are then kept by the time they name
    assert asked == [("diary", "eval", None, "2023-05-07T13:26:00", "2023-05-09T14:26:00")]
    # only conversation memories with a time have sessions
    assert sessions.around(rec("x", "2023-05-08T13:56:00Z", "fact")) == ([], [])
    assert sessions.around(rec("y", None)) == ([], [])
    assert sessions.around(rec("z", "not a date")) == ([], [])
    assert len(asked) == 1


def test_sessions_order_and_keep_turns_by_time_whatever_the_form() -> None:
    """Obsidian's form (no zone: UTC), an older vault's `Z`, an offset: ordered by the moment
    they name, not their text; a turn the db's slack let in but outside the window is out."""
    rows = [
        ("late", "1", "2023-05-08T14:10:00Z"),  # 14:10 UTC
        ("early", "2", "2023-05-08T15:40:00+02:00"),  # 13:40 UTC, sorts last as text
        ("mid", "3", "2023-05-08T13:56:00"),  # 13:56 UTC
        ("far", "4", "2023-05-08T20:00:00"),  # inside the slack, outside the window
    ]
    sessions = Sessions(lambda *key: rows)
    assert sessions.around(rec("mid", "2023-05-08T13:56:00Z")) == (["early"], ["late"])
    assert sessions.around(rec("late", "2023-05-08T14:10:00"), reach=3) == (["mid", "early"], [])


def fused(**logits: float) -> list[Fused]:
    return [Fused(k, sigmoid(z), {"logit": z}, {"bm25": i}) for i, (k, z) in enumerate(logits.items(), 1)]


@pytest.mark.parametrize(
    ("logits", "neighbours", "share", "expected"),
    [
        # a reply ("Yes, every Sunday!") below the question it answers moves part way up
        ({"q": 2.0, "reply": -2.0}, {"reply": ["q"], "q": ["reply"]}, 0.5, {"q": 2.0, "reply": 0.0}),
        # never down: a better turn keeps its own logit
        ({"q": 2.0, "reply": -2.0}, {"q": ["reply"]}, 0.5, {"q": 2.0, "reply": -2.0}),
        # the likelier of two neighbours counts
        ({"a": 1.0, "b": -3.0, "c": 3.0}, {"b": ["a", "c"]}, 0.25, {"a": 1.0, "b": -1.5, "c": 3.0}),
        # lifts are computed from the logits before any lift (no chain reaction)
        ({"a": 4.0, "b": 0.0, "c": -4.0}, {"b": ["a"], "c": ["b"]}, 0.5, {"a": 4.0, "b": 2.0, "c": -2.0}),
        # a neighbour that is not a candidate (hidden, or not found) counts for nothing
        ({"a": 0.0}, {"a": ["hidden"]}, 0.5, {"a": 0.0}),
        ({"a": 1.0, "b": 0.0}, {"b": ["a"]}, 0.0, {"a": 1.0, "b": 0.0}),
    ],
    ids=["part-way-up", "never-down", "likelier-neighbour", "no-chains", "not-a-candidate", "share-0"],
)
def test_session_lift(
    logits: dict[str, float], neighbours: dict[str, list[str]], share: float, expected: dict[str, float]
) -> None:
    out = session_lift(fused(**logits), neighbours, share)
    got = {f.key: f.contributions["logit"] for f in out}
    assert got == pytest.approx(expected)
    for f in out:
        assert f.rrf == pytest.approx(sigmoid(got[f.key]))
        lift = expected[f.key] - logits[f.key]
        assert f.contributions.get("session", 0.0) == pytest.approx(lift)
    assert [f.key for f in out] == sorted(got, key=lambda k: -got[k])
    assert not math.isnan(sum(got.values()))
