"""memory_search: lexical + dense retrieval, RRF fusion, trust bias, near-duplicate
collapse, graph expansion and token-budget packing (SPEC §5).

The engine gets its parts as arguments; it never reads configuration or builds an index.
Access rules arrive inside `Filters.readers` and are applied inside both retrievers, so a
note the caller may not see is never a candidate, a neighbour, a snippet or a count.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from vaultmem.index.chunking import note_chunks
from vaultmem.index.documents import Filters
from vaultmem.index.fulltext import FullTextIndex
from vaultmem.index.graph import LinkGraph
from vaultmem.index.statedb import NoteRecord, StateDB
from vaultmem.index.vectors import DenseHit, Nearest, NoteLookup, VectorIndex
from vaultmem.models import NoteSummary
from vaultmem.search.budget import ESTIMATE, pack
from vaultmem.search.fusion import Scored, apply_trust, rrf
from vaultmem.search.text import SNIPPET_CHARS, NearDuplicates, best_passage, shorten

MODES = ("hybrid", "bm25", "vector")
T = TypeVar("T")
CANDIDATES_MIN = 50


@dataclass(frozen=True, slots=True)
class SearchOptions:
    mode: str = "hybrid"
    limit: int = 10
    bm25_weight: float = 1.0
    embedding_weight: float = 1.0
    rrf_k: float = 60.0
    trust_bias: float = 0.2
    graph_depth: int = 1
    include_parent: bool = True
    include_links_in: bool = True
    include_links_out: bool = True
    neighbour_cap: int = 10
    budget_tokens: int | None = None
    explain: bool = False
    dedupe_threshold: float = 0.85


@dataclass(frozen=True, slots=True)
class Dense:
    vectors: VectorIndex
    embed_query: Callable[[str], list[float]]
    notes: NoteLookup  # the state db's view of each chunk's note, for filtering (vectors.py)


@dataclass(frozen=True, slots=True)
class Retrievers:
    db: StateDB
    fulltext: FullTextIndex | None
    dense: Dense | None
    graph: Callable[[], LinkGraph]
    read_body: Callable[[NoteRecord], str | None]
    visible: Callable[[NoteRecord], bool]


@dataclass(slots=True)
class _Candidate:
    rec: NoteRecord
    scored: Scored
    body: str
    lexical: Any = None
    dense: DenseHit | None = None
    duplicates: list[str] = field(default_factory=list)


class Background(Generic[T]):
    """A call on a thread of its own; `result()` joins it and returns or raises what it did."""

    def __init__(self, call: Callable[[], T]) -> None:
        self._call = call
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="vaultmem-dense", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._call()
        except BaseException as exc:  # handed to the caller of result()
            self._error = exc

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return cast(T, self._value)


def summary_of(rec: NoteRecord, score: float | None = None, snippet: str | None = None) -> NoteSummary:
    return NoteSummary(
        id=rec.id or "",
        title=rec.title or "",
        type=rec.type or "note",
        scope=rec.scope or "shared",
        path=rec.path,
        owner=rec.owner,
        project=rec.project,
        score=score,
        snippet=snippet,
        trust_score=rec.trust,
        created=rec.created,
        updated=rec.updated,
    )


def _neighbour(rec: NoteRecord, hops: int) -> dict[str, Any]:
    return {**summary_of(rec).to_dict(), "hops": hops}


def run_search(parts: Retrievers, query: str, filters: Filters, opts: SearchOptions) -> dict[str, Any]:
    started = time.perf_counter()
    warnings: list[str] = []
    mode = opts.mode
    depth = max(opts.limit * 5, CANDIDATES_MIN)
    rankings: dict[str, list[str]] = {}
    lexical: dict[str, Any] = {}
    dense: dict[str, DenseHit] = {}
    terms: list[str] = []
    nearest: Background[Nearest] | None = None
    if mode in ("hybrid", "vector") and parts.dense is not None:
        dense_parts = parts.dense
        # Embedding the query and Chroma's search release the GIL: they run beside BM25.
        nearest = Background(lambda: dense_parts.vectors.nearest(dense_parts.embed_query(query), depth))
    if mode in ("hybrid", "bm25") and parts.fulltext is not None:
        terms = parts.fulltext.terms(query)
        hits = parts.fulltext.search(query, filters, depth)
        lexical = {h.path: h for h in hits}
        rankings["bm25"] = [h.path for h in hits]
    analyzer = parts.fulltext.term_map if parts.fulltext else None
    bodies: dict[str, str | None] = {}
    lexical_snippets: dict[str, str] = {}
    twins = NearDuplicates(opts.dedupe_threshold)

    def body_of(rec: NoteRecord) -> str | None:
        if rec.path not in bodies:
            bodies[rec.path] = parts.read_body(rec)
        return bodies[rec.path]

    if nearest is not None and lexical:
        # While the dense search runs, do for the best lexical hits what the fusion below
        # would do if they make the cut (most do): their rows, bodies, near-duplicate
        # signatures and snippets. Only notes the caller may see: the filters already
        # held for these hits, and `visible` is checked again.
        ahead = list(lexical)[: opts.limit]
        for path, rec in parts.db.by_paths(ahead).items():
            if rec.status != "note" or not parts.visible(rec):
                continue
            body = body_of(rec)
            if body is not None:
                twins.prepare(path, body)
                lexical_snippets[path] = best_passage(body, terms, analyzer)
    if nearest is not None and parts.dense is not None:
        dhits = parts.dense.vectors.pick(nearest.result(), filters, depth, parts.dense.notes)
        dense = {h.path: h for h in dhits}
        rankings["vector"] = [h.path for h in dhits]
    weights = {"bm25": opts.bm25_weight, "vector": opts.embedding_weight}
    fused = rrf(rankings, weights, opts.rrf_k)
    records = parts.db.by_paths(f.key for f in fused)
    # Belt and braces: the retrievers already filtered by access; a row that changed since
    # (or anything unexpected) is dropped here rather than shown.
    fused = [f for f in fused if f.key in records and records[f.key].status == "note" and parts.visible(records[f.key])]
    scored = apply_trust(fused, {k: r.trust for k, r in records.items()}, opts.trust_bias)

    # Read bodies in rank order only until `limit` distinct results are found: a body that
    # nearly repeats a better-ranked one collapses into it.
    chosen: list[_Candidate] = []
    by_path: dict[str, _Candidate] = {}
    dropped: dict[str, str] = {}
    for s in scored:
        if len(chosen) >= opts.limit:
            break
        rec = records[s.key]
        body = body_of(rec)
        if body is None:
            continue
        twin = twins.first_twin(rec.path, body)
        if twin is None:
            cand = _Candidate(rec, s, body, lexical.get(s.key), dense.get(s.key))
            chosen.append(cand)
            by_path[rec.path] = cand
        else:
            dropped[rec.path] = twin
            by_path[twin].duplicates.append(rec.path)

    graph = parts.graph() if chosen and opts.graph_depth > 0 else None
    neighbour_records: dict[str, NoteRecord] = {}

    def visible_path(path: str) -> bool:
        rec = neighbour_records.get(path)
        if rec is None:
            rec = parts.db.get(path)
            if rec is None:
                return False
            neighbour_records[path] = rec
        return rec.status == "note" and parts.visible(rec)

    relations = [
        ("parents", opts.include_parent),
        ("links_in", opts.include_links_in),
        ("links_out", opts.include_links_out),
    ]
    expanded: list[dict[str, list[tuple[str, int]]]] = []
    for cand in chosen:
        rel: dict[str, list[tuple[str, int]]] = {}
        for name, wanted in relations:
            if wanted and graph is not None:
                rel[name] = graph.expand(cand.rec.path, name, opts.graph_depth, visible_path, opts.neighbour_cap)
            else:
                rel[name] = []
        expanded.append(rel)

    def snippet_for(cand: _Candidate) -> str:
        if cand.lexical is not None and cand.rec.path in lexical_snippets:
            return lexical_snippets[cand.rec.path]
        if cand.lexical is None and cand.dense is not None:
            chunks = note_chunks(cand.body, str((cand.rec.extra or {}).get("prose") or ""))
            if 0 <= cand.dense.chunk < len(chunks):
                return best_passage(chunks[cand.dense.chunk].text, terms, analyzer)
        return best_passage(cand.body, terms, analyzer)

    items = [(cand, snippet_for(cand), rel) for cand, rel in zip(chosen, expanded, strict=True)]

    def render(
        item: tuple[_Candidate, str, dict[str, list[tuple[str, int]]]], snip: int | None, cap: int | None
    ) -> dict[str, Any]:
        cand, snippet, rel = item
        text = snippet if snip is None else shorten(snippet, snip) if snip > 0 else ""
        result: dict[str, Any] = {
            "summary": summary_of(cand.rec, round(cand.scored.score, 6), text or None).to_dict(),
        }
        for name, _ in relations:
            pairs = rel[name] if cap is None else rel[name][:cap]
            result[name] = [_neighbour(neighbour_records[p], hops) for p, hops in pairs]
        result["tags"] = list(cand.rec.tags)
        if cand.duplicates:
            result["duplicates"] = cand.duplicates
        if opts.explain:
            result["explain"] = _explain(cand)
        return result

    packed = pack(items, render, opts.budget_tokens)
    if opts.budget_tokens is not None and packed.dropped:
        warnings.append(f"{packed.dropped} results left out to stay within {opts.budget_tokens} tokens")
    out: dict[str, Any] = {
        "query": query,
        "mode": mode,
        "results": packed.results,
        "returned": len(packed.results),
        "tokens_used": packed.tokens_used,
        "token_estimate": ESTIMATE,
        "search_time_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    if opts.budget_tokens is not None:
        out["budget_tokens"] = opts.budget_tokens
    if dropped:
        out["collapsed_duplicates"] = len(dropped)
    if warnings:
        out["warnings"] = warnings
    return out


def _explain(cand: _Candidate) -> dict[str, Any]:
    s = cand.scored
    lex = cand.lexical
    dense = cand.dense
    return {
        "bm25": {"rank": lex.rank, "score": round(lex.score, 4)} if lex is not None else None,
        "vector": {"rank": dense.rank, "distance": round(dense.distance, 4)} if dense is not None else None,
        "rrf": {name: round(value, 6) for name, value in s.contributions.items()},
        "rrf_total": round(s.rrf, 6),
        "trust_factor": round(s.trust_factor, 4),
        "final": round(s.score, 6),
    }


__all__ = ["MODES", "SNIPPET_CHARS", "Retrievers", "SearchOptions", "run_search", "summary_of"]
