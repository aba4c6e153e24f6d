"""The `search` use case: bring every index up to date, build the caller's filters, run
the hybrid engine (search/hybrid.py) over this vault's parts."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from vaultmem import clock
from vaultmem.config import MAX_GRAPH_DEPTH, MAX_RESULTS
from vaultmem.errors import IndexBusy, InvalidInput, UsageError
from vaultmem.index.documents import Filters
from vaultmem.index.embedder import EmbeddingUnavailable
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import SearchResult
from vaultmem.search.filters import DEFAULT_MODE, MODES, parse_date_bound, scopes_for, types_for, unknown_types
from vaultmem.search.fusion import RECOMMENDED_MIN_SCORE
from vaultmem.search.hybrid import Dense, Retrievers, SearchOptions, run_search
from vaultmem.services.app import App
from vaultmem.services.lookup import location_of
from vaultmem.units import as_unit
from vaultmem.vault.frontmatter import split_document
from vaultmem.vault.note import looks_binary
from vaultmem.vault.store import read_note_bytes

if TYPE_CHECKING:
    from vaultmem.index.embedder import Embedder

MAX_LIMIT = MAX_RESULTS
# How long a search waits for a model the watcher is loading: a load takes seconds (14 s on
# a first run on a busy machine); one that takes longer than this is stuck, and BM25 answers.
MODEL_WAIT_S = 120.0


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """Filters as a caller states them (SPEC §5); checked and translated by `build_filters`."""

    scope: str | None = None
    tags: Sequence[str] = ()
    types: Sequence[str] = ()
    memory_type: str | None = None
    project: str | None = None
    since: str | None = None
    until: str | None = None
    min_trust: float | None = None
    min_confidence: float | None = None
    min_importance: float | None = None
    include_expired: bool = False


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    mode: str = DEFAULT_MODE
    limit: int | None = None
    filters: FilterSpec = field(default_factory=FilterSpec)
    bm25_weight: float | None = None
    embedding_weight: float | None = None
    rrf_k: float | None = None
    trust_bias: float | None = None
    graph_depth: int | None = None
    include_parent: bool = True
    include_links_in: bool = True
    include_links_out: bool = True
    budget_tokens: int | None = None
    explain: bool = False
    min_score: float | None = None  # None: the vault's default cut (0 with rrf fusion)


def _unit(name: str, value: float | None) -> float | None:
    if value is not None and as_unit(value) is None:
        raise InvalidInput(f"--{name} must be in [0, 1], not {value}")
    return value


MAX_FILTER_TAGS = 100  # a query of 1,000 tags ran Whoosh's matcher past Python's recursion limit


def build_filters(app: App, spec: FilterSpec) -> Filters:
    if len(spec.tags) > MAX_FILTER_TAGS:
        raise InvalidInput(f"at most {MAX_FILTER_TAGS} tags to filter by, not {len(spec.tags)}")
    scopes = scopes_for(spec.scope)
    types = types_for(spec.types, spec.memory_type, app.config.memory_types)
    return Filters(
        readers=tuple(app.reader_tokens()),
        now=int(clock.epoch()),
        scopes=scopes,
        types=types,
        tags=tuple(t.lstrip("#").lower() for t in spec.tags if t.strip()),
        project=spec.project,
        since=parse_date_bound(spec.since, "since", end_of_day=False),
        until=parse_date_bound(spec.until, "until", end_of_day=True),
        min_trust=_unit("min-trust", spec.min_trust),
        min_confidence=_unit("min-confidence", spec.min_confidence),
        min_importance=_unit("min-importance", spec.min_importance),
        include_expired=spec.include_expired,
    )


def options_for(app: App, req: SearchRequest) -> SearchOptions:
    d = app.config.search
    if req.mode not in MODES:  # a flag value the command does not know: a usage error (exit 2)
        raise UsageError(f"invalid value for '--mode': {req.mode!r} is not one of {', '.join(MODES)}")
    limit = d.max_results if req.limit is None else req.limit
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"the limit (--limit; max_results over MCP) must be between 1 and {MAX_LIMIT}")
    depth = d.graph_depth if req.graph_depth is None else req.graph_depth
    if not 0 <= depth <= MAX_GRAPH_DEPTH:
        raise InvalidInput(f"--graph-depth must be between 0 and {MAX_GRAPH_DEPTH}")
    rrf_k = float(d.rrf_k if req.rrf_k is None else req.rrf_k)
    if rrf_k <= 0:
        raise InvalidInput("--rrf-k must be positive")
    bm25_w = d.bm25_weight if req.bm25_weight is None else req.bm25_weight
    emb_w = d.embedding_weight if req.embedding_weight is None else req.embedding_weight
    if bm25_w < 0 or emb_w < 0:
        raise InvalidInput("weights must not be negative")
    if req.budget_tokens is not None and req.budget_tokens < 1:
        raise InvalidInput("--budget-tokens must be positive")
    return SearchOptions(
        mode=req.mode,
        limit=limit,
        bm25_weight=bm25_w,
        embedding_weight=emb_w,
        rrf_k=rrf_k,
        trust_bias=d.trust_bias if req.trust_bias is None else req.trust_bias,
        graph_depth=depth,
        include_parent=req.include_parent,
        include_links_in=req.include_links_in,
        include_links_out=req.include_links_out,
        budget_tokens=req.budget_tokens,
        explain=req.explain,
        fusion=d.fusion,
        min_score=_min_score(req.min_score),
        default_min_score=RECOMMENDED_MIN_SCORE if d.min_score is None else d.min_score,
    )


def _min_score(given: float | None) -> float | None:
    """`--min-score`, checked; None leaves the default cut to the formula that ranks."""
    if given is not None:
        _unit("min-score", given)
        return float(given)
    return None


def refresh(app: App) -> None:
    """`search` never answers from stale indexes: catch every index up first (inside the
    watcher there is nothing to do: it reconciles pending file events before each request)."""
    app.freshness.refresh(app)


def read_body(app: App, rec: NoteRecord) -> str | None:
    """A note's body as indexed (front matter cut off, LF line ends), without parsing YAML."""
    try:
        data = read_note_bytes(app.root / rec.path)
    except OSError:  # gone, or grown past the size limit since it was indexed
        return None
    if looks_binary(data):
        return None
    return split_document(data.decode("utf-8", errors="replace")).body.replace("\r\n", "\n")


def retrievers(app: App, mode: str, warnings: list[str]) -> tuple[Retrievers, str]:
    """The parts for this vault; falls back to BM25 when there are no embeddings."""
    dense = None
    if mode == "hybrid" and app.freshness.lexical_only:
        warnings.append(app.freshness.lexical_only)
        mode = "bm25"
    if mode in ("hybrid", "vector") and app.indexes.model_loading():
        # The watcher is still loading the model (index/indexes.py). The first answer is a
        # full answer: wait for it (seconds), unless it takes far longer than a load does.
        app.notice("waiting for the embedding model to load…")
        if not app.indexes.wait_for_model(MODEL_WAIT_S):
            if mode == "vector":
                raise IndexBusy(f"the embedding model did not load within {MODEL_WAIT_S:.0f} s; try again")
            warnings.append(
                f"the embedding model did not load within {MODEL_WAIT_S:.0f} s: searched with BM25 + graph only"
            )
            mode = "bm25"
    if mode in ("hybrid", "vector") and app.indexes.vectors_deferred and app.indexes.model_loaded():
        # Notes changed while the model loaded: their vectors first, or the first answer
        # after a watcher starts misses the notes made while none ran.
        missed = app.freshness.embed_deferred(app)
        if missed:
            warnings.append(missed)
    if mode in ("hybrid", "vector"):
        dense, mode = _dense(app, mode, warnings)
    parts = Retrievers(
        db=app.db,
        fulltext=app.indexes.fulltext() if mode in ("hybrid", "bm25") else None,
        dense=dense,
        graph=app.indexes.link_graph,
        read_body=lambda rec: read_body(app, rec),
        visible=lambda rec: app.can_read(location_of(rec)),
        reader_links=app.reader_links,
    )
    return parts, mode


def _dense(app: App, mode: str, warnings: list[str]) -> tuple[Dense | None, str]:
    """The vector side of a hybrid or vector search, and the mode it runs in: BM25 when the
    vault has no embeddings or the model cannot be loaded (hybrid, with the reason in
    `warnings`; a vector search fails with it)."""
    choice = app.indexes.embedding_choice()
    fp = app.db.get_meta("vector_fingerprint")
    try:
        embedder = app.indexes.embedder() if choice.enabled else None
    except EmbeddingUnavailable as exc:
        if mode == "vector":
            raise
        warnings.append(f"{exc.message}: searched with BM25 + graph only")
        return None, "bm25"
    if embedder is not None and fp is not None:
        views = app.indexes.views

        def embed(text: str, model: Embedder = embedder, fp: str = fp) -> list[float]:
            return views.query_vector(fp, text, lambda t: model.embed([t])[0])

        return Dense(app.indexes.vector_index(fp), embed, app.indexes.note_lookup()), mode
    if mode == "vector":
        raise InvalidInput(f"vector search needs embeddings, and this vault has none ({choice.reason})")
    warnings.append(f"no embeddings ({choice.reason}): searched with BM25 + graph only")
    return None, "bm25"


def search(app: App, req: SearchRequest, fresh: bool = False) -> SearchResult:
    started = time.perf_counter()
    query = req.query.strip()
    if not query:
        raise InvalidInput("the query is empty")
    opts = options_for(app, req)
    if not fresh:
        refresh(app)
    filters = build_filters(app, req.filters)
    warnings: list[str] = unknown_types(req.filters.types, app.config.types)
    parts, mode = retrievers(app, opts.mode, warnings)
    if mode != opts.mode:
        opts = replace(opts, mode=mode)
    result = run_search(parts, query, filters, opts)
    for w in warnings + result.warnings:
        app.notice(f"warning: {w}")
    return replace(
        result,
        warnings=warnings + result.warnings,
        requested_mode=req.mode if mode != req.mode else None,
        # the whole wait the caller had: catching the indexes up, loading the model, searching
        # (a first search in a new vault builds its index: that is part of its answer's time)
        search_time_ms=round((time.perf_counter() - started) * 1000, 1),
    )
