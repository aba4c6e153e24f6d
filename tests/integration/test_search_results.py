"""The SearchResult / MemoryResult JSON of SPEC §6, --limit, the trust bias, and the collapse
of near-duplicate bodies (SPEC §5)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli
from tests.integration._vaults import SUMMARY_KEYS, make_vault, note, paths_of


@pytest.fixture(scope="module")
def scli(tmp_path_factory: pytest.TempPathFactory, module_hash: object) -> Cli:
    root = make_vault(tmp_path_factory.mktemp("results") / "r", backend="auto")
    body = "The tide table for the estuary lists high water at noon and low water at dusk.\n"
    note(root, "shared/low.md", body.replace("tide", "tide tide"), title="Tide low trust", trust_score=0.0)
    note(root, "shared/high.md", body.replace("tide", "tide tide"), title="Tide high trust", trust_score=1.0)
    note(
        root,
        "shared/original.md",
        "Anchoring in soft mud needs a long scope of chain and patience.\n",
        title="Anchoring",
    )
    note(
        root,
        "shared/copy.md",
        "Anchoring in soft mud needs a long scope of chain and patience!\n",
        title="Anchoring copy",
    )
    for i in range(8):
        note(root, f"shared/n{i}.md", f"Estuary note {i}: herons, mudflats and the tide.\n", title=f"Estuary {i}")
    cli = Cli(root)
    cli.ok("index")
    return cli


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
def test_search_result_shape(scli: Cli, mode: str) -> None:
    res = scli("search", "tide table estuary", "--mode", mode)
    assert res.exit_code == 0
    data = json.loads(res.stdout)  # stdout is exactly one JSON document
    assert {"query", "mode", "results", "returned", "tokens_used", "search_time_ms"} <= set(data)
    assert data["query"] == "tide table estuary" and data["mode"] == mode
    assert data["returned"] == len(data["results"]) > 0
    assert isinstance(data["tokens_used"], int) and data["search_time_ms"] >= 0
    for r in data["results"]:
        assert {"summary", "parents", "links_in", "links_out", "tags"} <= set(r)
        assert set(r["summary"]) >= SUMMARY_KEYS
        assert r["summary"]["scope"] == "shared" and isinstance(r["summary"]["score"], float)
    scores = [r["summary"]["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)


def test_limit(scli: Cli) -> None:
    assert len(scli.ok("search", "estuary", "--limit", "3")["results"]) == 3
    assert len(scli.ok("search", "estuary", "--limit", "1", "--mode", "vector")["results"]) == 1


def test_trust_decides_which_of_two_equal_notes_is_kept(scli: Cli) -> None:
    """Same body, equal ranks but for trust: the trusted note ranks first, by the trust factor,
    and the other collapses into it as a near-duplicate."""
    data = scli.ok("search", "tide table", "--mode", "bm25", "--explain")
    by_path = {r["summary"]["path"]: r for r in data["results"]}
    ranked = [p for p in paths_of(data) if p in ("shared/high.md", "shared/low.md")]
    # the two are near-duplicates: one collapses into the other, the trusted one stays
    assert ranked == ["shared/high.md"]
    assert by_path["shared/high.md"]["explain"]["trust_factor"] == pytest.approx(1.1)
    assert by_path["shared/high.md"].get("duplicates") == ["shared/low.md"]
    no_bias = scli.ok("search", "tide table", "--mode", "bm25", "--explain", "--trust-bias", "0")
    assert no_bias["results"][0]["explain"]["trust_factor"] == 1.0


def test_near_duplicate_bodies_collapse_to_one_result(scli: Cli) -> None:
    data = scli.ok("search", "anchoring soft mud chain", "--mode", "bm25")
    got = [p for p in paths_of(data) if p in ("shared/original.md", "shared/copy.md")]
    assert len(got) == 1
    kept = next(r for r in data["results"] if r["summary"]["path"] == got[0])
    assert kept["duplicates"] == [({"shared/original.md", "shared/copy.md"} - set(got)).pop()]
    assert data["collapsed_duplicates"] >= 1
