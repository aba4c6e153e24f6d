"""Dense hits whose distances differ only in Chroma's float32 noise are one distance, in the
order of their paths (index/vectors.py _best_chunks): issue 22, item 11 — their order and
scores must not follow the vector index's history (other ghosts' notes included)."""

from __future__ import annotations

import pytest

from vaultmem.index.vectors import _best_chunks

NOISE = 6e-8  # what one vector's distance moves by after Chroma's index changed

CASES = [
    # rows (path, chunk, distance), limit -> (path, rank, distance, chunk) of the hits
    ([("b.md", 0, 0.2), ("a.md", 0, 0.2 + NOISE)], 5, [("a.md", 1, 0.2, 0), ("b.md", 2, 0.2, 0)]),
    ([("a.md", 0, 0.2 + NOISE), ("b.md", 0, 0.2)], 5, [("a.md", 1, 0.2, 0), ("b.md", 2, 0.2, 0)]),
    ([("b.md", 0, 0.3), ("a.md", 0, 0.2)], 5, [("a.md", 1, 0.2, 0), ("b.md", 2, 0.3, 0)]),  # really apart
    # a tie across the cut: the path decides which one makes it
    ([("c.md", 0, 0.1), ("z.md", 0, 0.2), ("b.md", 0, 0.2 + NOISE)], 2, [("c.md", 1, 0.1, 0), ("b.md", 2, 0.2, 0)]),
    # one note: its best chunk; of two equally near, the lower number
    ([("a.md", 3, 0.5), ("a.md", 1, 0.5 + NOISE), ("a.md", 2, 0.9)], 5, [("a.md", 1, 0.5, 1)]),
    ([("a.md", 2, 0.4), ("a.md", 5, 0.1)], 5, [("a.md", 1, 0.1, 5)]),
]


@pytest.mark.parametrize(("rows", "limit", "expected"), CASES)
def test_best_chunks(
    rows: list[tuple[str, int, float]], limit: int, expected: list[tuple[str, int, float, int]]
) -> None:
    hits = _best_chunks([({"path": p, "chunk": c}, d) for p, c, d in rows], limit)
    assert [(h.path, h.rank, round(h.distance, 9), h.chunk) for h in hits] == expected
