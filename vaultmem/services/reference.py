"""`reference search TOPIC QUESTION` (reference_search, seed 003).

Stage 1 finds the best topic note (`type: topic`) for TOPIC with the hybrid engine.
Stage 2 searches only the files that topic lists (`files:` paths or globs inside the
vault: docs, source code, anything textual), indexed on demand: a Whoosh index in memory
for BM25 and exact cosine over chunk embeddings cached in .vaultmem/reference/, fused
with the same RRF. Files the caller may not see are never listed or searched.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.errors import InvalidInput, NotFound
from vaultmem.index.chunking import CHUNKER_VERSION, Chunk, chunk_note, chunk_plain
from vaultmem.index.embedder import Embedder, fingerprint
from vaultmem.index.fulltext import BM25_B, BM25_K1
from vaultmem.index.statedb import EmbeddingCache, NoteRecord
from vaultmem.models import MemoryResult, NoteSummary, ReferenceResult, TopicInfo
from vaultmem.paths import StatePaths
from vaultmem.search.fusion import rrf
from vaultmem.search.text import best_passage
from vaultmem.services.app import App
from vaultmem.services.lookup import location_of
from vaultmem.services.search import FilterSpec, SearchRequest, refresh, search
from vaultmem.vault.frontmatter import split_document
from vaultmem.vault.ids import derived_id
from vaultmem.vault.layout import classify, inside_vault, is_ignored_dir, is_temp_name
from vaultmem.vault.note import ParsedNote, looks_binary, parse_note
from vaultmem.vault.store import check_relpath, disk_path, load_note, read_note_bytes

MAX_FILES = 2000


@dataclass(frozen=True, slots=True)
class RefFile:
    path: str
    title: str
    text: str
    chunks: tuple[Chunk, ...]
    note_id: str | None
    note_type: str


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
            if rel is None:
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


def _term_map(analyzer: Any) -> Callable[[Iterable[str]], dict[str, str]]:
    """best_passage's word -> term map, from a Whoosh analyzer."""

    def term_map(words: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for word in words:
            terms = [t.text for t in analyzer(word)]
            if len(terms) == 1:
                out[word] = terms[0]
        return out

    return term_map


def _real_file_readable(app: App, path: Path) -> bool:
    """Access follows where a file really is: a symlink (to the file or to a folder on its
    way) into private/<ghost>/ or .vaultmem/trash/ must not hand that file to others."""
    root = app.root.resolve()
    real = disk_path(root, path.resolve().relative_to(root).as_posix())
    if real is None:
        return False
    parts = real.split("/")
    return not any(is_ignored_dir(p) for p in parts[:-1]) and app.can_read(classify(real))


def load_file(root: Path, rel: str) -> RefFile | None:
    try:
        data = read_note_bytes(root / rel)
    except OSError:  # TooLarge too
        return None
    if looks_binary(data):
        return None
    if rel.lower().endswith(".md"):
        parsed = parse_note(rel, data)
        if not isinstance(parsed, ParsedNote):
            return None
        chunks = tuple(chunk_note(parsed.body)) or (Chunk(0, "", ""),)
        return RefFile(rel, parsed.title, parsed.body, chunks, parsed.id, parsed.type)
    text = data.decode("utf-8", errors="replace")
    chunks = tuple(chunk_plain(text)) or (Chunk(0, "", ""),)
    return RefFile(rel, rel.rsplit("/", 1)[-1], text, chunks, None, "file")


def _bm25_ranking(files: Sequence[RefFile], question: str) -> tuple[list[str], dict[str, int], Any]:
    """Rank files by their best chunk with BM25F in a RAM Whoosh index."""
    from whoosh import fields, scoring
    from whoosh import query as q
    from whoosh.analysis import StemmingAnalyzer
    from whoosh.filedb.filestore import RamStorage

    analyzer = StemmingAnalyzer()
    schema = fields.Schema(
        key=fields.ID(stored=True),
        title=fields.TEXT(analyzer=analyzer, field_boost=2.0),
        text=fields.TEXT(analyzer=analyzer),
    )
    ix = RamStorage().create_index(schema)
    with ix.writer() as w:
        for f in files:
            for c in f.chunks:
                w.add_document(key=f"{f.path}\x00{c.index}", title=f"{f.title} {c.heading}", text=c.text)
    terms = list(dict.fromkeys(t.text for t in analyzer(question)))
    if not terms:
        return [], {}, analyzer
    clauses = [q.Term(field, t) for t in terms for field in ("title", "text")]
    ranking: list[str] = []
    best_chunk: dict[str, int] = {}
    with ix.searcher(weighting=scoring.BM25F(B=BM25_B, K1=BM25_K1)) as s:
        for hit in s.search(q.Or(clauses), limit=None):
            path, idx = hit["key"].split("\x00")
            if path not in best_chunk:
                best_chunk[path] = int(idx)
                ranking.append(path)
    return ranking, best_chunk, analyzer


def _dense_ranking(
    app: App, embedder: Embedder, files: Sequence[RefFile], question: str
) -> tuple[list[str], dict[str, int], dict[str, float]]:
    import numpy as np

    fp = fingerprint(
        embedder.backend, embedder.model, embedder.dims, CHUNKER_VERSION, getattr(embedder, "precision", "float32")
    )
    items = [
        (f, c, f"{f.title} > {c.heading}\n{c.text}" if c.heading else f"{f.title}\n{c.text}")
        for f in files
        for c in f.chunks
    ]
    keys = [hashlib.sha256(text.encode("utf-8")).hexdigest() for _, _, text in items]
    cache = EmbeddingCache(StatePaths(app.root).reference_embeddings)
    try:
        known = cache.get_many(fp, keys)
        missing = [(k, text) for k, (_, _, text) in zip(keys, items, strict=True) if k not in known]
        if missing:
            fresh = dict(zip([k for k, _ in missing], embedder.embed([t for _, t in missing]), strict=True))
            cache.put_many(fp, fresh)
            known.update(fresh)
    finally:
        cache.close()
    matrix = np.asarray([known[k] for k in keys], dtype=np.float32)
    query_vec = np.asarray(embedder.embed([question])[0], dtype=np.float32)
    sims = matrix @ query_vec
    best: dict[str, tuple[float, int]] = {}
    for (f, c, _), sim in zip(items, sims.tolist(), strict=True):
        if f.path not in best or sim > best[f.path][0]:
            best[f.path] = (sim, c.index)
    ordered = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return [p for p, _ in ordered], {p: v[1] for p, v in ordered}, {p: 1.0 - v[0] for p, v in ordered}


def _topic_note(app: App, topic: str) -> tuple[NoteRecord, ParsedNote]:
    """The best topic note for `topic` among the notes the caller may see."""
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
    snippet = best_passage(chunk.text if chunk else f.text, terms, _term_map(analyzer) if analyzer else None)
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


def reference_search(
    app: App, topic: str, question: str, limit: int | None = None, rrf_k: float | None = None, fresh: bool = False
) -> ReferenceResult:
    """The best topic note, then BM25 (and vectors) over the files it lists, fused."""
    started = time.perf_counter()
    if not topic.strip() or not question.strip():
        raise InvalidInput("reference search needs a TOPIC and a QUESTION")
    limit = limit or app.config.search.max_results
    if not 1 <= limit <= 200:
        raise InvalidInput("--limit must be between 1 and 200")
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
    bm25_paths, best_chunk, analyzer = _bm25_ranking(files, question) if files else ([], {}, None)
    rankings: dict[str, list[str]] = {"bm25": bm25_paths}
    distances: dict[str, float] = {}
    embedder = app.indexes.embedder() if app.indexes.embedding_choice().enabled else None
    if embedder is not None and files:
        dense_paths, dense_chunks, distances = _dense_ranking(app, embedder, files, question)
        rankings["vector"] = dense_paths
        for p, idx in dense_chunks.items():
            best_chunk.setdefault(p, idx)
    d = app.config.search
    fused = rrf(rankings, {"bm25": d.bm25_weight, "vector": d.embedding_weight}, rrf_k or d.rrf_k)
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
