"""Table tests of search/fusion.py: weighted RRF and the trust bias (SPEC §5).

score(d) = Σ_i w_i / (k + rank_i(d)); then × (1 + trust_bias × (trust − 0.5)), a missing
trust counting 0.5. Ties break on the best single rank, then on the key. Every expected
number below is written out from that rule, never computed by the code under test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from vaultmem.search.fusion import Fused, apply_trust, rrf

# expected: [(key, {ranking name: (1-based rank, contribution w/(k+rank))}), ...] in order
RRF_CASES = [
    pytest.param({}, {}, 60.0, [], id="no-rankings"),
    pytest.param({"bm25": []}, {"bm25": 1.0}, 60.0, [], id="one-empty-ranking"),
    pytest.param({"bm25": [], "vector": []}, {}, 60.0, [], id="all-rankings-empty"),
    pytest.param(
        {"bm25": ["a", "b", "c"]},
        {"bm25": 1.0},
        60.0,
        [("a", {"bm25": (1, 1 / 61)}), ("b", {"bm25": (2, 1 / 62)}), ("c", {"bm25": (3, 1 / 63)})],
        id="single-ranking-keeps-its-order",
    ),
    pytest.param(
        {"bm25": ["a", "b"], "vector": ["a", "b"]},
        {"bm25": 1.0, "vector": 1.0},
        60.0,
        [
            ("a", {"bm25": (1, 1 / 61), "vector": (1, 1 / 61)}),
            ("b", {"bm25": (2, 1 / 62), "vector": (2, 1 / 62)}),
        ],
        id="agreeing-rankings-add-up",
    ),
    pytest.param(
        {"bm25": ["a", "b"], "vector": ["c"]},
        {"bm25": 1.0, "vector": 1.0},
        60.0,
        [("a", {"bm25": (1, 1 / 61)}), ("c", {"vector": (1, 1 / 61)}), ("b", {"bm25": (2, 1 / 62)})],
        id="key-in-one-ranking-only-scores-that-term",
    ),
    pytest.param(
        # every key scores exactly 1.0 (k=0): x = 1/2 + 1/2, y = 1/1, z = 1/1
        {"bm25": ["y", "x"], "vector": ["z", "x"]},
        {"bm25": 1.0, "vector": 1.0},
        0.0,
        [
            ("y", {"bm25": (1, 1.0)}),
            ("z", {"vector": (1, 1.0)}),
            ("x", {"bm25": (2, 1 / 2), "vector": (2, 1 / 2)}),
        ],
        id="tie-breaks-on-best-single-rank-then-key",
    ),
    pytest.param(
        {"bm25": ["b", "a"], "vector": ["a", "b"]},
        {"bm25": 1.0, "vector": 1.0},
        60.0,
        [
            ("a", {"bm25": (2, 1 / 62), "vector": (1, 1 / 61)}),
            ("b", {"bm25": (1, 1 / 61), "vector": (2, 1 / 62)}),
        ],
        id="full-tie-breaks-on-key",
    ),
    pytest.param(
        # k=0: a = 1/1 beats b = 2/3 (which still beats x = 1/2)
        {"bm25": ["a", "x", "b"], "vector": ["c", "y", "b"]},
        {"bm25": 1.0, "vector": 1.0},
        0.0,
        [
            ("a", {"bm25": (1, 1.0)}),
            ("c", {"vector": (1, 1.0)}),
            ("b", {"bm25": (3, 1 / 3), "vector": (3, 1 / 3)}),
            ("x", {"bm25": (2, 1 / 2)}),
            ("y", {"vector": (2, 1 / 2)}),
        ],
        id="k0-a-single-top-rank-beats-agreement-at-rank-3",
    ),
    pytest.param(
        # k=60: b = 2/63 beats a = 1/61
        {"bm25": ["a", "x", "b"], "vector": ["c", "y", "b"]},
        {"bm25": 1.0, "vector": 1.0},
        60.0,
        [
            ("b", {"bm25": (3, 1 / 63), "vector": (3, 1 / 63)}),
            ("a", {"bm25": (1, 1 / 61)}),
            ("c", {"vector": (1, 1 / 61)}),
            ("x", {"bm25": (2, 1 / 62)}),
            ("y", {"vector": (2, 1 / 62)}),
        ],
        id="k60-agreement-at-rank-3-beats-a-single-top-rank",
    ),
    pytest.param(
        {"bm25": ["a", "b"]},
        {"bm25": 1.0},
        1.0,
        [("a", {"bm25": (1, 1 / 2)}), ("b", {"bm25": (2, 1 / 3)})],
        id="k1-contributions",
    ),
    pytest.param(
        {"bm25": ["a"], "vector": ["b"]},
        {"bm25": 1.0, "vector": 2.0},
        60.0,
        [("b", {"vector": (1, 2 / 61)}), ("a", {"bm25": (1, 1 / 61)})],
        id="weight-2-doubles-a-ranking",
    ),
    pytest.param(
        {"bm25": ["a"], "vector": ["b"]},
        {"bm25": 0.3, "vector": 0.7},
        60.0,
        [("b", {"vector": (1, 0.7 / 61)}), ("a", {"bm25": (1, 0.3 / 61)})],
        id="fractional-weights",
    ),
    pytest.param(
        {"bm25": ["a"], "vector": ["b"]},
        {"bm25": 1.0, "vector": 0.0},
        60.0,
        [("a", {"bm25": (1, 1 / 61)}), ("b", {"vector": (1, 0.0)})],
        id="weight-0-contributes-nothing",
    ),
    pytest.param(
        {"bm25": ["a", "b", "a"]},
        {"bm25": 1.0},
        60.0,
        [("a", {"bm25": (1, 1 / 61)}), ("b", {"bm25": (2, 1 / 62)})],
        id="key-listed-twice-counts-once-at-best-rank",
    ),
]


@pytest.mark.parametrize(("rankings", "weights", "k", "expected"), RRF_CASES)
def test_rrf(
    rankings: Mapping[str, Sequence[str]],
    weights: Mapping[str, float],
    k: float,
    expected: list[tuple[str, dict[str, tuple[int, float]]]],
) -> None:
    fused = rrf(rankings, weights, k)
    assert [f.key for f in fused] == [key for key, _ in expected]
    for f, (_, parts) in zip(fused, expected, strict=True):
        assert f.ranks == {name: rank for name, (rank, _) in parts.items()}
        assert f.contributions == pytest.approx({name: c for name, (_, c) in parts.items()})
        assert f.rrf == pytest.approx(sum(c for _, c in parts.values()))


def _fused(key: str, score: float, rank: int = 1) -> Fused:
    return Fused(key, score, {"bm25": score}, {"bm25": rank})


# expected: [(key, final score, trust factor), ...] in order
TRUST_CASES = [
    pytest.param([], {}, 1.0, [], id="nothing-to-score"),
    pytest.param([_fused("a", 0.1)], {"a": 1.0}, 0.0, [("a", 0.1, 1.0)], id="bias-0-leaves-scores-alone"),
    pytest.param([_fused("a", 0.1)], {}, 2.0, [("a", 0.1, 1.0)], id="missing-trust-counts-0.5"),
    pytest.param([_fused("a", 0.1)], {"a": None}, 2.0, [("a", 0.1, 1.0)], id="null-trust-counts-0.5"),
    pytest.param([_fused("a", 0.1)], {"a": 0.5}, 2.0, [("a", 0.1, 1.0)], id="trust-0.5-is-neutral"),
    pytest.param(
        [_fused("a", 0.1)], {"a": 1.0}, 0.5, [("a", 0.1 * 1.25, 1.25)], id="full-trust-bias-0.5-raises-by-25pct"
    ),
    pytest.param(
        [_fused("a", 0.1)], {"a": 0.0}, 0.5, [("a", 0.1 * 0.75, 0.75)], id="zero-trust-bias-0.5-lowers-by-25pct"
    ),
    pytest.param([_fused("a", 0.1)], {"a": 0.8}, 1.0, [("a", 0.1 * 1.3, 1.3)], id="trust-0.8-bias-1"),
    # past a bias of ±2 the formula would go below 0 (a negative score): the factor stops at 0
    pytest.param([_fused("a", 0.1)], {"a": 0.0}, 3.0, [("a", 0.0, 0.0)], id="bias-3-floors-at-0"),
    pytest.param([_fused("a", 0.1)], {"a": 1.0}, -10.0, [("a", 0.0, 0.0)], id="bias-minus-10-floors-at-0"),
    pytest.param(
        [_fused("a", 0.10, 1), _fused("b", 0.09, 2)],
        {"a": 0.0, "b": 1.0},
        1.0,
        [("b", 0.09 * 1.5, 1.5), ("a", 0.10 * 0.5, 0.5)],
        id="trust-reorders-close-results",
    ),
    pytest.param(
        [_fused("a", 0.10, 1), _fused("b", 0.09, 2)],
        {"a": 0.6, "b": 0.7},
        0.1,
        [("a", 0.10 * 1.01, 1.01), ("b", 0.09 * 1.02, 1.02)],
        id="small-bias-keeps-order",
    ),
    pytest.param(
        # a = 0.2 × 1, b = 0.1 × 2: equal scores; b has the better single rank
        [_fused("a", 0.2, 3), _fused("b", 0.1, 1)],
        {"b": 1.0},
        2.0,
        [("b", 0.2, 2.0), ("a", 0.2, 1.0)],
        id="tie-breaks-on-best-single-rank",
    ),
    pytest.param(
        [_fused("b", 0.2, 1), _fused("a", 0.1, 1)],
        {"a": 1.0},
        2.0,
        [("a", 0.2, 2.0), ("b", 0.2, 1.0)],
        id="tie-with-equal-ranks-breaks-on-key",
    ),
]


@pytest.mark.parametrize(("fused", "trust", "bias", "expected"), TRUST_CASES)
def test_apply_trust(
    fused: list[Fused], trust: Mapping[str, float | None], bias: float, expected: list[tuple[str, float, float]]
) -> None:
    scored = apply_trust(fused, trust, bias)
    assert [s.key for s in scored] == [key for key, _, _ in expected]
    by_key = {f.key: f for f in fused}
    for s, (_, score, factor) in zip(scored, expected, strict=True):
        assert s.score == pytest.approx(score)
        assert s.trust_factor == pytest.approx(factor)
        # the fused score and its explain trace are carried through unchanged
        assert s.rrf == by_key[s.key].rrf
        assert s.contributions == by_key[s.key].contributions
        assert s.ranks == by_key[s.key].ranks
