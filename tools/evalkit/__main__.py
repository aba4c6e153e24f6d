"""Search-quality evaluation: vaultmem search beside its peers run in the same process (issue 11).

Evaluation sets (corpora from --corpora, normally ../shared/corpora; questions, splits and
off-topic sets in tools/evalkit/data, all written before any tuning), each split into tune and
test; every metric is reported on tune, test and all:
- Cranfield: 1,400 abstracts, 225 queries (cranfield_split.json), graded judgments ->
  nDCG@10, recall@5 and MRR@10 (a judged doc, gain >= 1, is relevant).
- Obsidian Help vault: obsidian_questions.json, one answering note each -> recall@5, MRR@10.
- tldr known-item: tldr_queries.json over the 7,425 English tldr pages (tldr-pages.tar.gz,
  vault layout from the file's header) -> recall@5 as a hit (any relevant page in the top 5),
  MRR@10 of the first relevant page.
- LoCoMo conversation memory (issue 24): the conversations of locomo-tune/, one vault each,
  every turn written through `vaultmem write` as a conversation memory (locomo.py); tune and
  test split by conversation (locomo_split.json) -> recall@5 and @10 (any evidence turn in the
  top k), MRR@10, also by question category.
- Agent memory (issue 24): an agent's own notes among a person's memories, asked in the
  agent's own words (agent.py, agent_memory.json) -> recall@5, MRR@10.
- For every set, the paraphrase subset (paraphrase.py): the third of each split whose
  questions share the fewest content words with their answer, reported on its own.

Systems: vaultmem search (default hybrid, `--mode bm25`, `--mode vector`, and the default once
more with `--min-score 0`, i.e. without its relevance cut), bm25s (reference BM25, English
stemming and stop words) and exact cosine search with all-MiniLM-L6-v2 (the model vaultmem
embeds with; whole text and ~150-word chunks), loaded offline. Per vault also: the share of the
off-topic questions (offtopic_<set>.json) that get no result at all, and for the Obsidian
questions the size of `search --json --limit 5` in tokens (characters / 4).

The tables go to stdout and to the section between the eval markers of --out; other sections
of that file are left alone.

Usage:
  python -m tools.evalkit --corpora ../shared/corpora --out docs/BENCHMARKS.md
                  [--only cranfield|obsidian|tldr] [--skip-vaultmem] [--work bench-work/eval]
                  [--precision float32|int8]   (e.g. --precision int8 --out bench-work/eval/int8.md)
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.corpora import load_cranfield, load_questions, load_vault_notes
from tools.evalkit import agent
from tools.evalkit.locomo import GHOST, Conversation, build_vault, load_conversations, load_split, locomo_task
from tools.evalkit.metrics import answer_tokens, mean
from tools.evalkit.paraphrase import paraphrase_subset
from tools.evalkit.peers import TOP_K, per_group, run_bm25s, run_exact_minilm
from tools.evalkit.report import (
    END_MARKER,
    MODE_SYSTEM,
    NO_CUT,
    PARAPHRASE,
    START_MARKER,
    Report,
    per_question,
    render_section,
    scores_of,
    views,
)
from tools.evalkit.tasks import (
    QUESTIONS,
    Task,
    cranfield_doc_id,
    cranfield_task,
    cranfield_vault_files,
    log,
    obsidian_task,
    obsidian_vault_files,
    shared_doc_id,
    tldr_task,
    tldr_vault_files,
)
from tools.evalkit.vaults import _result_paths, build_and_index, open_searcher, vault_dir
from tools.repo import CORPORA, WORK
from tools.sections import write_section
from vaultmem.search.filters import MODES

ANSWER_LIMIT = 5  # `search --json --limit 5`: the answer whose size in tokens is reported


def _measure(report: Report, system: str, task: Task, rank: Callable[[], list[list[str]]]) -> None:
    start = time.perf_counter()
    try:
        rankings = rank()
    except Exception as exc:  # one failing system must not lose the others' figures
        report.errors[system, task.name] = f"{type(exc).__name__}: {exc}"
        log(f"{system} on {task.name}: n/a ({report.errors[system, task.name]})")
        return
    report.seconds[system, task.name] = time.perf_counter() - start
    report.per_query[system, task.name] = per_question(task, rankings)
    report.scores[system, task.name] = scores_of(task, report.per_query[system, task.name])
    if task.name not in report.views:
        report.views[task.name] = views(task)
    shown = ", ".join(f"{k} {v:.3f}" for k, v in report.scores[system, task.name].items() if ":" not in k)
    log(f"{system} on {task.name}: {shown} ({report.seconds[system, task.name]:.1f} s)")


@dataclass
class VaultPart:
    """One vault of a set and the queries searched in it (a set is one vault, LoCoMo one per
    conversation): `build` writes and indexes it and returns note path -> doc id (None: use
    `to_doc`) with the index's figures."""

    vault: Path
    build: Callable[[], tuple[Mapping[str, str] | None, dict[str, Any]]]
    to_doc: Callable[[str], str | None]
    queries: list[int]  # positions in the task's queries
    ghost: str | None = None


def single_vault(
    task: Task, args: argparse.Namespace, files: Mapping[str, str] | None, to_doc: Callable[[str], str | None]
) -> list[VaultPart] | None:
    """The one vault of a set (None: no vaultmem rows), under --work, in --precision."""
    if files is None:
        return None
    vault = vault_dir(args.work, task.name, args.precision)
    every = list(range(len(task.queries)))
    return [VaultPart(vault, lambda: (None, build_and_index(vault, files, args.precision)), to_doc, every)]


def evaluate_vaultmem(task: Task, report: Report, parts: Sequence[VaultPart]) -> None:
    """Index each vault once, then every vaultmem figure from one searcher per vault."""
    systems = (*MODE_SYSTEM.values(), NO_CUT)
    rankings: dict[str, list[list[str]]] = {system: [[] for _ in task.queries] for system in systems}
    offtopic: dict[str, list[int]] = {mode: [] for mode in MODES}
    tokens: list[float] = []
    seconds = dict.fromkeys(systems, 0.0)
    for part in parts:
        start = time.perf_counter()
        try:
            paths, indexed = part.build()
        except Exception as exc:  # index once per vault, fail once: every vaultmem row is n/a
            for system in systems:
                report.errors[system, task.name] = f"{type(exc).__name__}: {exc}"
            log(f"vaultmem index of {task.name} ({part.vault.name}): n/a ({type(exc).__name__}: {exc})")
            return
        indexed["wall_seconds"] = time.perf_counter() - start
        shown = {k: v for k, v in indexed.items() if not isinstance(v, list)}
        log(f"vaultmem index of {task.name} ({part.vault.name}): {json.dumps(shown)}")
        to_doc = part.to_doc if paths is None else paths.get
        search, close = open_searcher(part.vault, part.ghost)

        def docs(answer: Mapping[str, Any], to_doc: Callable[[str], str | None] = to_doc) -> list[str]:
            return [doc for doc in map(to_doc, _result_paths(answer)) if doc is not None]

        try:
            for system, mode, cut in [*((MODE_SYSTEM[m], m, None) for m in MODES), (NO_CUT, "hybrid", 0.0)]:
                began = time.perf_counter()
                for i in part.queries:
                    rankings[system][i] = docs(search(task.queries[i], mode, TOP_K, cut))
                if cut is None and task.offtopic:
                    offtopic[mode] += [len(search(q, mode, TOP_K, None).get("results", [])) for q in task.offtopic]
                seconds[system] += time.perf_counter() - began
            if task.tokens:
                tokens += [answer_tokens(search(task.queries[i], "hybrid", ANSWER_LIMIT, None)) for i in part.queries]
        except Exception as exc:  # one failing vault loses vaultmem's rows, never the peers'
            for system in systems:
                report.errors[system, task.name] = f"{type(exc).__name__}: {exc}"
            log(f"vaultmem search on {task.name} ({part.vault.name}): n/a ({type(exc).__name__}: {exc})")
            return
        finally:
            close()
    for system in systems:
        _measure(report, system, task, functools.partial(lambda s: rankings[s], system))
        report.seconds[system, task.name] = seconds[system]
    if task.offtopic:
        for mode in MODES:
            report.offtopic[MODE_SYSTEM[mode], task.name] = offtopic[mode]
    if tokens:
        report.tokens[task.name] = tokens
        log(f"tokens per answer on {task.name}: mean {mean(tokens):.0f}, max {max(tokens):.0f}")


def evaluate(task: Task, report: Report, work: Path, parts: Sequence[VaultPart] | None) -> None:
    report.sets[task.name] = task.measure
    texts = dict(zip(task.doc_ids, task.texts, strict=True))
    task.subsets[PARAPHRASE] = paraphrase_subset(task.query_ids, task.queries, task.qrels, texts, task.splits)
    cache = work / "embeddings"
    _measure(report, "bm25s", task, lambda: per_group(task, run_bm25s))
    _measure(report, "exact MiniLM", task, lambda: per_group(task, lambda t: run_exact_minilm(t, cache)))
    _measure(
        report,
        "exact MiniLM, chunked",
        task,
        lambda: per_group(task, lambda t: run_exact_minilm(t, cache, chunked=True)),
    )
    if parts is not None:
        evaluate_vaultmem(task, report, parts)


def locomo_parts(task: Task, convs: Sequence[Conversation], work: Path) -> list[VaultPart]:
    parts = []
    for conv in convs:
        vault = work / "vaults-locomo" / conv.name
        asked = [i for i, qid in enumerate(task.query_ids) if task.groups[qid] == conv.name]
        parts.append(VaultPart(vault, functools.partial(build_vault, vault, conv), lambda p: None, asked, GHOST))
    return parts


def agent_parts(task: Task, work: Path) -> list[VaultPart]:
    vault = work / "vaults-agent" / "agent"
    filler, notes = agent.load_set()
    build = functools.partial(agent.build_vault, vault, filler, notes)
    return [VaultPart(vault, build, lambda p: None, list(range(len(task.queries))), agent.GHOST)]


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
        default=CORPORA,
        help="folder holding cranfield/, obsidian-help-en/ and tldr-pages.tar.gz",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="markdown file whose eval section is (re)written, e.g. docs/BENCHMARKS.md",
    )
    parser.add_argument("--only", choices=("cranfield", "obsidian", "tldr", "locomo", "agent"), default=None)
    parser.add_argument("--skip-vaultmem", action="store_true", help="peers only")
    parser.add_argument("--work", type=Path, default=WORK / "eval", help="vaults and embedding cache (gitignored)")
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
        evaluate(task, report, args.work, single_vault(task, args, files, cranfield_doc_id))
    if args.only in (None, "obsidian"):
        notes = load_vault_notes(args.corpora / "obsidian-help-en")
        task = obsidian_task(notes, load_questions(args.questions))
        report.counts[task.name] = describe(task, "notes")
        files = None if args.skip_vaultmem else obsidian_vault_files(notes)
        evaluate(task, report, args.work, single_vault(task, args, files, shared_doc_id))
    if args.only in (None, "tldr"):
        pages = tldr_vault_files(args.corpora)
        task = tldr_task(pages)
        report.counts[task.name] = describe(task, "English pages")
        files = None if args.skip_vaultmem else pages
        evaluate(task, report, args.work, single_vault(task, args, files, shared_doc_id))
    convs = load_conversations(args.corpora) if args.only in (None, "locomo") else []
    if args.only in (None, "locomo") and not convs:
        log(f"locomo: no conversations in {args.corpora}/locomo-tune; skipped")
    if convs:
        task = locomo_task(convs, load_split())
        report.counts[task.name] = describe(task, f"turns of {len(convs)} conversations, one vault each")
        evaluate(task, report, args.work, None if args.skip_vaultmem else locomo_parts(task, convs, args.work))
    if args.only in (None, "agent"):
        filler, own = agent.load_set()
        task = agent.agent_task(filler, own)
        report.counts[task.name] = describe(task, f"notes ({len(own)} the agent's own)")
        evaluate(task, report, args.work, None if args.skip_vaultmem else agent_parts(task, args.work))
    if args.skip_vaultmem:
        report.notes.append("vaultmem rows skipped (--skip-vaultmem).")
    if args.precision is not None:
        report.notes.append(f"vaultmem embeds with [embedding] precision = {args.precision!r} (--precision).")
    section = render_section(report, time.perf_counter() - started)
    print(section)
    if args.out is not None:
        write_section(args.out, section, (START_MARKER, END_MARKER))
        log(f"wrote the eval section of {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
