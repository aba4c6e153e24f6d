"""Issue 11 (3): answers an agent can afford. Neighbour entries carry no null-valued keys
(`{id, title}`, `hops` only past one); a neighbour that is itself a result is `{id}` only;
every result keeps its contract keys (the summary's nulls too). `--budget-tokens N` uses
at least 80% of N when there is more to return, cutting snippets at word or sentence
boundaries."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration._vaults import SUMMARY_KEYS, make_vault, note

RELATIONS = ("parents", "links_in", "links_out")
SENTENCE = "The lantern keeper trims the wick before the evening ferry crosses the bay."


@pytest.fixture(scope="module")
def ccli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    root = make_vault(tmp_path_factory.mktemp("compact") / "c")
    note(root, "shared/index.md", "Everything about lanterns lives under here.\n", title="Lantern index")
    for i in range(8):
        others = " ".join(f"[[Lantern {j}]]" for j in range(8) if j != i)
        body = f"# Lantern {i}\n\n" + " ".join([SENTENCE] * (2 + i % 3)) + f"\n\nSee {others} and [[Elsewhere {i}]].\n"
        note(root, f"shared/l{i}.md", body, title=f"Lantern {i}", parent="Lantern index")
        note(
            root,
            f"shared/e{i}.md",
            f"Nothing to do with the others. Back to [[Lantern {i}]].\n",
            title=f"Elsewhere {i}",
        )
    cli = Cli(root)
    cli.ok("index")
    return cli


def _search(cli: Cli, *args: str) -> dict[str, Any]:
    return cli.ok("search", "lantern keeper wick ferry", "--mode", "bm25", *args)  # type: ignore[no-any-return]


def _estimate(result: dict[str, Any]) -> int:
    return math.ceil(len(json.dumps(result, ensure_ascii=False, separators=(",", ":"))) / 4)


@pytest.mark.parametrize("depth", ["1", "2"])
def test_neighbours_have_no_nulls_and_results_are_referenced_by_id(ccli: Cli, depth: str) -> None:
    data = _search(ccli, "--limit", "5", "--graph-depth", depth)
    results = data["results"]
    assert len(results) == 5
    ids = {r["summary"]["id"] for r in results}
    referenced = 0
    for r in results:
        assert {"summary", "parents", "links_in", "links_out", "tags"} <= set(r)
        assert set(r["summary"]) >= SUMMARY_KEYS  # the result's own summary keeps every key
        assert r["summary"]["owner"] is None and "owner" in r["summary"]  # nulls included
        for name in RELATIONS:
            assert len(r[name]) <= 5  # per relation
            for n in r[name]:
                assert None not in n.values(), n
                if n["id"] in ids:
                    assert n == {"id": n["id"]}, n  # its summary is among the results
                    referenced += 1
                else:
                    assert set(n) <= {"id", "title", "hops"} and {"id", "title"} <= set(n), n
                    assert n.get("hops", 2) > 1  # hops 1 goes unsaid
    assert referenced  # the lanterns link each other: some neighbours are results
    assert any(n["title"] == "Lantern index" for r in results for n in r["parents"])


def test_a_neighbour_not_returned_keeps_its_title(ccli: Cli) -> None:
    """With one result, the lanterns it links to are not results: titles, not bare ids."""
    data = _search(ccli, "--limit", "1")
    top = data["results"][0]
    assert top["links_out"] and all("title" in n for n in top["links_out"])


def test_budget_references_only_what_is_returned(ccli: Cli) -> None:
    """A neighbour referenced by id alone is always one of the results returned, even when
    the budget leaves results out."""
    full = _search(ccli, "--limit", "8")
    for budget in (150, 300, 600):
        data = _search(ccli, "--limit", "8", "--budget-tokens", str(budget))
        ids = {r["summary"]["id"] for r in data["results"]}
        for r in data["results"]:
            for name in RELATIONS:
                for n in r[name]:
                    assert "title" in n or n["id"] in ids, (budget, n)
        assert data["tokens_used"] == sum(_estimate(r) for r in data["results"]) <= budget
        assert [r["summary"]["id"] for r in data["results"]] == [
            r["summary"]["id"] for r in full["results"][: len(data["results"])]
        ]


@pytest.mark.parametrize("budget", [120, 200, 400, 800, 1200])
def test_budget_is_used_when_there_is_more_to_return(ccli: Cli, budget: int) -> None:
    full = _search(ccli, "--limit", "8")
    assert full["tokens_used"] > 1200
    data = _search(ccli, "--limit", "8", "--budget-tokens", str(budget))
    assert 0.8 * budget <= data["tokens_used"] <= budget, data["tokens_used"]
    assert data["budget_tokens"] == budget


@pytest.mark.parametrize("budget", [120, 200, 400, 800])
def test_budget_cuts_snippets_at_word_or_sentence_boundaries(ccli: Cli, budget: int) -> None:
    full = {r["summary"]["id"]: r["summary"]["snippet"] for r in _search(ccli, "--limit", "8")["results"]}
    data = _search(ccli, "--limit", "8", "--budget-tokens", str(budget))
    cut = 0
    for r in data["results"]:
        whole, got = full[r["summary"]["id"]], r["summary"]["snippet"]
        if got is None or got == whole:
            continue
        cut += 1
        kept = got.removesuffix("…")
        assert whole.startswith(kept), (got, whole)
        assert whole[len(kept)] in " ,;:.!?", (got, whole)  # never inside a word
        if not got.endswith("…"):
            assert kept.endswith(".")  # a whole sentence
    assert cut or budget >= 800
