"""memory_search: lexical + dense retrieval, calibrated fusion (fusion.py), trust bias,
near-duplicate collapse, graph expansion and token-budget packing (SPEC §5).

The engine gets its parts as arguments; it never reads configuration or builds an index.
Access rules arrive inside `Filters.readers` and are applied inside both retrievers, so a
note the caller may not see is never a candidate, a neighbour, a snippet or a count.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vaultmem.index.chunking import note_chunks
from vaultmem.index.documents import Filters
from vaultmem.index.fulltext import FullTextIndex
from vaultmem.index.graph import LinkGraph, ReaderLinks
from vaultmem.index.statedb import NoteRecord, StateDB
from vaultmem.index.statedb.centroids import similarities
from vaultmem.index.vectors import DenseHit, Nearest, NoteLookup, VectorIndex
from vaultmem.models import Explain, MemoryResult, Neighbour, RankPart, SearchResult, SessionTurn
from vaultmem.search.background import Background
from vaultmem.search.budget import ESTIMATE, pack
from vaultmem.search.filters import DEFAULT_MODE, MODES
from vaultmem.search.fusion import (
    CALIBRATED_MIN_NOTES,
    FULL_COVERAGE,
    SESSION_SHARE,
    VECTOR_ONLY,
    Calibration,
    Fused,
    Scored,
    apply_trust,
    calibration_for,
    default_cut,
    relevance_fusion,
    rrf,
    session_lift,
    with_centroids,
)
from vaultmem.search.passages import Coverage
from vaultmem.search.results import neighbour, summary_of, text_value
from vaultmem.search.sessions import Sessions
from vaultmem.search.text import SNIPPET_CHARS, NearDuplicates, Snippets, shorten

CANDIDATES_MIN = 50


@dataclass(frozen=True, slots=True)
class SearchOptions:
    mode: str = DEFAULT_MODE
    limit: int = 10
    bm25_weight: float = 1.0
    embedding_weight: float = 1.0
    rrf_k: float = 60.0
    trust_bias: float = 0.2
    graph_depth: int = 1
    include_parent: bool = True
    include_links_in: bool = True
    include_links_out: bool = True
    neighbour_cap: int = 5  # per relation: an answer an agent can afford (issue 11)
    # a conversation turn's share of the way up to its likelier session neighbour (fusion.py)
    session_share: float = SESSION_SHARE
    budget_tokens: int | None = None
    explain: bool = False
    dedupe_threshold: float = 0.85
    fusion: str = "relevance"  # or "rrf" (search/fusion.py)
    min_score: float | None = None  # results scoring below are left out (--min-score); None: the default cut
    # [search] min_score: the vault's default cut, applied where the score is a calibrated
    # probability with a dense side (BM25 alone scores real hits far below any useful cut)
    default_min_score: float | None = None


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
    # links as the caller resolves them (index/graph.py ReaderLinks); None: as indexed
    reader_links: Callable[[], ReaderLinks] | None = None


@dataclass(slots=True)
class _Candidate:
    rec: NoteRecord
    scored: Scored
    body: str
    lexical: Any = None
    dense: DenseHit | None = None
    duplicates: list[str] = field(default_factory=list)


Relations = dict[str, list[tuple[str, int]]]  # relation -> [(path, hops)]; "context": [(path, offset)]
RELATIONS = ("parents", "links_in", "links_out")
CONTEXT_CHARS = 300  # of a context turn's text: a turn is a few sentences


def run_search(parts: Retrievers, query: str, filters: Filters, opts: SearchOptions) -> SearchResult:
    """Retrieve, fuse, pick distinct results, expand them through the graph, pack them."""
    return _Search(parts, query, filters, opts).run()


class _Search:
    """One search. The steps share the bodies, rows and snippets each reads once."""

    def __init__(self, parts: Retrievers, query: str, filters: Filters, opts: SearchOptions) -> None:
        self.parts, self.query, self.filters, self.opts = parts, query, filters, opts
        self.depth = max(opts.limit * 5, CANDIDATES_MIN)
        self.rankings: dict[str, list[str]] = {}
        self.lexical: dict[str, Any] = {}
        self.dense: dict[str, DenseHit] = {}
        self.query_vector: list[float] | None = None
        self.terms: list[str] = []
        self.analyzer = parts.fulltext.term_map if parts.fulltext else None
        self.bodies: dict[str, str | None] = {}
        self.lexical_snippets: dict[str, str] = {}
        self.twins = NearDuplicates(opts.dedupe_threshold)
        self.neighbour_records: dict[str, NoteRecord] = {}
        # --min-score, else the vault's cut where the score has a dense side (RRF scores and
        # BM25-alone probabilities sit far below any cut that means something) and the vault
        # is large enough for the calibration (fusion.CALIBRATED_MIN_NOTES)
        default = opts.default_min_score if opts.fusion == "relevance" and opts.mode != "bm25" else None
        if opts.min_score is None and default and not self._calibrated():
            default = None
        self.min_score = opts.min_score if opts.min_score is not None else default or 0.0
        # The default cut leaves out what does not match, and two kinds of note match
        # whatever their fused score: one with a sentence or line holding every word of the
        # query (a rare identifier, `ed25519`, scores low on both sides), and one the dense
        # side alone rates at least as likely (fusion.VECTOR_ONLY: a question in other words
        # than the note's, "which family member has a cashew allergy?" for "my sister cannot
        # eat cashews", where the query's unseen words weigh the fused score down). Neither
        # lets an off-topic question of the evaluation sets through. Once one result opens
        # it, results down to CUT_FLOOR_SHARE of it stay (fusion.cut_twice).
        self.default_cut = opts.min_score is None and self.min_score > 0
        self.records: dict[str, NoteRecord] = {}  # every candidate's row
        self.coverages: dict[str, float] = {}  # passage coverage, by path, computed once
        self.passage_terms: dict[str, tuple[str, str] | None] = {}  # path -> (hash, terms) as indexed
        self._coverage: Coverage | None = None  # the query's, made on first use
        self.ranked: list[str] = []  # the results' paths in rank order
        self.sessions = Sessions.of(parts.db)
        self._returned: dict[int, frozenset[str]] = {}
        self._snippets: Snippets | None = None
        self._shown_rows: dict[tuple[object, ...], bool] = {}

    def run(self) -> SearchResult:
        started = time.perf_counter()
        self.retrieve()
        self.records = self.parts.db.by_paths(dict.fromkeys([*self.lexical, *self.dense]))
        fused = self.fuse()
        records = self.records
        # Belt and braces: the retrievers already filtered by access; a row that changed
        # since (or anything unexpected) is dropped here rather than shown.
        fused = [f for f in fused if f.key in records and self._shown(records[f.key])]
        fused = self.in_sessions(fused)
        cap = 1.0 if self.opts.fusion == "relevance" else None
        scored = apply_trust(fused, {k: r.trust for k, r in records.items()}, self.opts.trust_bias, cap)
        warnings: list[str] = []
        if self.default_cut:  # with fusion.CUT_EVERYTHING when it leaves nothing
            scored, warnings = default_cut(scored, self._clears, self.min_score, self._opens)
        else:  # an explicit --min-score (or none): one plain bar
            scored = [s for s in scored if s.score >= self.min_score]
        chosen, collapsed = self.choose(scored, records)
        items = [(cand, self.snippet_for(cand), rel) for cand, rel in zip(chosen, self.expand(chosen), strict=True)]
        self.ranked = [cand.rec.path for cand in chosen]
        packed = pack(items, self.render, self.opts.budget_tokens)
        if self.opts.budget_tokens is not None and packed.dropped:
            warnings.append(f"{packed.dropped} results left out to stay within {self.opts.budget_tokens} tokens")
        return SearchResult(
            query=self.query,
            mode=self.opts.mode,
            results=packed.results,
            returned=len(packed.results),
            tokens_used=packed.tokens_used,
            token_estimate=ESTIMATE,
            search_time_ms=round((time.perf_counter() - started) * 1000, 1),
            budget_tokens=self.opts.budget_tokens,
            collapsed_duplicates=collapsed or None,
            warnings=warnings,
        )

    def fuse(self) -> list[Fused]:
        """The candidates fused (search/fusion.py)."""
        weights = {"bm25": self.opts.bm25_weight, "vector": self.opts.embedding_weight}
        if self.opts.fusion == "rrf":
            return rrf(self.rankings, weights, self.opts.rrf_k)
        lexical = {p: float(h.score) for p, h in self.lexical.items()}
        dense = {p: h.distance for p, h in self.dense.items()}
        coverage = None
        if self._uses_coverage():

            def coverage(path: str) -> float:
                rec = self.records.get(path)
                return self.coverage_of(rec) if rec is not None else 0.0

        calibration = self._calibration()
        near: dict[str, float] = {}
        if calibration.centroid > 0 and dense and self.query_vector is not None:
            near = similarities(self.query_vector, self.parts.db.centroids(dense))
            dense = with_centroids(dense, near, calibration.centroid)
        # Enough exact scores for the results and the near-duplicates they may collapse.
        exact = max(3 * self.opts.limit, 30)
        fused = relevance_fusion(lexical, dense, calibration, weights, coverage, exact)
        for f in fused:
            if f.key in near:  # --explain: what the note as a whole added to `cos`
                f.contributions["centroid"] = near[f.key]
        return fused

    def in_sessions(self, fused: list[Fused]) -> list[Fused]:
        """Conversation turns read in their sessions (fusion.session_lift); the candidates
        only, which are notes the caller may see."""
        if self.opts.fusion != "relevance" or self.opts.session_share <= 0:
            return fused
        neighbours = {}
        for f in fused:
            rec = self.records[f.key]
            if rec.type == "conversation":
                before, after = self.sessions.around(rec, 1)
                neighbours[f.key] = [*before, *after]
        return session_lift(fused, neighbours, self.opts.session_share) if neighbours else fused

    def _calibration(self) -> Calibration:
        # Which formula: the retrievers asked for, not which happened to return something.
        return calibration_for(self.opts.mode != "vector", self.opts.mode != "bm25")

    def _uses_coverage(self) -> bool:
        return bool(
            self.opts.fusion == "relevance"
            and self._calibration().p
            and self.parts.fulltext is not None
            and self.analyzer is not None
        )

    def coverage_of(self, rec: NoteRecord) -> float:
        """The passage coverage of a candidate the caller may see (0 for any other)."""
        found = self.coverages.get(rec.path)
        if found is None:
            if self._coverage is None:
                weights = self.parts.fulltext.term_weights(self.query, self.filters) if self.parts.fulltext else {}
                self._coverage = Coverage(weights, self.analyzer) if self.analyzer is not None else None
            found = self._coverage_now(rec) if self._shown(rec) and self._coverage is not None else 0.0
            self.coverages[rec.path] = found
        return found

    def _coverage_now(self, rec: NoteRecord) -> float:
        """Its body's, or its title's at the formula's share (Calibration.coverage_with_title)."""
        assert self._coverage is not None
        body, cal = self._body_coverage(rec), self._calibration()
        if rec.title and cal.title > body:  # else the title cannot count more than the body
            return cal.coverage_with_title(body, self._coverage.measure(rec.title))
        return body

    def _body_coverage(self, rec: NoteRecord) -> float:
        """From the note's passage terms as indexed (a few string searches), else from its
        body (a scan of the file: a note indexed without them, or changed since)."""
        assert self._coverage is not None
        if rec.path not in self.passage_terms:
            # every candidate's known so far at once: one query instead of one per note
            wanted = [p for p in dict.fromkeys([*self.lexical, *self.dense, rec.path]) if p not in self.passage_terms]
            found = self.parts.db.passage_terms(wanted)
            for path in wanted:
                self.passage_terms[path] = found.get(path)
        row = self.passage_terms[rec.path]
        if row is not None and row[0] == rec.hash:
            return self._coverage.of_terms(row[1])
        body = self.body_of(rec)
        return self._coverage(body) if body else 0.0

    def _lexical_part(self, path: str) -> float:
        """What BM25 and coverage add to a candidate's logit before its cosine is known
        (fusion.Calibration.lexical)."""
        score = max(0.0, float(self.lexical[path].score))
        return self._calibration().lexical(score, self.coverages.get(path, 0.0), self.opts.bm25_weight)

    def _opens(self, s: Scored, bar: float) -> bool:
        """Clears `bar` by its score or a line holding the whole question (see __init__)."""
        return s.score >= bar or s.contributions.get("coverage", 0.0) >= FULL_COVERAGE

    def _clears(self, s: Scored, bar: float) -> bool:
        """Kept by the default cut at `bar`: `_opens`, or the dense side alone rates it so."""
        if self._opens(s, bar):
            return True
        hit = self.dense.get(s.key)  # its best chunk's similarity, as VECTOR_ONLY was fitted
        return hit is not None and VECTOR_ONLY.relevance(1.0 - hit.distance, 0.0)[0] >= bar

    def _calibrated(self) -> bool:
        """Whether the caller sees enough notes for the default cut (fusion.py)."""
        fulltext = self.parts.fulltext
        if fulltext is None:
            return False
        seen = Filters(readers=self.filters.readers, now=self.filters.now, include_expired=True)
        return fulltext.count(seen) >= CALIBRATED_MIN_NOTES

    def _shown(self, rec: NoteRecord) -> bool:
        key = (rec.path, rec.status, rec.scope, rec.owner, rec.project, rec.placed)  # what access reads
        shown = self._shown_rows.get(key)
        if shown is None:  # the access rules are asked once per note (~6 µs a time)
            shown = self._shown_rows[key] = rec.status == "note" and self.parts.visible(rec)
        return shown

    def body_of(self, rec: NoteRecord) -> str | None:
        if rec.path not in self.bodies:
            self.bodies[rec.path] = self.parts.read_body(rec)
        return self.bodies[rec.path]

    def retrieve(self) -> None:
        """BM25 on this thread, the dense side beside it (embedding the query and Chroma's
        search release the GIL); meanwhile the best lexical hits are read ahead."""
        parts, mode, opts = self.parts, self.opts.mode, self.opts
        nearest: Background[Nearest] | None = None
        if mode in ("hybrid", "vector") and parts.dense is not None:
            dense_parts = parts.dense
            nearest = Background(lambda: dense_parts.vectors.nearest(dense_parts.embed_query(self.query), self.depth))
        if mode in ("hybrid", "bm25") and parts.fulltext is not None:
            self.terms = parts.fulltext.terms(self.query)
            hits = parts.fulltext.search(self.query, self.filters, self.depth)
            self.lexical = {h.path: h for h in hits}
            self.rankings["bm25"] = [h.path for h in hits]
        if nearest is not None and self.lexical:
            # While the dense search runs, do for the best lexical hits what the fusion
            # would do: their rows and passage coverage (from the indexed passage terms: a
            # query of the state db); then, for as long as the dense side still runs, what
            # making them results would (most are): bodies, near-duplicate signatures and
            # snippets. Only notes the caller may see.
            best = list(self.lexical)[: 3 * opts.limit]
            ahead = parts.db.by_paths(best)
            if self._uses_coverage():
                for path in best:
                    rec = ahead.get(path)
                    if rec is not None:
                        self.coverage_of(rec)
                # The likeliest results first: by the fused score's lexical part (coverage
                # weighs more than BM25 there), twice as many of them end up results as of
                # BM25's own first ten.
                best.sort(key=self._lexical_part, reverse=True)
            for path in best[: opts.limit]:
                if nearest.done():
                    break  # the rest for the results only (snippet_for, choose)
                rec = ahead.get(path)
                body = self.body_of(rec) if rec is not None and self._shown(rec) else None
                if body is not None:
                    self.twins.prepare(path, body)
                    self.lexical_snippets[path] = self.snippet_of(body)
        if nearest is not None and parts.dense is not None:
            near = nearest.result()
            self.query_vector = near.vector
            dhits = parts.dense.vectors.pick(near, self.filters, self.depth, parts.dense.notes)
            self.dense = {h.path: h for h in dhits}
            self.rankings["vector"] = [h.path for h in dhits]

    def choose(self, scored: list[Scored], records: dict[str, NoteRecord]) -> tuple[list[_Candidate], int]:
        """Bodies in rank order until `limit` distinct results: a body that nearly repeats a
        better-ranked one collapses into it. Returns the results and how many collapsed."""
        chosen: list[_Candidate] = []
        by_path: dict[str, _Candidate] = {}
        collapsed = 0
        for s in scored:
            if len(chosen) >= self.opts.limit:
                break
            rec = records[s.key]
            body = self.body_of(rec)
            if body is None:
                continue
            twin = self.twins.first_twin(rec.path, body)
            if twin is None:
                cand = _Candidate(rec, s, body, self.lexical.get(s.key), self.dense.get(s.key))
                chosen.append(cand)
                by_path[rec.path] = cand
            else:
                collapsed += 1
                by_path[twin].duplicates.append(rec.path)
        return chosen, collapsed

    def _visible_path(self, path: str) -> bool:
        rec = self.neighbour_records.get(path)
        if rec is None:
            rec = self.parts.db.get(path)
            if rec is None:
                return False
            self.neighbour_records[path] = rec
        return self._shown(rec)

    def expand(self, chosen: list[_Candidate]) -> list[Relations]:
        """Parents, links in and links out of each result, only notes the caller may see."""
        opts = self.opts
        graph = self.parts.graph() if chosen and opts.graph_depth > 0 else None
        reader = self.parts.reader_links() if graph is not None and self.parts.reader_links else None
        wanted = dict(zip(RELATIONS, (opts.include_parent, opts.include_links_in, opts.include_links_out), strict=True))
        if graph is not None:  # the rows of the first hop's notes in one query, not one each
            near = {
                p for c in chosen for name in RELATIONS if wanted[name] for p in graph.step(c.rec.path, name, reader)
            }
            self.neighbour_records.update(self.parts.db.by_paths(p for p in near if p not in self.neighbour_records))
        return [
            {
                **{
                    name: graph.expand(
                        cand.rec.path, name, opts.graph_depth, self._visible_path, opts.neighbour_cap, reader
                    )
                    if wanted[name] and graph is not None
                    else []
                    for name in RELATIONS
                },
                "context": self.context_of(cand.rec),
            }
            for cand in chosen
        ]

    def context_of(self, rec: NoteRecord) -> list[tuple[str, int]]:
        """A conversation result's session turns, `graph_depth` each side, as (path, offset):
        the nearest first (-1, 1, -2, 2, …), so that a budget that keeps one keeps the turn
        before, which is what a reply answers. Only turns the caller may see."""
        before, after = self.sessions.around(rec, self.opts.graph_depth)
        pairs = [(p, -i) for i, p in enumerate(before, 1)] + [(p, i) for i, p in enumerate(after, 1)]
        pairs.sort(key=lambda pair: (abs(pair[1]), pair[1]))
        return [(p, offset) for p, offset in pairs if self._visible_path(p)]

    def snippet_for(self, cand: _Candidate) -> str:
        if cand.lexical is not None and cand.rec.path in self.lexical_snippets:
            return self.lexical_snippets[cand.rec.path]
        if cand.lexical is None and cand.dense is not None:
            chunks = note_chunks(cand.body, str((cand.rec.extra or {}).get("prose") or ""))
            if 0 <= cand.dense.chunk < len(chunks):
                return self.snippet_of(chunks[cand.dense.chunk].text)
        return self.snippet_of(cand.body)

    def snippet_of(self, text: str) -> str:
        if self._snippets is None:  # the query's terms are known once BM25 has run
            self._snippets = Snippets(self.terms, self.analyzer)
        return self._snippets(text)

    def render(
        self, item: tuple[_Candidate, str, Relations], snip: int | None, cap: int | None, returned: int
    ) -> MemoryResult:
        """A result at a leanness the budget packer asks for: snippet cut to `snip`
        characters at a sentence or word boundary, at most `cap` neighbours per relation
        (None: as produced). A neighbour that is one of the first `returned` results is
        referred to by its id alone."""
        cand, snippet, rel = item
        text = snippet if snip is None else shorten(snippet, snip, sentences=True) if snip > 0 else ""
        results = self._returned.get(returned)
        if results is None:
            results = self._returned[returned] = frozenset(self.ranked[:returned])

        def near(name: str) -> list[Neighbour]:
            pairs = rel[name] if cap is None else rel[name][:cap]
            return [neighbour(self.neighbour_records[p], hops, p in results) for p, hops in pairs]

        def turns() -> list[SessionTurn]:
            pairs = rel["context"] if cap is None else rel["context"][:cap]
            limit = CONTEXT_CHARS if snip is None else min(snip, CONTEXT_CHARS)
            return [self.turn(self.neighbour_records[p], offset, p in results, limit) for p, offset in pairs]

        return MemoryResult(
            summary=summary_of(cand.rec, round(cand.scored.score, 6), text or None),
            parents=near("parents"),
            links_in=near("links_in"),
            links_out=near("links_out"),
            tags=list(cand.rec.tags),
            context=turns(),
            duplicates=list(cand.duplicates),
            explain=_explain(cand) if self.opts.explain else None,
        )

    def turn(self, rec: NoteRecord, offset: int, is_result: bool, limit: int) -> SessionTurn:
        """A context turn: `{id, offset}` for one of the results, else its role and text."""
        if is_result:
            return SessionTurn(rec.id or "", offset)
        body = (self.body_of(rec) or "").strip()
        text = shorten(body, limit, sentences=True) if limit > 0 else ""
        return SessionTurn(rec.id or "", offset, text_value((rec.extra or {}).get("role")), text or None)


def _explain(cand: _Candidate) -> Explain:
    s = cand.scored
    lex = cand.lexical
    dense = cand.dense
    return Explain(
        bm25=RankPart(lex.rank, score=round(lex.score, 4)) if lex is not None else None,
        vector=RankPart(dense.rank, distance=round(dense.distance, 4)) if dense is not None else None,
        parts={name: round(value, 6) for name, value in s.contributions.items()},
        fused=round(s.rrf, 6),
        trust_factor=round(s.trust_factor, 4),
        final=round(s.score, 6),
    )


__all__ = ["MODES", "SNIPPET_CHARS", "Retrievers", "SearchOptions", "run_search"]
