"""Weighted reciprocal rank fusion with an explain trace, and the trust bias. Pure.

score(d) = Σ_i w_i / (rrf_k + rank_i(d)) over the rankings that contain d, then
× (1 + trust_bias × (trust − 0.5)), a missing trust counting 0.5 (SPEC §5).
"""

from __future__ import annotations

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


def apply_trust(fused: Sequence[Fused], trust: Mapping[str, float | None], bias: float) -> list[Scored]:
    out = []
    for f in fused:
        factor = trust_factor(trust.get(f.key), bias)
        out.append(Scored(f.key, f.rrf * factor, f.rrf, factor, f.contributions, f.ranks))
    out.sort(key=lambda s: (-s.score, min(s.ranks.values()), s.key))
    return out
