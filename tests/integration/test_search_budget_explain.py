"""Issue 4, acceptance 5: `--budget-tokens N` packs results in rank order into at most N
tokens, the estimate (characters / 4 of what is returned, stated in the output) covering
summaries, snippets and neighbours; snippets shorten before results drop. `--explain`
shows per result the BM25 rank and score, vector rank and distance, each RRF contribution,
the trust factor and the final score, and the arithmetic adds up."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note


def estimate(result: dict[str, Any]) -> int:
    """The documented estimate: characters / 4 of the compact JSON of one result."""
    return math.ceil(len(json.dumps(result, ensure_ascii=False, separators=(",", ":"))) / 4)


def lean(result: dict[str, Any]) -> dict[str, Any]:
    """The leanest rendering of a result: no snippet, no neighbours."""
    out = json.loads(json.dumps(result))
    out["summary"]["snippet"] = None
    for name in ("parents", "links_in", "links_out"):
        out[name] = []
    return out


@pytest.fixture(scope="module")
def bcli_budget(tmp_path_factory: pytest.TempPathFactory, module_hash: object) -> Cli:
    root = make_vault(tmp_path_factory.mktemp("budget") / "b", backend="auto")
    for i in range(12):
        body = (
            f"# Harbour note {i}\n\n"
            + " ".join(["The harbour pilot guides ships past the breakwater at dawn."] * (1 + i % 4))
            + f"\n\nSee [[Harbour note {(i + 1) % 12}]] and [[Harbour note {(i + 5) % 12}]].\n"
        )
        note(root, f"shared/h{i:02d}.md", body, title=f"Harbour note {i}", trust_score=round(0.3 + 0.05 * i, 2))
    cli = Cli(root)
    cli.ok("index")
    return cli


def _search(cli: Cli, *args: str) -> dict[str, Any]:
    return cli.ok("search", "harbour pilot breakwater", "--limit", "10", *args)  # type: ignore[no-any-return]


def test_tokens_used_is_the_stated_estimate_of_what_is_returned(bcli_budget: Cli) -> None:
    full = _search(bcli_budget)
    assert full["returned"] == len(full["results"]) == 10
    assert "characters / 4" in full["token_estimate"]
    assert full["tokens_used"] == sum(estimate(r) for r in full["results"])
    assert any(r["links_out"] for r in full["results"])  # neighbours are part of what is counted


@pytest.mark.parametrize("fraction", [1.0, 0.8, 0.5, 0.3, 0.15, 0.05])
def test_budget_packs_in_rank_order_and_shortens_before_dropping(bcli_budget: Cli, fraction: float) -> None:
    full = _search(bcli_budget)
    budget = max(1, int(full["tokens_used"] * fraction))
    got = _search(bcli_budget, "--budget-tokens", str(budget))
    results = got["results"]
    assert got["tokens_used"] <= budget
    assert got["tokens_used"] == sum(estimate(r) for r in results)
    assert got["returned"] == len(results)
    # rank order: a prefix of the unbudgeted ranking, same scores
    k = len(results)
    assert [r["summary"]["path"] for r in results] == [r["summary"]["path"] for r in full["results"][:k]]
    assert [r["summary"]["score"] for r in results] == [r["summary"]["score"] for r in full["results"][:k]]
    if k < len(full["results"]):
        # a result is dropped only when even the leanest renderings could not hold it
        assert sum(estimate(lean(r)) for r in full["results"][: k + 1]) > budget
        assert any("left out" in w for w in got.get("warnings", []))
    if fraction == 1.0:
        assert results == full["results"]
    elif k == len(full["results"]):
        # everything fit only because snippets (or neighbour lists) got shorter
        shorter = [
            len(r["summary"]["snippet"] or "") < len(f["summary"]["snippet"] or "")
            or sum(len(r[n]) for n in ("parents", "links_in", "links_out")) < sum(len(f[n]) for n in ("parents", "links_in", "links_out"))
            for r, f in zip(results, full["results"], strict=True)
        ]  # fmt: skip
        assert any(shorter)


def test_snippets_shorten_before_any_result_drops(bcli_budget: Cli) -> None:
    full = _search(bcli_budget)
    lean_total = sum(estimate(lean(r)) for r in full["results"])
    # room for every result's lean form, but not for every full snippet
    got = _search(bcli_budget, "--budget-tokens", str(lean_total + 5))
    assert got["returned"] == 10
    assert got["tokens_used"] <= lean_total + 5
    assert sum(len(r["summary"]["snippet"] or "") for r in got["results"]) < sum(
        len(r["summary"]["snippet"] or "") for r in full["results"]
    )


def test_a_budget_too_small_for_one_result(bcli_budget: Cli) -> None:
    got = _search(bcli_budget, "--budget-tokens", "3")
    assert got["results"] == [] and got["returned"] == 0 and got["tokens_used"] == 0
    assert got["budget_tokens"] == 3


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
def test_explain_fields_and_arithmetic(bcli_budget: Cli, mode: str) -> None:
    """The score's parts (search/fusion.py): cosine of the best chunk, saturated BM25, the
    passage coverage (hybrid), the logit of the mode's formula, the relevance σ(logit), the
    trust factor, the final score."""
    from vaultmem.search.fusion import calibration_for

    cal = calibration_for(mode != "vector", mode != "bm25")
    data = _search(bcli_budget, "--explain", "--mode", mode)
    finals = []
    for r in data["results"]:
        ex = r["explain"]
        assert {"bm25", "vector", "parts", "fused", "trust_factor", "final"} <= set(ex)
        parts = ex["parts"]
        # Every result of hybrid is among the best candidates, so its coverage was computed.
        if mode == "hybrid":  # a note of several chunks shows its centroid's similarity
            assert set(parts) - {"centroid"} == {"cos", "bm25", "coverage", "logit"}
        else:
            assert set(parts) == {"cos", "bm25", "logit"}
        cov = parts.get("coverage", 0.0)
        assert 0.0 <= cov <= 1.0
        if mode in ("hybrid", "bm25"):
            assert set(ex["bm25"]) >= {"rank", "score"} and ex["bm25"]["rank"] >= 1
            s = ex["bm25"]["score"]
            assert parts["bm25"] == pytest.approx(s / (s + cal.sat), abs=1e-4)
        if mode in ("hybrid", "vector"):
            assert set(ex["vector"]) >= {"rank", "distance"} and 0.0 <= ex["vector"]["distance"] <= 2.0
            best = 1 - ex["vector"]["distance"]
            if "centroid" in parts:  # fusion.with_centroids
                best = (1 - cal.centroid) * best + cal.centroid * parts["centroid"]
            assert parts["cos"] == pytest.approx(best, abs=1e-4)
        if mode == "bm25":
            assert ex["vector"] is None
        if mode == "vector":
            assert ex["bm25"] is None and parts["bm25"] == 0.0
        # word matches count in proportion below the gate's cosine (Calibration.lexical_share)
        words = cal.lexical_share(parts["cos"], cov) * (cal.b * parts["bm25"] + cal.p * cov)
        expected = cal.a * parts["cos"] + words + cal.c
        assert parts["logit"] == pytest.approx(expected, abs=1e-4)
        assert ex["fused"] == pytest.approx(1 / (1 + math.exp(-parts["logit"])), abs=1e-5)
        trust = r["summary"]["trust_score"]
        assert ex["trust_factor"] == pytest.approx(1 + 0.2 * ((0.5 if trust is None else trust) - 0.5), abs=1e-4)
        assert ex["final"] == pytest.approx(min(1.0, ex["fused"] * ex["trust_factor"]), rel=1e-3, abs=1e-5)
        assert ex["final"] == pytest.approx(r["summary"]["score"], abs=1e-6)
        assert 0.0 <= ex["final"] <= 1.0
        finals.append(ex["final"])
    assert finals == sorted(finals, reverse=True)


def test_explain_follows_weights(bcli_budget: Cli) -> None:
    """--bm25-weight and --embedding-weight scale each side of the logit."""
    from vaultmem.search.fusion import HYBRID

    data = _search(bcli_budget, "--explain", "--bm25-weight", "2", "--embedding-weight", "0.5", "--trust-bias", "0")
    for r in data["results"]:
        parts = r["explain"]["parts"]
        share = HYBRID.lexical_share(parts["cos"], parts["coverage"])
        lexical = share * (HYBRID.b * parts["bm25"] + HYBRID.p * parts["coverage"])
        expected = HYBRID.a * 0.5 * parts["cos"] + 2 * lexical + HYBRID.c
        assert parts["logit"] == pytest.approx(expected, abs=1e-4)
        assert r["explain"]["trust_factor"] == 1.0


def test_human_output_shows_results_and_budget(bcli_budget: Cli) -> None:
    res = bcli_budget("search", "harbour pilot breakwater", "--budget-tokens", "400", "--explain", json_=False)
    assert res.exit_code == 0
    # through a pipe: one record per result on stdout, the totals on stderr
    assert "Harbour note" in res.stdout and "tokens" in res.stderr
    assert not res.stdout.lstrip().startswith("{")
