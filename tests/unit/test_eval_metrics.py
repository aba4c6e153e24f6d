"""Metrics of scripts/eval.py against hand-computed values (no corpora, no models needed)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _load_eval() -> ModuleType:
    # scripts/ is not a package; load eval.py by path under a name that cannot shadow anything.
    spec = importlib.util.spec_from_file_location("vaultmem_eval_script", SCRIPTS / "eval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ev = _load_eval()

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
    assert ev.ndcg_at_k(ranked, qrels, k) == pytest.approx(expected)


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
    assert ev.recall_at_k(ranked, relevant, k) == pytest.approx(expected)


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
    assert ev.mrr_at_k(ranked, relevant, k) == pytest.approx(expected)


def test_mean_of_nothing_is_zero() -> None:
    assert ev.mean([]) == 0.0
    assert ev.mean([0.5, 1.0]) == pytest.approx(0.75)


def test_replace_section_keeps_other_sections() -> None:
    doc = f"# Benchmarks\n\nlatency table\n\n{ev.START_MARKER}\nold\n{ev.END_MARKER}\n\nmore\n"
    new = ev.replace_section(doc, f"{ev.START_MARKER}\nnew\n{ev.END_MARKER}")
    assert new == f"# Benchmarks\n\nlatency table\n\n{ev.START_MARKER}\nnew\n{ev.END_MARKER}\n\nmore\n"


def test_replace_section_appends_when_absent() -> None:
    section = f"{ev.START_MARKER}\nx\n{ev.END_MARKER}"
    assert ev.replace_section("# Benchmarks\n\nlatency\n", section) == f"# Benchmarks\n\nlatency\n\n{section}\n"
    assert ev.replace_section("", section).endswith(f"{section}\n")


def test_cranfield_qrels_parser_tolerates_odd_lines(tmp_path: Path) -> None:
    from _corpora import load_cran_qrels  # importable: eval.py put scripts/ on sys.path

    path = tmp_path / "cranqrel"
    # CRLF, trailing blanks, a double space, a -1 code, junk, a duplicate and an unknown doc
    path.write_bytes(b"1 184 2 \r\n1 486 -1\r\n40 85  3 \r\nnot a line\r\n1 184 1\r\n1 9999 1\r\n\r\n")
    qrels = load_cran_qrels(path, doc_ids={"184", "85", "486"})
    assert qrels == {"1": {"184": 4}, "40": {"85": 2}}
