"""`reference search TOPIC QUESTION` (reference_search, seed 003).

Stage 1 finds the best topic note (`type: topic`) for TOPIC with the hybrid engine.
Stage 2 searches only the files that topic lists (`files:` paths or globs inside the
vault: docs, source code, anything textual) with the engine of search/reference.py, fused
with the same RRF. Files the caller may not see are never listed or searched.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vaultmem.errors import InvalidInput, NotFound, VaultmemError
from vaultmem.index.embedder import Embedder, EmbeddingUnavailable
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import MemoryResult, NoteSummary, ReferenceResult, TopicInfo
from vaultmem.paths import StatePaths
from vaultmem.search.fusion import rrf
from vaultmem.search.reference import bm25_ranking, dense_ranking, load_file, term_map
from vaultmem.search.text import best_passage
from vaultmem.services.app import App
from vaultmem.services.lookup import find_note, location_of
from vaultmem.services.search import FilterSpec, SearchRequest, refresh, search
from vaultmem.vault.frontmatter import split_document
from vaultmem.vault.ids import derived_id
from vaultmem.vault.layout import classify, inside_vault, is_ignored_dir, is_temp_name, utf8_name
from vaultmem.vault.note import ParsedNote
from vaultmem.vault.store import check_relpath, disk_path, load_note

MAX_FILES = 2000


def topic_files(app: App, patterns: Sequence[str]) -> list[str]:
    """Vault-relative files a topic lists, globs expanded, each visible to the caller."""
    root = app.root
    found: dict[str, None] = {}
    for raw in patterns:
        try:
            pattern = check_relpath(str(raw))
        except InvalidInput:
            continue
        matches = [root / pattern] if not any(ch in pattern for ch in "*?[") else sorted(root.glob(pattern))
        for path in matches:
            if not path.is_file() or not inside_vault(root, path):
                continue
            # As the disk spells it: on a case-insensitive disk `Private/alice/x.md` is a
            # private note, and must be classified as one.
            rel = disk_path(root, path.relative_to(root).as_posix())
            if rel is None or not utf8_name(rel):  # as a note's: no id or JSON holds such a name
                continue
            parts = rel.split("/")
            if any(is_ignored_dir(p) for p in parts[:-1]) or is_temp_name(parts[-1]):
                continue
            if not app.can_read(classify(rel)) or not _real_file_readable(app, path):
                continue
            found.setdefault(rel, None)
            if len(found) >= MAX_FILES:
                return list(found)
    return list(found)


def _real_file_readable(app: App, path: Path) -> bool:
    """Access follows where a file really is: a symlink (to the file or to a folder on its
    way) into private/<ghost>/ or .vaultmem/trash/ must not hand that file to others."""
    root = app.root.resolve()
    real = disk_path(root, path.resolve().relative_to(root).as_posix())
    if real is None:
        return False
    parts = real.split("/")
    return not any(is_ignored_dir(p) for p in parts[:-1]) and app.can_read(classify(real))


def _topic_note(app: App, topic: str) -> tuple[NoteRecord, ParsedNote]:
    """The topic note `topic` names (id, path, title, alias, as `get` finds a note), else the
    best topic note a search for it finds, among the notes the caller may see. A search
    alone missed a topic named by its exact title in a vault of 150 notes: the title counts
    only in part, and the default cut hid it."""
    rec: NoteRecord | None
    try:
        rec = find_note(app.db, topic, app.can_read)
    except VaultmemError:  # no such name, or several: search
        rec = None
    if rec is None or rec.type != "topic":
        found = search(
            app, SearchRequest(query=topic, limit=1, filters=FilterSpec(types=("topic",)), graph_depth=0), fresh=True
        )
        rec = app.db.get(found.results[0].summary.path) if found.results else None
    if rec is None or not app.can_read(location_of(rec)):
        raise NotFound(f"no topic note matches {topic!r}")
    parsed = load_note(app.root / rec.path, rec.path)
    if not isinstance(parsed, ParsedNote):
        raise NotFound(f"no topic note matches {topic!r}")
    return rec, parsed


def _result(
    f: Any, item: Any, chunk_index: int, terms: list[str], analyzer: Any, distance: float | None
) -> MemoryResult:
    chunk = f.chunks[chunk_index] if f.chunks else None
    loc = classify(f.path)
    snippet = best_passage(chunk.text if chunk else f.text, terms, term_map(analyzer) if analyzer else None)
    summary = NoteSummary(
        id=f.note_id or derived_id(f.path),
        title=f.title,
        type=f.note_type,
        scope=loc.scope,
        path=f.path,
        owner=loc.owner,
        project=loc.project,
        score=round(item.rrf, 6),
        snippet=snippet or None,
    )
    return MemoryResult(summary, ranks=dict(item.ranks), distance=None if distance is None else round(distance, 4))


def _embedder(app: App) -> Embedder | None:
    """The embedding model, or None: none configured, or one that cannot be loaded, said
    as a warning (the files are then ranked by BM25 alone, as `search` answers then)."""
    if not app.indexes.embedding_choice().enabled:
        return None
    try:
        return app.indexes.embedder()
    except EmbeddingUnavailable as exc:
        app.notice(f"warning: {exc.message}: ranked with BM25 only")
        return None


def reference_search(
    app: App, topic: str, question: str, limit: int | None = None, rrf_k: float | None = None, fresh: bool = False
) -> ReferenceResult:
    """The best topic note, then BM25 (and vectors) over the files it lists, fused."""
    started = time.perf_counter()
    if not topic.strip() or not question.strip():
        raise InvalidInput("reference search needs a TOPIC and a QUESTION")
    d = app.config.search
    # as `search` checks them (services/search.py options_for): 0 is a value, not "the
    # default"; a k of -1 divided by zero, other negative ones ranked by negative scores
    limit = d.max_results if limit is None else limit
    if not 1 <= limit <= 200:
        raise InvalidInput("the limit (--limit; max_results over MCP) must be between 1 and 200")
    k = float(d.rrf_k if rrf_k is None else rrf_k)
    if k <= 0:
        raise InvalidInput("--rrf-k must be positive")
    if not fresh:
        refresh(app)
    rec, parsed = _topic_note(app, topic)
    raw_files = parsed.front_matter.get("files") or []
    patterns = [raw_files] if isinstance(raw_files, str) else [str(p) for p in raw_files if p is not None]
    paths = topic_files(app, patterns)
    files = [f for f in (load_file(app.root, p) for p in paths) if f is not None]
    summary_text = parsed.front_matter.get("summary")
    if not isinstance(summary_text, str) or not summary_text.strip():
        summary_text = best_passage(split_document(parsed.body).body, [], None)
    bm25_paths, best_chunk, analyzer = bm25_ranking(files, question) if files else ([], {}, None)
    rankings: dict[str, list[str]] = {"bm25": bm25_paths}
    distances: dict[str, float] = {}
    embedder = _embedder(app)
    if embedder is not None and files:
        dense_paths, dense_chunks, distances = dense_ranking(
            StatePaths(app.root).reference_embeddings, embedder, files, question
        )
        rankings["vector"] = dense_paths
        for p, idx in dense_chunks.items():
            best_chunk.setdefault(p, idx)
    fused = rrf(rankings, {"bm25": d.bm25_weight, "vector": d.embedding_weight}, k)
    by_path = {f.path: f for f in files}
    terms = [t.text for t in analyzer(question)] if analyzer is not None else []
    results = [
        _result(by_path[i.key], i, best_chunk.get(i.key, 0), terms, analyzer, distances.get(i.key))
        for i in fused[:limit]
    ]
    return ReferenceResult(
        topic=TopicInfo(rec.id or parsed.id, parsed.title, rec.path, summary_text, len(paths)),
        question=question,
        results=results,
        returned=len(results),
        mode="hybrid" if "vector" in rankings else "bm25",
        search_time_ms=round((time.perf_counter() - started) * 1000, 1),
    )
