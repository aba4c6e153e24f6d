"""Metrics of the evaluation (tools/evalkit) against hand-computed values (no corpora, no models needed)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tools import sections
from tools.evalkit import metrics, report, tasks

MARKERS = (report.START_MARKER, report.END_MARKER)

# Gains a:3, c:2, d:1 -> ideal DCG = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.261860 + 0.5
IDEAL = 3 + 2 / math.log2(3) + 0.5
QRELS = {"a": 3, "c": 2, "d": 1}


@pytest.mark.parametrize(
    ("ranked", "qrels", "k", "expected"),
    [
        (["a", "c", "d"], QRELS, 10, 1.0),  # ideal order
        (["a", "b", "c"], QRELS, 10, (3 + 2 / 2) / IDEAL),  # c at rank 3: 2/log2(4) = 1
        (["b", "a"], QRELS, 10, (3 / math.log2(3)) / IDEAL),  # a at rank 2
        (["x", "y"], QRELS, 10, 0.0),  # nothing relevant retrieved
        ([], QRELS, 10, 0.0),  # empty ranking
        (["a"], {}, 10, 0.0),  # no judgments: 0, not a division by zero
        (["a", "a", "c"], QRELS, 10, (3 + 2 / 2) / IDEAL),  # a repeat gains nothing but keeps its slot
        ([*(f"x{i}" for i in range(10)), "a"], QRELS, 10, 0.0),  # rank 11 is past the cutoff
        (["c", "a"], QRELS, 1, 2 / 3),  # k=1: ideal DCG@1 is the best gain (3)
        (["a", "c"], {"a": 1, "c": 0}, 10, 1.0),  # zero gain is not relevant for the ideal
    ],
)
def test_ndcg_at_k(ranked: list[str], qrels: dict[str, int], k: int, expected: float) -> None:
    assert metrics.ndcg_at_k(ranked, qrels, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ranked", "relevant", "k", "expected"),
    [
        (["c", "a", "d", "b"], {"a", "b"}, 2, 0.5),
        (["c", "a", "d", "b"], {"a", "b"}, 4, 1.0),
        (["c", "d"], {"a"}, 5, 0.0),
        (["a", "a", "b"], {"a", "b"}, 2, 0.5),  # a repeat uses up a slot
        (["a"], set(), 5, 0.0),
    ],
)
def test_recall_at_k(ranked: list[str], relevant: set[str], k: int, expected: float) -> None:
    assert metrics.recall_at_k(ranked, relevant, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ranked", "relevant", "k", "expected"),
    [
        (["a", "b"], {"a"}, 10, 1.0),
        (["c", "a"], {"a"}, 10, 0.5),
        (["c", "d", "b", "a"], {"a", "b"}, 10, 1 / 3),  # first relevant wins
        ([*(f"x{i}" for i in range(10)), "a"], {"a"}, 10, 0.0),  # rank 11: outside MRR@10
        (["c"], {"a"}, 10, 0.0),
    ],
)
def test_mrr_at_k(ranked: list[str], relevant: set[str], k: int, expected: float) -> None:
    assert metrics.mrr_at_k(ranked, relevant, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ranked", "relevant", "k", "expected"),
    [
        (["c", "a", "d"], {"a", "b"}, 5, 1.0),  # one of two relevant pages is enough
        (["c", "d", "e", "f", "g", "a"], {"a"}, 5, 0.0),  # rank 6 is past the cutoff
        (["a", "b"], {"a", "b"}, 5, 1.0),  # two hits still count once
        ([], {"a"}, 5, 0.0),
        (["a"], set(), 5, 0.0),
    ],
)
def test_hit_at_k(ranked: list[str], relevant: set[str], k: int, expected: float) -> None:
    assert metrics.hit_at_k(ranked, relevant, k) == expected


@pytest.mark.parametrize(
    ("ranked", "qrels", "measure", "expected"),
    [
        # graded: recall@5 is the share of judged docs (any gain >= 1) in the top 5
        (["a", "x", "c"], QRELS, "graded", {"ndcg@10": (3 + 2 / 2) / IDEAL, "recall@5": 2 / 3, "mrr@10": 1.0}),
        (["x", "d"], QRELS, "graded", {"ndcg@10": (1 / math.log2(3)) / IDEAL, "recall@5": 1 / 3, "mrr@10": 0.5}),
        # known-item: any relevant page in the top 5 is a full hit
        (["x", "b"], {"a": 1, "b": 1}, "known-item", {"recall@5": 1.0, "mrr@10": 0.5}),
        (["x", "b"], {"a": 1, "b": 1}, "answer", {"recall@5": 0.5, "mrr@10": 0.5}),
        (["x"], {"a": 1}, "answer", {"recall@5": 0.0, "mrr@10": 0.0}),
        (["a"], {"a": 0}, "known-item", {"recall@5": 0.0, "mrr@10": 0.0}),  # gain 0 is not relevant
    ],
)
def test_query_metrics(ranked: list[str], qrels: dict[str, int], measure: str, expected: dict[str, float]) -> None:
    got = metrics.query_metrics(ranked, qrels, measure)
    assert got.keys() == expected.keys()
    assert got == pytest.approx(expected)


def test_score_task_splits_tune_test_and_all() -> None:
    task = tasks.Task(
        name="t",
        doc_ids=["a", "b"],
        texts=["", ""],
        queries=["q1", "q2", "q3"],
        query_ids=["1", "2", "3"],
        qrels={"1": {"a": 1}, "2": {"b": 1}, "3": {"a": 1, "b": 1}},
        splits={"1": "tune", "2": "test", "3": "test"},
        measure="known-item",
    )
    scores = report.score_task(task, [["a"], ["a", "b"], ["x"] * 5 + ["b"]])
    assert scores == pytest.approx(
        {
            "recall@5/tune": 1.0,
            "mrr@10/tune": 1.0,
            "recall@5/test": 0.5,
            "mrr@10/test": (0.5 + 1 / 6) / 2,
            "recall@5/all": 2 / 3,
            "mrr@10/all": (1 + 0.5 + 1 / 6) / 3,
        }
    )


@pytest.mark.parametrize(
    ("counts", "expected"),
    [([0, 0, 3, 10], 0.5), ([], 0.0), ([0], 1.0), ([1, 2], 0.0)],
)
def test_empty_share(counts: list[int], expected: float) -> None:
    assert metrics.empty_share(counts) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"a": 1}, len('{"a":1}') / 4),  # compact separators, as the CLI prints through a pipe
        ({"q": "é", "r": [1, 2]}, len('{"q":"é","r":[1,2]}') / 4),  # characters, not escapes
        ({}, 0.5),
    ],
)
def test_answer_tokens(answer: dict[str, object], expected: float) -> None:
    assert metrics.answer_tokens(answer) == pytest.approx(expected)


def test_mean_of_nothing_is_zero() -> None:
    assert metrics.mean([]) == 0.0
    assert metrics.mean([0.5, 1.0]) == pytest.approx(0.75)


def test_replace_section_keeps_other_sections() -> None:
    doc = f"# Benchmarks\n\nlatency table\n\n{report.START_MARKER}\nold\n{report.END_MARKER}\n\nmore\n"
    new = sections.replace_section(doc, f"{report.START_MARKER}\nnew\n{report.END_MARKER}", MARKERS)
    assert new == f"# Benchmarks\n\nlatency table\n\n{report.START_MARKER}\nnew\n{report.END_MARKER}\n\nmore\n"


def test_replace_section_appends_when_absent() -> None:
    section = f"{report.START_MARKER}\nx\n{report.END_MARKER}"
    assert (
        sections.replace_section("# Benchmarks\n\nlatency\n", section, MARKERS)
        == f"# Benchmarks\n\nlatency\n\n{section}\n"
    )
    assert sections.replace_section("", section, MARKERS).endswith(f"{section}\n")


def test_cranfield_qrels_parser_tolerates_odd_lines(tmp_path: Path) -> None:
    from tools.corpora import load_cran_qrels

    path = tmp_path / "cranqrel"
    # CRLF, trailing blanks, a double space, a -1 code, junk, a duplicate and an unknown doc
    path.write_bytes(b"1 184 2 \r\n1 486 -1\r\n40 85  3 \r\nnot a line\r\n1 184 1\r\n1 9999 1\r\n\r\n")
    qrels = load_cran_qrels(path, doc_ids={"184", "85", "486"})
    assert qrels == {"1": {"184": 4}, "40": {"85": 2}}


@pytest.mark.parametrize(
    ("differences", "mean", "holds_zero"),
    [
        ([0.0] * 50, 0.0, True),  # the same rankings: a point at 0
        ([0.1] * 50, 0.1, False),  # better on every question: an interval at 0.1
        ([1.0, -1.0] * 25, 0.0, True),  # as often better as worse
        ([1.0] * 40 + [0.0] * 10, 0.8, False),  # better on most, never worse
        ([1.0, 0.0, 0.0, -1.0, 0.0] * 2 + [0.1], 0.1 / 11, True),  # few questions, tiny mean
        ([], 0.0, True),
    ],
)
def test_paired_bootstrap(differences: list[float], mean: float, holds_zero: bool) -> None:
    got, low, high = metrics.paired_bootstrap(differences)
    assert got == pytest.approx(mean)
    assert low <= got <= high
    assert (low <= 0.0 <= high) == holds_zero
    assert metrics.paired_bootstrap(differences) == (got, low, high)  # seeded: the same every run


def test_the_verdict_gives_each_comparison_its_paired_interval() -> None:
    task = tasks.Task(
        name="t",
        doc_ids=["a", "b"],
        texts=["", ""],
        queries=[f"q{i}" for i in range(40)],
        query_ids=[str(i) for i in range(40)],
        qrels={str(i): {"a": 1} for i in range(40)},
        splits={str(i): "test" for i in range(40)},
        measure="known-item",
    )
    rep = report.Report()
    rep.sets["t"] = "known-item"
    # default: first on 30 questions, second on 10; bm25 mode: first on all but one
    runs = {report.DEFAULT: [["a"]] * 30 + [["b", "a"]] * 10, "vaultmem --mode bm25": [["a"]] * 39 + [["b", "a"]]}
    for system, rankings in runs.items():
        rep.scores[system, "t"] = report.score_task(task, rankings)
        rep.per_query[system, "t"] = report.per_question(task, rankings)
    rep.views["t"] = report.views(task)
    line = report.verdict(rep, "t")
    assert line is not None and "**below**" in line
    assert "MRR@10 0.875 vs 0.988 (vaultmem --mode bm25; paired difference -0.113, 95% CI " in line
    low, high = line.split("MRR@10")[1].split("95% CI ")[1].split(")")[0].split(" to ")
    assert float(high) < 0 < 0.2 + float(low)  # told apart: the interval lies below 0
