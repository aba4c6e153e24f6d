"""Fusion of the lexical and dense rankings, with an explain trace, and the trust bias. Pure.

Two methods (SPEC §5 leaves the choice open; `[search] fusion` picks one):

- `relevance` (the default): a calibrated probability that a note answers the query,
      relevance(d) = σ(a·w_emb·cos(d) + g(d)·w_bm25·(b·s(d)/(s(d) + sat) + p·cov(d)) + c)
  where cos(d) is the cosine similarity of the note's best chunk to the query (in hybrid
  mode it can count the centroid of a multi-chunk note's chunks, `with_centroids`; the
  shipped fit gives that share 0; a note the dense side did not return counts the lowest
  similarity it did return: it is at most that near), s(d) its BM25F score (0 when BM25
  did not return it), cov(d) the share of the
  query's idf weight its best sentence or line holds (search/passages.py; or `title` of
  its title's, Calibration.coverage_with_title, if that is more), g(d) how much of its
  word matches count (Calibration.lexical_share: 1 from cosine `gate` up, below it the
  larger of cos(d)/gate and cov(d)), σ the logistic function. The direction (a : b : p)
  and sat were chosen for ranking on the tune splits of the evaluation sets, the scale and c fitted by logistic regression on the same
  candidates (tools/evalkit/fusion_tune.py, which writes the numbers to fusion_fit.json),
  so the score is P(relevant). One formula per mode (BM25 only: a = p = 0; vectors only:
  b = p = 0). The score means the same across
  queries, so a default cut leaves out what does not match: first the question's (nothing
  when no result clears it), then a lower bar for the rest (`cut_twice`; `--min-score` is
  one plain bar).
- `rrf`: weighted reciprocal rank fusion, Σ_i w_i / (rrf_k + rank_i(d)).

Then × (1 + trust_bias × (trust − 0.5)), a missing trust counting 0.5, capped at 1 for
relevance (SPEC §5).
"""

from __future__ import annotations

import heapq
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


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
    """P(relevant) = σ(a·cos + g·(b·s/(s + sat) + p·cov) + c), g = lexical_share: see the
    module docstring."""

    a: float
    b: float
    c: float
    sat: float
    p: float = 0.0
    centroid: float = 0.0  # the share of the note's centroid in cos (with_centroids)
    gate: float = 0.0  # the cosine below which word matches count in proportion (lexical_share)
    title: float = 0.0  # how much of its title's coverage a note's coverage counts (coverage_with_title)

    def lexical_share(self, cos: float, cov: float = 0.0) -> float:
        """How much of a note's BM25 and coverage counts: all of it from cosine `gate` up,
        below it the larger of cos/gate and the note's coverage. A note the model reads as
        unrelated to the question does not win on a word they share: "how should I format
        my replies" no longer finds "I should prune lavender before the frost" (cos 0.14)
        above "Prefers concise answers" (cos 0.30); one with a line holding the whole
        question still does (a note not embedded yet: its cosine is unknown). 0: all of it
        always."""
        return lexical_share(cos, cov, self.gate)

    def coverage_with_title(self, body: float, title: float) -> float:
        """A note's coverage: its best line's, or `title` of its title's if that is more.
        An agent's note says its gist in the title ("Bank is ING, savings at Trade
        Republic" over "Keeps three months of expenses..."), which Obsidian shows as the
        note's first line; at half weight, a long descriptive title (Cranfield's) does
        not outweigh the abstract."""
        return coverage_with_title(body, title, self.title)

    def lexical(self, bm25: float, cov: float = 0.0, w_bm25: float = 1.0) -> float:
        """What BM25 and coverage add to the logit before lexical_share."""
        return w_bm25 * (self.b * bm25 / (bm25 + self.sat) + self.p * cov)

    def logit(self, cos: float, bm25: float, cov: float = 0.0, w_emb: float = 1.0, w_bm25: float = 1.0) -> float:
        return self.a * w_emb * cos + self.lexical_share(cos, cov) * self.lexical(bm25, cov, w_bm25) + self.c

    def relevance(
        self, cos: float, bm25: float, w_emb: float = 1.0, w_bm25: float = 1.0, cov: float = 0.0
    ) -> tuple[float, float]:
        """(relevance, logit) of one note."""
        logit = self.logit(cos, bm25, cov, w_emb, w_bm25)
        return sigmoid(logit), logit


def lexical_share(cos: float, cov: float, gate: float) -> float:
    """Calibration.lexical_share, for the tuning tool's replays too (no object per call)."""
    if gate <= 0 or cos >= gate:
        return 1.0
    return min(1.0, max(max(0.0, cos) / gate, cov))


def coverage_with_title(body: float, title: float, share: float) -> float:
    """Calibration.coverage_with_title, for the tuning tool's replays too."""
    return max(body, share * title)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


def relevance_fusion(
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
    calibration: Calibration,
    weights: Mapping[str, float],
    coverage: Callable[[str], float] | None = None,
    exact: int = 30,
) -> list[Fused]:
    """Fuse BM25 scores (`lexical`: key -> score, in rank order) and dense cosine distances
    (`dense`: key -> distance, in rank order) into calibrated relevance (module docstring).
    `coverage(key)` gives a note's passage coverage; it reads the note, so it is asked in
    order of the most a note's score can be with it (full coverage, all of its BM25), and
    only while a note could still enter the best `exact`: those are scored exactly, the
    rest without it (never more). `contributions` holds the parts: cosine similarity, saturated BM25,
    coverage (when computed), the logit."""
    cos = {k: 1.0 - d for k, d in dense.items()}
    floor = min(cos.values(), default=0.0)
    if not cos:  # no note's meaning is known (no dense hit the caller may see): no gate
        calibration = replace(calibration, gate=0.0)
    ranks: dict[str, dict[str, int]] = {}
    for name, ranking in (("bm25", lexical), ("vector", dense)):
        for position, key in enumerate(ranking, 1):
            ranks.setdefault(key, {})[name] = position
    w_emb, w_bm25 = float(weights.get("vector", 1.0)), float(weights.get("bm25", 1.0))
    # key -> (cos, BM25 score, logit without coverage, the most coverage can make of it: all
    # of BM25 and p, lexical_share being at most 1)
    base: dict[str, tuple[float, float, float, float]] = {}
    for key in ranks:
        c = cos.get(key, floor)
        s = max(0.0, lexical.get(key, 0.0))
        most = calibration.logit(c, 0.0, 0.0, w_emb, 0.0) + calibration.lexical(s, 1.0, w_bm25)
        base[key] = (c, s, calibration.logit(c, s, 0.0, w_emb, w_bm25), most)
    covered: dict[str, tuple[float, float]] = {}  # key -> (coverage, the logit with it)
    if coverage is not None and calibration.p * w_bm25 > 0:
        best: list[float] = []  # a min-heap of the best `exact` logits so far
        for key in sorted(base, key=lambda k: (-base[k][3], k)):
            if len(best) >= exact and base[key][3] <= best[0]:
                break  # neither this note nor any after it can reach the best `exact`
            cov = coverage(key)
            logit = calibration.logit(base[key][0], base[key][1], cov, w_emb, w_bm25)
            covered[key] = (cov, logit)
            if len(best) < exact:
                heapq.heappush(best, logit)
            elif logit > best[0]:
                heapq.heapreplace(best, logit)
    fused = []
    for key, (c, s, logit, _) in base.items():
        parts = {"cos": c, "bm25": s / (s + calibration.sat)}
        if key in covered:
            parts["coverage"], logit = covered[key]
        parts["logit"] = logit
        fused.append(Fused(key, sigmoid(logit), parts, ranks[key]))
    fused.sort(key=lambda f: (-f.rrf, min(f.ranks.values()), f.key))
    return fused


def with_centroids(dense: Mapping[str, float], centroid: Mapping[str, float], share: float) -> dict[str, float]:
    """Cosine distances (`dense`: key -> its best chunk's, in rank order) with the note as a
    whole counted in: a note of several chunks (`centroid`: key -> the cosine similarity
    of the mean of its chunk vectors) is `share` its centroid's distance and the rest its
    best chunk's. A passage that happens to echo the query weighs less against a note
    whose every part is about it; a note of one chunk is its chunk. Same order."""
    if share <= 0:
        return dict(dense)
    return {k: (1.0 - share) * d + share * (1.0 - centroid[k]) if k in centroid else d for k, d in dense.items()}


def session_lift(fused: Sequence[Fused], neighbours: Mapping[str, Sequence[str]], share: float) -> list[Fused]:
    """Conversation turns read in their session (search/sessions.py): a turn whose
    neighbour — the turn said just before or after it, `neighbours[key]` — is the likelier
    answer moves `share` of the way up to it, in logit: z' = z + share·max(0, z_n − z).
    "What did Caroline research?" finds Melanie's "What have you been up to?" and the
    answer after it. Only neighbours among `fused` count (the candidates the caller may
    see); each lift is computed from the logits before any lift. `contributions` gains
    `session`, the lift, where there is one. Relevance fusion only (its `logit` part)."""
    logits = {f.key: f.contributions["logit"] for f in fused if "logit" in f.contributions}
    out = []
    for f in fused:
        z = logits.get(f.key)
        near = [logits[n] for n in neighbours.get(f.key, ()) if n in logits and n != f.key]
        lift = share * (max(near) - z) if z is not None and near and max(near) > z else 0.0
        if lift > 0 and z is not None:
            parts = {**f.contributions, "session": lift, "logit": z + lift}
            f = Fused(f.key, sigmoid(z + lift), parts, f.ranks)
        out.append(f)
    out.sort(key=lambda f: (-f.rrf, min(f.ranks.values()), f.key))
    return out


# Chosen and fitted by tools/evalkit/fusion_tune.py on the tune splits of Cranfield, Obsidian
# Help, tldr and LoCoMo (docs/BENCHMARKS.md has the figures), and written with the fit's
# provenance (sets, split, direction, date, git revision) to fusion_fit.json, read here: the
# fitted numbers live in one place, the tool writes them, nobody copies them by hand. Issue 24
# moved the direction from 1 : 2 : 0.6 (sat 5), fitted on sets whose questions share words
# with their answers, to cos + 0.25·bm25sat(20) + 0.7·coverage with conversation turns read
# in their sessions (session_share 0.7): meaning counts more where the words do not match,
# and a reply is found through the question it answers (LoCoMo tune recall@5 0.622 -> 0.680
# offline over cos + 0.4·bm25sat + 0.45·coverage, its paraphrase subset 0.197 -> 0.326).
# `centroid` (with_centroids) is 0 in the shipped fit: the tune-best direction with it (cos
# counting the centroid 0.5, BM25 0.15; tune mean of recall@5 and MRR@10 0.6716 -> 0.6751 in
# the replay) refits the scale so that the README's distractor clears the default cut (its
# example then fails); see docs/BENCHMARKS.md.
# `gate` (Calibration.lexical_share, 0.3 since 2026-11-27): an agent's own short notes asked
# about in other words (tools/evalkit/agent.py) were found by a word such as "user" or
# "should" in an unrelated memory; counting a note's word matches in proportion below cosine
# 0.3 (unless a line holds the question) lifts that set's tune recall@5 without the cut
# 0.838 -> 0.892, MRR@10 0.620 -> 0.693, and moves no other set's view by more than 0.005
# (the scale is fitted on the four other sets). `title` (0.5, the same day, the same rule): a
# note's title counts as one more line for coverage at half its share, which lifts the same
# set's tune recall@5 / MRR@10 to 0.919 / 0.715 and leaves every other set's view as it was.
# The scale and intercept are a logistic fit on every candidate of the tune splits, so the
# score is P(relevant). BM25 alone and vectors alone: their own fits.
FIT_FILE = Path(__file__).with_name("fusion_fit.json")


def _fitted(name: str, fit: Mapping[str, Any]) -> Calibration:
    part = fit[name]
    return Calibration(
        a=part["a"],
        b=part["b"],
        c=part["c"],
        sat=part["sat"],
        p=part.get("p", 0.0),
        centroid=part.get("centroid", 0.0),
        gate=part.get("gate", 0.0),
        title=part.get("title", 0.0),
    )


def _load_fit() -> dict[str, Any]:
    return dict(json.loads(FIT_FILE.read_text(encoding="utf-8")))


_FIT = _load_fit()
HYBRID = _fitted("hybrid", _FIT)
BM25_ONLY = _fitted("bm25_only", _FIT)
VECTOR_ONLY = _fitted("vector_only", _FIT)
# The cut leaves out answers to questions the vault cannot answer (fusion_fit.json's
# provenance says how it was chosen and what it costs).
RECOMMENDED_MIN_SCORE: float = _FIT["min_score"]
# The default cut is first the question's: when no result clears it the vault holds nothing
# on the question and nothing is returned; when one does, results down to this share of it
# are kept too (`cut_twice`). A question a vault answers often has more than one answer, and
# the others sit a little lower: one cut for both hid Cranfield judged abstracts that a
# lower bar keeps, while off-topic questions stay as empty as the cut alone leaves them
# (chosen on the tune splits, fusion_fit.json's provenance). Only a fused score (or a line
# holding the whole question) opens the lower bar, not the dense side's own judgement of
# a note (VECTOR_ONLY): that vouches for its note, while the question's unseen words pull
# every fused score down and a note sharing one word with it would come in above it (the
# README's example: "The user's brother brews his own beer" above *User prefers light reds*).
CUT_FLOOR_SHARE: float = float(_FIT.get("cut_floor_share", 1.0))
# How far a conversation turn moves towards its likelier session neighbour (session_lift),
# chosen on the tune splits with the direction (fusion_fit.json's provenance).
SESSION_SHARE: float = float(_FIT.get("session_share", 0.0))
# The calibration was fitted on vaults of 173 to 7,425 notes. In a handful of notes BM25's
# statistics are thin (a word only one note holds scores a third of what it scores among
# a thousand) and the fit does not hold: an exact one-word lookup in a new 8-note vault
# scores 0.003. So the default cut waits until the caller sees this many notes;
# `--min-score` applies in any vault.
CALIBRATED_MIN_NOTES = 100
# ... and never leaves out a note whose best passage holds every word of the query, or
# whose cosine alone (VECTOR_ONLY) clears the cut (search/hybrid.py): neither let an
# off-topic question of the three sets through, and the second keeps questions put in
# other words than their note's.
FULL_COVERAGE = 1.0 - 1e-9


def calibration_for(lexical: bool, dense: bool) -> Calibration:
    """The formula for the retrievers that ran."""
    if lexical and dense:
        return HYBRID
    return VECTOR_ONLY if dense else BM25_ONLY


def trust_factor(trust: float | None, bias: float) -> float:
    """1 + bias × (trust − 0.5), never below 0: past a bias of ±2 the formula turns negative,
    and a negative score (a probability below 0) dropped the note even at `--min-score 0`."""
    value = 0.5 if trust is None else min(1.0, max(0.0, trust))
    return max(0.0, 1.0 + bias * (value - 0.5))


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


def cut_twice(
    items: Sequence[T],
    clears: Callable[[T, float], bool],
    bar: float,
    share: float,
    opens: Callable[[T, float], bool] | None = None,
) -> list[T]:
    """The default relevance cut (CUT_FLOOR_SHARE): nothing when no item clears `bar`; else
    every item that clears `share` × `bar` if one `opens` the lower bar (any that clears it,
    without `opens`), the items that clear `bar` if none does; in the given order."""
    first = [item for item in items if clears(item, bar)]
    if not first or (opens is not None and not any(opens(item, bar) for item in first)):
        return first
    floor = bar * min(1.0, share)
    return [item for item in items if clears(item, floor)]


# When the default cut leaves nothing of what a search found. Agents read it (a warning in
# --json, on stderr at a terminal; MCP's text too): a question put in other words than its
# note's can score below the bar (docs/BENCHMARKS.md, agent memory) and an agent can look
# further.
CUT_EVERYTHING = (
    "no result cleared the relevance cut; notes scored below it: "
    "--min-score 0 (min_score 0 over MCP) shows them, weakest matches included"
)


def default_cut(
    items: Sequence[T], clears: Callable[[T, float], bool], bar: float, opens: Callable[[T, float], bool]
) -> tuple[list[T], list[str]]:
    """cut_twice at CUT_FLOOR_SHARE, and CUT_EVERYTHING when it leaves none of `items`."""
    kept = cut_twice(items, clears, bar, CUT_FLOOR_SHARE, opens)
    return kept, [CUT_EVERYTHING] if items and not kept else []
