"""The metrics of the evaluation, as pure functions (tested against hand-computed values)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

SPLITS = ("tune", "test", "all")


def _first_occurrences(ranked: Sequence[str], k: int) -> list[str | None]:
    """The top k with repeats blanked out: a note returned twice is credited once and its
    second copy still uses up a slot, as it would on the user's screen."""
    seen: set[str] = set()
    top: list[str | None] = []
    for item in ranked[:k]:
        top.append(None if item in seen else item)
        seen.add(item)
    return top


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain with linear gains and the log2(rank + 1) discount."""
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


def ndcg_at_k(ranked: Sequence[str], qrels: Mapping[str, float], k: int = 10) -> float:
    """nDCG@k of a ranking; the ideal DCG comes from the judged gains, not from the ranking."""
    ideal = dcg(sorted((gain for gain in qrels.values() if gain > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([0.0 if item is None else qrels.get(item, 0.0) for item in _first_occurrences(ranked, k)]) / ideal


def recall_at_k(ranked: Sequence[str], relevant: set[str] | frozenset[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def hit_at_k(ranked: Sequence[str], relevant: set[str] | frozenset[str], k: int) -> float:
    """Known-item recall@k: 1 when any relevant item is in the top k, else 0 (a query that
    more than one page answers is found once one of them is)."""
    return 1.0 if any(item in relevant for item in ranked[:k]) else 0.0


def mrr_at_k(ranked: Sequence[str], relevant: set[str] | frozenset[str], k: int = 10) -> float:
    """Reciprocal rank of the first relevant item within the top k, else 0."""
    for rank, item in enumerate(ranked[:k], start=1):
        if item in relevant:
            return 1.0 / rank
    return 0.0


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


# How each set is judged: "graded" (Cranfield: nDCG@10 too, recall@5 = share of the judged docs
# in the top 5), "answer" (one answering note: recall@5), "known-item" (recall@5 = a hit),
# "evidence" (LoCoMo: recall@k = any evidence turn in the top k, at 5 and 10).
MEASURES = {
    "graded": ("ndcg@10", "recall@5", "mrr@10"),
    "answer": ("recall@5", "mrr@10"),
    "known-item": ("recall@5", "mrr@10"),
    "evidence": ("recall@5", "recall@10", "mrr@10"),
}
HIT_MEASURES = ("known-item", "evidence")


def query_metrics(ranked: Sequence[str], qrels: Mapping[str, float], measure: str) -> dict[str, float]:
    """The metrics of one ranking under `measure`; any judged item with gain >= 1 is relevant."""
    relevant = {item for item, gain in qrels.items() if gain >= 1}
    out: dict[str, float] = {}
    if measure == "graded":
        out["ndcg@10"] = ndcg_at_k(ranked, qrels, 10)
    recall = hit_at_k if measure in HIT_MEASURES else recall_at_k
    out["recall@5"] = recall(ranked, relevant, 5)
    if "recall@10" in MEASURES[measure]:
        out["recall@10"] = recall(ranked, relevant, 10)
    out["mrr@10"] = mrr_at_k(ranked, relevant, 10)
    return out


def paired_bootstrap(differences: Sequence[float], samples: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    """(mean, low, high): the mean of per-question differences between two systems on the
    same questions and its 95% percentile interval over `samples` resamplings of the
    questions (seeded: the same figures every run). An interval that holds 0 says the two
    are not told apart by these questions."""
    import numpy as np

    values = np.asarray(differences, dtype=float)
    if values.size == 0:
        return 0.0, 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(samples, values.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(values.mean()), float(low), float(high)


def empty_share(result_counts: Sequence[int]) -> float:
    """Share of the queries that got no result at all (the off-topic rate)."""
    return mean([1.0 if count == 0 else 0.0 for count in result_counts])


def answer_tokens(answer: Any) -> float:
    """Tokens of a search answer as an agent reads it: characters of the CLI's compact JSON / 4."""
    return len(json.dumps(answer, ensure_ascii=False, separators=(",", ":"))) / 4
