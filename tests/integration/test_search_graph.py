"""Issue 4, acceptance 3: graph expansion. Parents, links_in and links_out of each result up
to --graph-depth hops, each a compact `{id, title}` (`hops` when more than one; issue 11),
never a note the ghost cannot see (nor anything reached only through one); --no-links-in,
--no-links-out and --no-parent honoured."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration._vaults import SUMMARY_KEYS, make_vault, note

# title -> path of the vault below (titles are unique in it)
PATHS = {
    "Grand": "shared/grand.md", "Root": "shared/root.md", "Hub": "shared/hub.md", "Out one": "shared/out1.md",
    "Out two": "shared/out2.md", "Deep": "shared/deep.md", "Deeper": "shared/deeper.md",
    "Alice target": "private/alice/target.md", "Beyond": "shared/beyond.md", "In one": "shared/in1.md",
    "In two": "shared/in2.md", "Alice linker": "private/alice/linker.md", "Child": "shared/child.md",
}  # fmt: skip


@pytest.fixture(scope="module")
def gcli(tmp_path_factory: pytest.TempPathFactory, module_hash: object) -> Cli:
    root = make_vault(tmp_path_factory.mktemp("graph") / "g", backend="auto")
    note(root, "shared/grand.md", "Grandparent of everything.\n", title="Grand")
    note(root, "shared/root.md", "Root topic.\n", title="Root", parent="Grand")
    note(root, "shared/hub.md",
         "The zephyr hub. Links: [[Out one]], [[Out two]], [[Alice target]].\n",
         title="Hub", parent="Root", trust_score=0.8)  # fmt: skip
    note(root, "shared/out1.md", "First outgoing, then [[Deep]].\n", title="Out one")
    note(root, "shared/out2.md", "Second outgoing.\n", title="Out two")
    note(root, "shared/deep.md", "Two hops away, then [[Deeper]].\n", title="Deep")
    note(root, "shared/deeper.md", "Three hops away.\n", title="Deeper")
    note(root, "private/alice/target.md", "Alice's page, pointing at [[Beyond]].\n", title="Alice target")
    note(root, "shared/beyond.md", "Reached only through Alice's page.\n", title="Beyond")
    note(root, "shared/in1.md", "I link to the [[Hub]].\n", title="In one")
    note(root, "shared/in2.md", "I link to [[In one]].\n", title="In two")
    note(root, "private/alice/linker.md", "Alice links to [[Hub]] privately.\n", title="Alice linker")
    note(root, "shared/child.md", "A child of the hub, about quasars.\n", title="Child", parent="Hub")
    cli = Cli(root)
    cli.ok("index")
    return cli


def _hub(cli: Cli, *args: str, ghost: str | None = None, mode: str = "bm25") -> dict[str, Any]:
    data = cli.ok("search", "zephyr", "--mode", mode, "--limit", "1", *args, ghost=ghost)
    assert data["results"][0]["summary"]["path"] == "shared/hub.md"
    return data["results"][0]  # type: ignore[no-any-return]


def _rel(result: dict[str, Any], name: str) -> list[tuple[str, int]]:
    """(path, hops) of a relation's neighbours (with --limit 1 none of them is a result)."""
    return [(PATHS[n["title"]], n.get("hops", 1)) for n in result[name]]


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_depth_one(gcli: Cli, mode: str) -> None:
    hub = _hub(gcli, "--graph-depth", "1", ghost="alice", mode=mode)
    assert _rel(hub, "parents") == [("shared/root.md", 1)]
    assert sorted(_rel(hub, "links_out")) == [
        ("private/alice/target.md", 1),
        ("shared/out1.md", 1),
        ("shared/out2.md", 1),
    ]
    assert sorted(_rel(hub, "links_in")) == [("private/alice/linker.md", 1), ("shared/in1.md", 1)]
    for name in ("parents", "links_in", "links_out"):
        for n in hub[name]:
            assert set(n) == {"id", "title"} and None not in n.values(), n  # hops 1 goes unsaid
    assert set(hub) >= {"summary", "parents", "links_in", "links_out", "tags"}
    assert set(hub["summary"]) >= SUMMARY_KEYS


def test_depth_two_and_three(gcli: Cli) -> None:
    hub = _hub(gcli, "--graph-depth", "2", ghost="alice")
    assert _rel(hub, "parents") == [("shared/root.md", 1), ("shared/grand.md", 2)]
    assert sorted(_rel(hub, "links_out")) == [
        ("private/alice/target.md", 1), ("shared/beyond.md", 2), ("shared/deep.md", 2),
        ("shared/out1.md", 1), ("shared/out2.md", 1),
    ]  # fmt: skip
    assert sorted(_rel(hub, "links_in")) == [("private/alice/linker.md", 1), ("shared/in1.md", 1), ("shared/in2.md", 2)]
    # nearest first
    hops = [h for _, h in _rel(hub, "links_out")]
    assert hops == sorted(hops)
    deeper = _hub(gcli, "--graph-depth", "3")
    assert ("shared/deeper.md", 3) in _rel(deeper, "links_out")
    # Alice sees six notes out within three hops: five per relation at most, nearest first.
    capped = _rel(_hub(gcli, "--graph-depth", "3", ghost="alice"), "links_out")
    assert len(capped) == 5 and ("shared/deeper.md", 3) not in capped


def test_depth_zero_expands_nothing(gcli: Cli) -> None:
    hub = _hub(gcli, "--graph-depth", "0", ghost="alice")
    assert hub["parents"] == hub["links_in"] == hub["links_out"] == []


@pytest.mark.parametrize("ghost", ["bob", None])
def test_invisible_notes_never_appear_nor_lead_anywhere(gcli: Cli, ghost: str | None) -> None:
    hub = _hub(gcli, "--graph-depth", "3", ghost=ghost)
    every = [p for name in ("parents", "links_in", "links_out") for p, _ in _rel(hub, name)]
    assert not any(p.startswith("private/") for p in every)
    # Beyond is reachable only through Alice's page: it must not show up for others.
    assert "shared/beyond.md" not in every
    assert sorted(_rel(hub, "links_out")) == [
        ("shared/deep.md", 2), ("shared/deeper.md", 3), ("shared/out1.md", 1), ("shared/out2.md", 1),
    ]  # fmt: skip
    assert sorted(_rel(hub, "links_in")) == [("shared/in1.md", 1), ("shared/in2.md", 2)]


@pytest.mark.parametrize(
    ("flag", "empty"),
    [("--no-links-in", "links_in"), ("--no-links-out", "links_out"), ("--no-parent", "parents")],
)
def test_relation_switches(gcli: Cli, flag: str, empty: str) -> None:
    hub = _hub(gcli, "--graph-depth", "2", flag, ghost="alice")
    assert hub[empty] == []
    for other in {"links_in", "links_out", "parents"} - {empty}:
        assert hub[other], other


def test_all_switches_together(gcli: Cli) -> None:
    hub = _hub(gcli, "--no-links-in", "--no-links-out", "--no-parent", ghost="alice")
    assert hub["parents"] == hub["links_in"] == hub["links_out"] == []


def test_child_sees_its_parent(gcli: Cli) -> None:
    data = gcli.ok("search", "quasars", "--mode", "bm25", "--limit", "1")
    child = data["results"][0]
    assert child["summary"]["path"] == "shared/child.md"
    assert _rel(child, "parents") == [("shared/hub.md", 1)]
