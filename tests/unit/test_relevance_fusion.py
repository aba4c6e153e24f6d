"""The calibrated relevance fusion (search/fusion.py): a probability, comparable across
queries, from the best chunk's cosine similarity and the saturated BM25 score."""

from __future__ import annotations

import math

import pytest

from vaultmem.search.fusion import Calibration, apply_trust, calibration_for, cut_twice, relevance_fusion

CAL = Calibration(a=10.0, b=4.0, c=-8.0, sat=5.0)


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


@pytest.mark.parametrize(
    ("cos", "bm25", "expected"),
    [
        (0.0, 0.0, sigmoid(-8.0)),  # nothing in common
        (0.8, 0.0, sigmoid(10 * 0.8 - 8)),  # near in meaning, no shared word
        (0.0, 5.0, sigmoid(4 * 0.5 - 8)),  # BM25 at the saturation point counts half of b
        (0.8, 5.0, sigmoid(10 * 0.8 + 2 - 8)),
        (1.0, 1e9, sigmoid(10 + 4 - 8)),  # saturated: BM25 adds at most b
    ],
    ids=["nothing", "dense-only", "bm25-at-sat", "both", "saturated"],
)
def test_relevance_formula(cos: float, bm25: float, expected: float) -> None:
    score, logit = CAL.relevance(cos, bm25)
    assert score == pytest.approx(expected)
    assert logit == pytest.approx(math.log(expected / (1 - expected)))


def test_weights_scale_each_side() -> None:
    assert CAL.relevance(0.5, 5.0, w_emb=0.0)[1] == pytest.approx(4 * 0.5 - 8)
    assert CAL.relevance(0.5, 5.0, w_bm25=0.0)[1] == pytest.approx(10 * 0.5 - 8)


def test_fusion_fills_missing_sides_conservatively() -> None:
    lexical = {"a": 12.0, "b": 3.0}
    dense = {"c": 0.2, "a": 0.4, "d": 0.7}  # distances: c nearest
    fused = {f.key: f for f in relevance_fusion(lexical, dense, CAL, {})}
    assert set(fused) == {"a", "b", "c", "d"}
    # b was not among the dense hits: it counts the lowest similarity they had (1 - 0.7)
    assert fused["b"].contributions["cos"] == pytest.approx(0.3)
    # c was not a BM25 hit: BM25 counts 0
    assert fused["c"].contributions["bm25"] == 0.0
    assert fused["a"].ranks == {"bm25": 1, "vector": 2}
    order = [f.key for f in relevance_fusion(lexical, dense, CAL, {})]
    assert order == sorted(order, key=lambda k: -fused[k].rrf)


def test_scores_stay_in_0_1_with_trust() -> None:
    fused = relevance_fusion({"a": 100.0}, {"a": 0.0}, CAL, {})
    (scored,) = apply_trust(fused, {"a": 1.0}, 0.5, cap=1.0)
    assert 0.0 <= scored.score <= 1.0 and scored.trust_factor == pytest.approx(1.25)


@pytest.mark.parametrize(
    ("lexical", "dense", "a_zero", "b_zero"),
    [(True, True, False, False), (True, False, True, False), (False, True, False, True)],
    ids=["hybrid", "bm25-only", "vector-only"],
)
def test_one_formula_per_mode(lexical: bool, dense: bool, a_zero: bool, b_zero: bool) -> None:
    cal = calibration_for(lexical, dense)
    assert (cal.a == 0.0) is a_zero and (cal.b == 0.0) is b_zero


def test_the_vault_default_cut_applies_with_a_dense_side_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`[search] min_score` is the vault's default cut where scores have a dense side; BM25
    alone scores real hits far below it, so a vault without embeddings keeps them; an
    explicit --min-score always applies."""
    from tests.conftest import Cli
    from tests.integration._vaults import make_vault, note

    root = make_vault(tmp_path / "v", backend="none", extra="\n[search]\nmin_score = 0.5\n")
    note(root, "shared/a.md", "Red Burgundy is Pinot Noir.", title="Burgundy")
    cli = Cli(root)
    assert [r["summary"]["path"] for r in cli.ok("search", "burgundy pinot")["results"]] == ["shared/a.md"]
    assert cli.ok("search", "burgundy pinot", "--min-score", "0.5")["results"] == []


COV = Calibration(a=10.0, b=4.0, c=-8.0, sat=5.0, p=3.0)


def test_coverage_adds_p_times_coverage_to_the_logit() -> None:
    fused = {f.key: f for f in relevance_fusion({"a": 5.0}, {"a": 0.5}, COV, {}, lambda key: 0.5)}
    assert fused["a"].contributions["coverage"] == 0.5
    assert fused["a"].contributions["logit"] == pytest.approx(10 * 0.5 + 4 * 0.5 + 3 * 0.5 - 8)
    # --bm25-weight scales the lexical parts, coverage included
    doubled = relevance_fusion({"a": 5.0}, {"a": 0.5}, COV, {"bm25": 2.0}, lambda key: 0.5)
    assert doubled[0].contributions["logit"] == pytest.approx(10 * 0.5 + 2 * (4 * 0.5 + 3 * 0.5) - 8)


def test_coverage_is_read_only_for_notes_that_can_reach_the_best() -> None:
    """Coverage reads the note, so it is asked in order of the score without it and only
    while a note could still enter the best `exact`: the ranking of those is the one
    computing it for every note would give."""
    lexical = {f"n{i}": 40.0 - i for i in range(40)}
    dense = {f"n{i}": 0.3 + i / 100 for i in range(40)}
    cover = {f"n{i}": (1.0 if i in (7, 25) else 0.0) for i in range(40)}
    asked: list[str] = []

    def coverage(key: str) -> float:
        asked.append(key)
        return cover[key]

    lazy = relevance_fusion(lexical, dense, COV, {}, coverage, exact=5)
    full = relevance_fusion(lexical, dense, COV, {}, cover.__getitem__, exact=100)
    assert [f.key for f in lazy[:5]] == [f.key for f in full[:5]]
    assert "n7" in [f.key for f in lazy[:5]]
    assert 5 <= len(asked) < 40 and len(set(asked)) == len(asked)
    # notes never asked carry no coverage part, and score at most the fifth best
    fifth = lazy[4].rrf
    assert all("coverage" not in f.contributions and f.rrf <= fifth for f in lazy if f.key not in asked)


def test_without_p_coverage_is_never_asked() -> None:
    def boom(key: str) -> float:
        raise AssertionError(key)

    fused = relevance_fusion({"a": 5.0}, {"a": 0.5}, CAL, {}, boom)
    assert "coverage" not in fused[0].contributions


GATED = Calibration(a=10.0, b=4.0, c=-8.0, sat=5.0, p=2.0, gate=0.3)


@pytest.mark.parametrize(
    ("cos", "cov", "share"),
    [
        (0.5, 0.2, 1.0),
        (0.3, 0.0, 1.0),
        (0.15, 0.2, 0.5),
        (0.15, 0.8, 0.8),  # a line holding most of the question counts that much
        (0.1, 1.0, 1.0),  # ... all of it: in full whatever the cosine
        (0.0, 0.0, 0.0),
        (-0.2, 0.1, 0.1),
    ],
    ids=["related", "at-the-gate", "half-way", "most-words", "whole-question", "orthogonal", "negative"],
)
def test_word_matches_count_in_proportion_below_the_gate(cos: float, cov: float, share: float) -> None:
    assert GATED.lexical_share(cos, cov) == pytest.approx(share)
    # BM25 at its saturation point (half of b) and the coverage (p·cov), scaled together
    assert GATED.logit(cos, 5.0, cov) == pytest.approx(10 * cos + share * (4 * 0.5 + 2 * cov) - 8)
    assert Calibration(a=10.0, b=4.0, c=-8.0, sat=5.0, p=2.0).lexical_share(cos, cov) == 1.0  # no gate: all


def test_a_shared_word_does_not_outrank_meaning() -> None:
    """ "how should I format my replies": the note sharing "should" is far in meaning (cos
    0.14), the answer shares no word (cos 0.30)."""
    lexical = {"prune": 6.0}
    dense = {"concise": 0.70, "prune": 0.86}
    coverage = {"prune": 0.16, "concise": 0.0}
    ungated = Calibration(a=6.6, b=1.6, c=-8.2, sat=20.0, p=4.6)
    gated = Calibration(a=6.6, b=1.6, c=-8.2, sat=20.0, p=4.6, gate=0.3)
    assert relevance_fusion(lexical, dense, ungated, {}, coverage.get)[0].key == "prune"
    fused = relevance_fusion(lexical, dense, gated, {}, coverage.get)
    assert [f.key for f in fused] == ["concise", "prune"]
    prune = fused[1].contributions
    share = 0.14 / 0.3  # its coverage, 0.16, is less
    assert prune["logit"] == pytest.approx(6.6 * 0.14 + share * (1.6 * 6 / 26 + 4.6 * 0.16) - 8.2)


def test_a_note_holding_the_whole_question_counts_its_words_in_full() -> None:
    """A note written a moment ago, not embedded yet: it counts the lowest cosine the dense
    side returned, and its line holding every word of the question still puts it first."""
    lexical = {"new": 9.0, "old": 2.0}
    dense = {"old": 0.75, "other": 0.9}  # "new" is not among them: cos 0.1
    coverage = {"new": 1.0, "old": 0.4, "other": 0.0}
    fused = relevance_fusion(lexical, dense, GATED, {}, coverage.get)
    assert fused[0].key == "new"
    assert fused[0].contributions["logit"] == pytest.approx(10 * 0.1 + 4 * 9 / 14 + 2 * 1.0 - 8)


def test_coverage_is_computed_for_every_note_that_could_reach_the_top() -> None:
    """Coverage reads files, so only the notes that could still enter the best `exact` get
    it; a note whose words are gated low at first can rise with it, so the bound is the
    most its score can be: the exact ranking equals the one computed with every coverage."""
    lexical = {f"n{i}": float(20 - i) for i in range(20)}
    dense = {f"n{i}": 0.6 + 0.015 * i for i in range(20)}  # later notes: farther in meaning
    coverage = {f"n{i}": (1.0 if i % 7 == 6 else 0.1) for i in range(20)}
    asked: list[str] = []

    def cov(key: str) -> float:
        asked.append(key)
        return coverage[key]

    top = [f.key for f in relevance_fusion(lexical, dense, GATED, {}, cov, exact=3)][:3]
    every = [f.key for f in relevance_fusion(lexical, dense, GATED, {}, coverage.get, exact=100)][:3]
    assert top == every and len(asked) < 20
    # far in meaning, so gated low without its coverage, but a line holding the question:
    # a bound of "the score without coverage, plus p" would never ask for it
    far = {"near": 0.5, "far": 0.95}
    (first, _) = relevance_fusion({"far": 30.0}, far, GATED, {}, {"near": 0.0, "far": 1.0}.get, exact=1)
    assert first.key == "far" and first.contributions["coverage"] == 1.0


def test_no_gate_when_no_note_has_a_known_meaning() -> None:
    """The dense side returned nothing the caller may see (a filter only notes not embedded
    yet pass): every cosine is unknown, so word matches count in full."""
    fused = relevance_fusion({"a": 9.0}, {}, GATED, {}, {"a": 0.5}.get)
    assert fused[0].contributions["logit"] == pytest.approx(4 * 9 / 14 + 2 * 0.5 - 8)


@pytest.mark.parametrize(
    ("body", "title", "expected"),
    [(0.4, 1.0, 0.5), (0.6, 1.0, 0.6), (0.0, 0.3, 0.15), (0.0, 0.0, 0.0)],
    ids=["title-more", "body-more", "title-only", "neither"],
)
def test_a_title_counts_as_one_more_line_at_its_share(body: float, title: float, expected: float) -> None:
    titled = Calibration(a=1.0, b=1.0, c=0.0, sat=5.0, p=1.0, title=0.5)
    assert titled.coverage_with_title(body, title) == pytest.approx(expected)
    assert Calibration(a=1.0, b=1.0, c=0.0, sat=5.0, p=1.0).coverage_with_title(body, title) == body  # no share


@pytest.mark.parametrize(
    ("scores", "bar", "share", "kept"),
    [
        ([0.9, 0.5, 0.2], 0.3, 0.5, [0.9, 0.5, 0.2]),  # the question clears: down to 0.15 stays
        ([0.9, 0.5, 0.1], 0.3, 0.5, [0.9, 0.5]),  # below the floor: out
        ([0.29, 0.2, 0.1], 0.3, 0.5, []),  # nothing clears the bar: an off-topic question
        ([0.3, 0.15, 0.149], 0.3, 0.5, [0.3, 0.15]),  # both bars inclusive
        ([0.9, 0.5, 0.2], 0.3, 1.0, [0.9, 0.5]),  # share 1: one plain cut
        ([0.9, 0.5, 0.2], 0.3, 2.0, [0.9, 0.5]),  # never above the bar
        ([], 0.3, 0.5, []),
    ],
)
def test_the_default_cut_is_the_questions_then_a_lower_bar(
    scores: list[float], bar: float, share: float, kept: list[float]
) -> None:
    assert cut_twice(scores, lambda s, b: s >= b, bar, share) == kept


def test_the_second_bar_counts_what_clears_whatever_the_score() -> None:
    """`clears` decides at each bar: a match that counts whatever its score (a line holding
    the whole question) makes the question clear, and stays whatever the floor."""
    items = [("a", 0.01, True), ("b", 0.2, False), ("c", 0.05, False)]
    kept = cut_twice(items, lambda it, b: it[2] or it[1] >= b, 0.3, 0.5)
    assert [name for name, _, _ in kept] == ["a", "b"]  # b (0.2) above the floor 0.15, c not
    kept = cut_twice(items[1:], lambda it, b: it[2] or it[1] >= b, 0.3, 0.5)
    assert kept == []


def test_only_what_opens_the_lower_bar_lets_the_lower_results_in() -> None:
    """A question cleared only by the dense side's own judgement of one note keeps the plain
    cut: that note, not the one-word matches below it (the README's example)."""
    items = [("beer", 0.0079, False), ("reds", 0.003, True), ("other", 0.001, False)]

    def clears(it: tuple[str, float, bool], bar: float) -> bool:
        return it[1] >= bar or it[2]

    def opens(it: tuple[str, float, bool], bar: float) -> bool:
        return it[1] >= bar

    assert [n for n, _, _ in cut_twice(items, clears, 0.008, 0.5, opens)] == ["reds"]
    assert [n for n, _, _ in cut_twice(items, clears, 0.008, 0.5)] == ["beer", "reds"]
    opened = [("top", 0.02, False), *items]
    assert [n for n, _, _ in cut_twice(opened, clears, 0.008, 0.5, opens)] == ["top", "beer", "reds"]


@pytest.mark.parametrize(
    ("scores", "kept", "warned"),
    [
        ([], [], False),  # nothing found: nothing to say
        ([0.002, 0.001], [], True),  # found, and all of it below the bar: said
        ([0.02, 0.0001], [0.02], False),  # one clears: kept, and no word
    ],
)
def test_default_cut_says_when_it_leaves_nothing(scores: list[float], kept: list[float], warned: bool) -> None:
    from vaultmem.search.fusion import CUT_EVERYTHING, default_cut

    def clears(score: float, bar: float) -> bool:
        return score >= bar

    got, warnings = default_cut(scores, clears, 0.01, clears)
    assert (got, warnings) == (kept, [CUT_EVERYTHING] if warned else [])
