"""The second search engine: the files a topic note lists (docs, source code, anything
textual) searched for one question, indexed on demand — BM25F over their chunks in a Whoosh
index in memory, and exact cosine over chunk embeddings kept in the embedding cache — for
`reference search` (services/reference.py), which decides what the caller may see."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.index.chunking import CHUNKER_VERSION, Chunk, chunk_note, chunk_plain
from vaultmem.index.embedder import Embedder, fingerprint
from vaultmem.index.fulltext import BM25_B, BM25_K1
from vaultmem.index.statedb import EmbeddingCache
from vaultmem.vault.note import ParsedNote, looks_binary, parse_note
from vaultmem.vault.store import read_note_bytes


@dataclass(frozen=True, slots=True)
class RefFile:
    path: str
    title: str
    text: str
    chunks: tuple[Chunk, ...]
    note_id: str | None
    note_type: str


def term_map(analyzer: Any) -> Callable[[Iterable[str]], dict[str, str]]:
    """best_passage's word -> term map, from a Whoosh analyzer."""

    def term_map(words: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for word in words:
            terms = [t.text for t in analyzer(word)]
            if len(terms) == 1:
                out[word] = terms[0]
        return out

    return term_map


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


def bm25_ranking(files: Sequence[RefFile], question: str) -> tuple[list[str], dict[str, int], Any]:
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


def dense_ranking(
    cache_path: Path, embedder: Embedder, files: Sequence[RefFile], question: str
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
    cache = EmbeddingCache(cache_path)
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
