"""Issue 24, item 4: conversation memories read in their sessions, through the real CLI. A
conversation result brings the turns said around it (`context`), within its session only,
within the caller's view only, thinned by the budget; a turn whose neighbour matches the
question better is lifted part of the way up to it (`--explain` shows the lift)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration.test_write_conversations import (
    NEEDLES,
    TURNS_PER_SESSION,
    _needle_index,
    conversation,
    session_day,
    write_conversation,
)
from vaultmem.search.fusion import SESSION_SHARE


def ids_by_path(cli: Cli, paths: dict[int, str], ghost: str) -> dict[str, str]:
    return {p: cli.ok("get", p, ghost=ghost)["note"]["id"] for p in paths.values()}


def result_for(res: dict[str, Any], path: str) -> dict[str, Any]:
    return next(r for r in res["results"] if r["summary"]["path"] == path)


def test_a_turn_comes_with_the_turns_said_around_it(bvault: Path, bcli: Cli) -> None:
    paths = write_conversation(bcli)
    turns = conversation()
    session, t, _, question = NEEDLES[2]  # the landlord's rent, turn 3 of session 6
    at = _needle_index(session, t)
    res = bcli.ok("search", question, "--mode", "bm25", "--limit", "5", ghost="alice")
    hit = result_for(res, paths[at])
    ids = {paths[i]: bcli.ok("get", paths[i], ghost="alice")["note"]["id"] for i in (at - 2, at - 1, at + 1, at + 2)}
    returned = {r["summary"]["id"] for r in res["results"]}
    # nearest first: the turn before, then the one after; each with who said it and what
    assert [(c["id"], c["offset"]) for c in hit["context"]] == [(ids[paths[at - 1]], -1), (ids[paths[at + 1]], 1)]
    for c, i in zip(hit["context"], (at - 1, at + 1), strict=True):
        if c["id"] in returned:  # one of the results: its summary is there
            assert set(c) == {"id", "offset"}
        else:
            assert (c["role"], c["text"]) == (turns[i]["role"], turns[i]["content"])

    # --graph-depth is how many turns each side; 0: none
    deep = bcli.ok("search", question, "--mode", "bm25", "--limit", "5", "--graph-depth", "2", ghost="alice")
    assert [c["offset"] for c in result_for(deep, paths[at])["context"]] == [-1, 1, -2, 2]
    assert [c["id"] for c in result_for(deep, paths[at])["context"]][2:] == [ids[paths[at - 2]], ids[paths[at + 2]]]
    flat = bcli.ok("search", question, "--mode", "bm25", "--limit", "5", "--graph-depth", "0", ghost="alice")
    assert "context" not in result_for(flat, paths[at])

    # markdown and the table show them in the order said
    md = bcli.ok("search", question, "--mode", "bm25", "--limit", "1", "--format", "md", ghost="alice", json_=False)
    assert f"said before: {turns[at - 1]['content']}" in md and f"said after: {turns[at + 1]['content']}" in md


def test_a_session_ends_where_the_conversation_paused(bvault: Path, bcli: Cli) -> None:
    """The first turn of a session has nothing before it: the turn before it in the vault
    was said days earlier, in the previous session."""
    paths = write_conversation(bcli)
    first, last = _needle_index(4, 0), _needle_index(3, TURNS_PER_SESSION - 1)
    assert session_day(4) - (session_day(3) + timedelta(minutes=2 * (TURNS_PER_SESSION - 1))) > timedelta(days=1)
    title = bcli.ok("get", paths[first], ghost="alice")["note"]["title"]
    res = bcli.ok("search", title, "--mode", "bm25", "--limit", "20", ghost="alice")
    offsets = [c["offset"] for c in result_for(res, paths[first])["context"]]
    assert offsets == [1]
    last_id = bcli.ok("get", paths[last], ghost="alice")["note"]["id"]
    assert all(c["id"] != last_id for r in res["results"] for c in r.get("context", []))


def test_context_never_crosses_into_another_ghosts_memories(bvault: Path, bcli: Cli) -> None:
    """Bob's conversation, said at the very same moments as alice's, is not alice's session:
    neither sees the other's turns as context, lifts or results."""
    alice = write_conversation(bcli)
    mirrored = [{**turn, "content": f"Bob's echo: {turn['content']}"} for turn in conversation()]
    bob = bcli.ok("write", "-", ghost="bob", input=json.dumps(mirrored))
    bob_paths = {w["path"] for w in bob["written"]}
    alice_ids = set(ids_by_path(bcli, alice, "alice").values())
    bob_ids = {bcli.ok("get", p, ghost="bob")["note"]["id"] for p in bob_paths}
    for _, _, _, question in NEEDLES:
        for ghost, own, other in (("alice", alice_ids, bob_ids), ("bob", bob_ids, alice_ids)):
            res = bcli.ok("search", question, "--mode", "bm25", "--limit", "10", "--explain", ghost=ghost)
            assert res["results"]
            for r in res["results"]:
                assert r["summary"]["id"] in own
                assert {c["id"] for c in r.get("context", [])} <= own
            text = json.dumps(res)
            assert not any(i in text for i in other)


def test_a_turn_is_lifted_towards_its_likelier_neighbour(bvault: Path, bcli: Cli) -> None:
    """`--explain` shows each lift; it is the session share of the way up to the likelier
    neighbour among the results, in logit (search/fusion.py session_lift)."""
    write_conversation(bcli)
    lifted = 0
    for _, _, _, question in NEEDLES:
        res = bcli.ok("search", question, "--mode", "bm25", "--limit", "50", "--explain", "--min-score", "0",
                      ghost="alice")  # fmt: skip
        # each result's logit before any lift (lifts are computed from those)
        unlifted = {
            r["summary"]["id"]: r["explain"]["parts"]["logit"] - r["explain"]["parts"].get("session", 0.0)
            for r in res["results"]
        }
        for r in res["results"]:
            parts = r["explain"]["parts"]
            before = unlifted[r["summary"]["id"]]
            near = [unlifted[c["id"]] for c in r.get("context", []) if abs(c["offset"]) == 1 and c["id"] in unlifted]
            if "session" not in parts:
                assert all(n <= before + 1e-4 for n in near)  # no likelier neighbour: no lift
                continue
            if not near:
                continue  # the likelier neighbour collapsed into a repeat of it ("Thanks!")
            lifted += 1
            assert parts["session"] == pytest.approx(SESSION_SHARE * (max(near) - before), abs=1e-4)
    assert lifted > 0


def test_a_file_nobody_may_read_is_no_turn_of_a_session(bvault: Path, bcli: Cli) -> None:
    """A conversation file loose in `inbox/` (nobody's: lint's `misplaced`) has the scope,
    owner and project of `inbox/shared/`; said between two turns there, it must neither hide
    the turn after nor show as a gap in the offsets (its existence, counted)."""

    def turn(rel: str, at: str, text: str) -> None:
        path = bvault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntype: conversation\ncreated: '{at}'\nrole: Carol\n---\n{text}\n", encoding="utf-8")

    turn("inbox/shared/first.md", "2023-07-01T10:00:00", "Carol: shall we plan the durian festival trip?")
    turn("inbox/loose.md", "2023-07-01T10:05:00", "Bob: a loose note about the festival")
    turn("inbox/shared/second.md", "2023-07-01T10:10:00", "Carol: yes, the trip in August.")
    for depth in ("1", "2"):
        res = bcli.ok("search", "durian festival trip", "--mode", "bm25", "--graph-depth", depth, ghost="alice")
        assert [c["offset"] for c in result_for(res, "inbox/shared/first.md")["context"]] == [1]
        assert [c["offset"] for c in result_for(res, "inbox/shared/second.md")["context"]] == [-1]
        assert "loose" not in json.dumps(res)
