"""Fusion of the lexical and dense rankings, with an explain trace, and the trust bias. Pure.

Two methods (SPEC §5 leaves the choice open; `[search] fusion` picks one):

- `relevance` (the default): a calibrated probability that a note answers the query,
      relevance(d) = σ(a·w_emb·cos(d) + b·w_bm25·s(d)/(s(d) + sat) + c)
  where cos(d) is the cosine similarity of the note's best chunk to the query (a note the
  dense side did not return counts the lowest similarity it did return: it is at most that
  near), s(d) its BM25F score (0 when BM25 did not return it), σ the logistic function and
  a, b, c, sat fitted by logistic regression on the tune splits of the evaluation sets
  (scripts/fusion_tune.py). One formula per mode (BM25 only: a = 0; vectors only: b = 0).
  The score means the same across queries, so a default cut can leave out what does not
  match (`--min-score`).
- `rrf`: weighted reciprocal rank fusion, Σ_i w_i / (rrf_k + rank_i(d)).

Then × (1 + trust_bias × (trust − 0.5)), a missing trust counting 0.5, capped at 1 for
relevance (SPEC §5).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Fused:
    key: str
    rrf: float  # the fused score before the trust factor
    contributions: dict[str, float] = field(default_factory=dict)  # ranking name -> w/(k+rank)
    ranks: dict[str, int] = field(default_factory=dict)  # ranking name -> 1-based rank


def rrf(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: float = 60.0) -> list[Fused]:
    """Fuse ranked key lists; ties break on the best single rank, then on the key."""
    contributions: dict[str, dict[str, float]] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, ranking in rankings.items():
        weight = float(weights.get(name, 1.0))
        seen: set[str] = set()
        for position, key in enumerate(ranking, 1):
            if key in seen:
                continue  # a retriever listing a key twice counts it once, at its best rank
            seen.add(key)
            contributions.setdefault(key, {})[name] = weight / (k + position)
            ranks.setdefault(key, {})[name] = position
    fused = [Fused(key, sum(parts.values()), parts, ranks[key]) for key, parts in contributions.items()]
    fused.sort(key=lambda f: (-f.rrf, min(f.ranks.values()), f.key))
    return fused


@dataclass(frozen=True, slots=True)
class Calibration:
    """P(relevant) = σ(a·cos + b·s/(s + sat) + c): see the module docstring."""

    a: float
    b: float
    c: float
    sat: float

    def relevance(self, cos: float, bm25: float, w_emb: float = 1.0, w_bm25: float = 1.0) -> tuple[float, float]:
        """(relevance, logit) of one note."""
        logit = self.a * w_emb * cos + self.b * w_bm25 * bm25 / (bm25 + self.sat) + self.c
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, logit)))), logit


def relevance_fusion(
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
    calibration: Calibration,
    weights: Mapping[str, float],
) -> list[Fused]:
    """Fuse BM25 scores (`lexical`: key -> score, in rank order) and dense cosine distances
    (`dense`: key -> distance, in rank order) into calibrated relevance (module docstring).
    `contributions` holds the parts: cosine similarity, saturated BM25, the logit."""
    cos = {k: 1.0 - d for k, d in dense.items()}
    floor = min(cos.values(), default=0.0)
    ranks: dict[str, dict[str, int]] = {}
    for name, ranking in (("bm25", lexical), ("vector", dense)):
        for position, key in enumerate(ranking, 1):
            ranks.setdefault(key, {})[name] = position
    w_emb, w_bm25 = float(weights.get("vector", 1.0)), float(weights.get("bm25", 1.0))
    fused = []
    for key in ranks:
        c = cos.get(key, floor)
        s = max(0.0, lexical.get(key, 0.0))
        score, logit = calibration.relevance(c, s, w_emb, w_bm25)
        parts = {"cos": c, "bm25": s / (s + calibration.sat), "logit": logit}
        fused.append(Fused(key, score, parts, ranks[key]))
    fused.sort(key=lambda f: (-f.rrf, min(f.ranks.values()), f.key))
    return fused


# Chosen and fitted by scripts/fusion_tune.py on the tune splits of Cranfield, Obsidian Help
# and tldr (docs/BENCHMARKS.md has the figures): the direction a = b (equal parts of cosine
# and saturated BM25, sat 20) ranked best on the tune splits of the three sets among RRF
# (k, weights), convex combinations and query-adaptive mixes; the scale and intercept are
# a logistic fit on every candidate, so the score is P(relevant).
# The cut P ≥ 0.01 costs no recall@5 on any tune or test split and leaves 100% / 94% / 89%
# of the off-topic questions (Cranfield / Obsidian Help / tldr) with no result, but it also
# empties short exact-identifier lookups in very small vaults (a one-word query over eight
# notes scores low on both sides), so it is not on by default yet: `[search] min_score =
# 0.01` or `--min-score 0.01` turns it on. BM25 alone: its probabilities are too low to
# tell a hit from noise.
RECOMMENDED_MIN_SCORE = 0.01
HYBRID = Calibration(a=6.5539, b=6.5539, c=-9.3540, sat=20.0)
BM25_ONLY = Calibration(a=0.0, b=15.7621, c=-11.2608, sat=20.0)
VECTOR_ONLY = Calibration(a=12.4876, b=0.0, c=-9.2645, sat=20.0)


def calibration_for(lexical: bool, dense: bool) -> Calibration:
    """The formula for the retrievers that ran."""
    if lexical and dense:
        return HYBRID
    return VECTOR_ONLY if dense else BM25_ONLY


def trust_factor(trust: float | None, bias: float) -> float:
    value = 0.5 if trust is None else min(1.0, max(0.0, trust))
    return 1.0 + bias * (value - 0.5)


@dataclass(frozen=True, slots=True)
class Scored:
    key: str
    score: float
    rrf: float
    trust_factor: float
    contributions: dict[str, float]
    ranks: dict[str, int]


def apply_trust(
    fused: Sequence[Fused], trust: Mapping[str, float | None], bias: float, cap: float | None = None
) -> list[Scored]:
    """`cap`: the most a score may be (1 for relevance, which stays a probability)."""
    out = []
    for f in fused:
        factor = trust_factor(trust.get(f.key), bias)
        score = f.rrf * factor if cap is None else min(cap, f.rrf * factor)
        out.append(Scored(f.key, score, f.rrf, factor, f.contributions, f.ranks))
    out.sort(key=lambda s: (-s.score, min(s.ranks.values()), s.key))
    return out
