"""Links resolve among the notes the reader can see (SPEC §3, issue 13 item 2).

A note the reader cannot see does not exist for them, so it cannot win a link: where the
indexed resolution lands on a hidden note, the link points where it would without that
note (a visible alias, another file of that name), or dangles. `get`'s links and search's
graph neighbours both follow it, for every reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note


def _vault(tmp_path: Path, hidden: bool) -> Cli:
    root = make_vault(tmp_path / ("with" if hidden else "without"), backend="none")
    note(root, "shared/Runbook.md", "How we ship.\n", title="Runbook", id="RUNBOOK", aliases=["Deploy"])
    note(root, "shared/Hub.md", "Start at [[Deploy]] and [[Secret plan]].\n", title="Hub", id="HUB")
    note(root, "shared/Plans.md", "Plans in general.\n", title="Plans", id="PLANS", aliases=["Secret plan"])
    if hidden:
        # bob's private note wins [[Deploy]] by file name for bob, alice's [[Secret plan]] for her
        note(root, "private/bob/Deploy.md", "bob's deploy notes\n", title="Deploy", id="BOBDEPLOY")
        note(root, "private/alice/Secret plan.md", "alice's plan\n", title="Secret plan", id="ALICEPLAN")
    cli = Cli(root)
    cli.ok("index")
    return cli


def _links(cli: Cli, ghost: str, ref: str) -> dict[str, Any]:
    links = cli.ok("get", ref, ghost=ghost)["links"]
    return {
        "out": sorted(x["id"] for x in links["out"]),
        "in": sorted(x["id"] for x in links["in"]),
        "dangling": sorted(d["target"] for d in links["dangling"]),
    }


def _neighbours(cli: Cli, ghost: str, query: str) -> dict[str, list[str]]:
    res = cli.ok("search", query, "--mode", "bm25", "--limit", "1", ghost=ghost)["results"][0]
    return {rel: sorted(n["id"] for n in res[rel]) for rel in ("links_out", "links_in")}


def test_each_reader_resolves_among_what_they_see(tmp_path: Path) -> None:
    cli = _vault(tmp_path, hidden=True)
    # bob sees his own Deploy (a file name beats an alias) and not alice's plan: the shared alias wins
    assert _links(cli, "bob", "HUB") == {"out": ["BOBDEPLOY", "PLANS"], "in": [], "dangling": []}
    # alice: the other way round
    assert _links(cli, "alice", "HUB") == {"out": ["ALICEPLAN", "RUNBOOK"], "in": [], "dangling": []}
    # the shared alias notes see the link arrive for the reader it resolves to for
    assert _links(cli, "alice", "RUNBOOK")["in"] == ["HUB"]
    assert _links(cli, "bob", "RUNBOOK")["in"] == []
    assert _links(cli, "bob", "PLANS")["in"] == ["HUB"]
    assert _neighbours(cli, "alice", "Start at") == {"links_out": ["ALICEPLAN", "RUNBOOK"], "links_in": []}
    assert _neighbours(cli, "alice", "How we ship") == {"links_out": [], "links_in": ["HUB"]}
    assert _neighbours(cli, "bob", "How we ship") == {"links_out": [], "links_in": []}


def test_a_hidden_note_changes_nothing_for_those_who_cannot_see_it(tmp_path: Path) -> None:
    """carol sees neither private note: her view is the same as in a vault without them."""
    with_hidden, without = _vault(tmp_path, hidden=True), _vault(tmp_path, hidden=False)
    for cli in (with_hidden, without):
        cli.ok("ghost", "add", "carol")
    for ref in ("HUB", "RUNBOOK", "PLANS"):
        assert _links(with_hidden, "carol", ref) == _links(without, "carol", ref), ref
    for query in ("Start at", "How we ship", "Plans in general"):
        assert _neighbours(with_hidden, "carol", query) == _neighbours(without, "carol", query), query
    assert _links(with_hidden, "carol", "HUB") == {"out": ["PLANS", "RUNBOOK"], "in": [], "dangling": []}
