"""The pure parts of scoring a note as a whole: the centroid row, its similarity to a query,
and how it enters the cosine distance (fusion.with_centroids)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vaultmem.index.statedb.centroids import centroid, similarities
from vaultmem.search.fusion import with_centroids


def _vec(data: bytes | None) -> list[float]:
    assert data is not None
    return [float(x) for x in np.frombuffer(data, dtype="<f4")]


@pytest.mark.parametrize(
    ("vectors", "expected"),
    [
        ([[1.0, 0.0], [0.0, 1.0]], [math.sqrt(0.5), math.sqrt(0.5)]),
        ([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], [2 / math.sqrt(5), 1 / math.sqrt(5)]),
        ([[0.6, 0.8], [0.6, 0.8]], [0.6, 0.8]),
        ([[3.0, 4.0], [0.0, 0.0]], [0.6, 0.8]),  # unit length whatever the inputs' lengths
    ],
)
def test_a_centroid_is_the_unit_mean(vectors: list[list[float]], expected: list[float]) -> None:
    assert _vec(centroid(vectors)) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("vectors", [[], [[1.0, 0.0]], [[1.0, 0.0], [-1.0, 0.0]], [[float("nan"), 0.0], [1.0, 0.0]]])
def test_no_row_for_one_chunk_or_a_mean_without_direction(vectors: list[list[float]]) -> None:
    assert centroid(vectors) is None


def test_similarities_are_cosines_to_unit_rows() -> None:
    rows = {"a.md": centroid([[1.0, 0.0], [1.0, 0.0]]), "b.md": centroid([[0.0, 1.0], [0.0, 1.0]])}
    held = {k: v for k, v in rows.items() if v is not None}
    assert similarities([2.0, 0.0], held) == pytest.approx({"a.md": 1.0, "b.md": 0.0})
    assert similarities([1.0, 1.0], held) == pytest.approx({"a.md": math.sqrt(0.5), "b.md": math.sqrt(0.5)})
    assert similarities([0.0, 0.0], held) == {}
    assert similarities([1.0, 0.0, 0.0], held) == {}  # rows of another model's size are not compared
    assert similarities([1.0, 0.0], {}) == {}
    # a damaged row (not 4 bytes a dimension) is left out, the others compared
    assert similarities([2.0, 0.0], {**held, "bad.md": b"\x00" * 6}) == pytest.approx({"a.md": 1.0, "b.md": 0.0})


@pytest.mark.parametrize(
    ("dense", "centroids", "share", "expected"),
    [
        ({"a": 0.2, "b": 0.4}, {"a": 0.5}, 0.5, {"a": 0.35, "b": 0.4}),  # 0.5·0.2 + 0.5·(1 - 0.5)
        ({"a": 0.2, "b": 0.4}, {"a": 0.5, "b": 0.9}, 0.25, {"a": 0.275, "b": 0.325}),
        ({"a": 0.2}, {"a": 0.5}, 0.0, {"a": 0.2}),  # share 0: the best chunk alone
        ({"a": 0.2}, {"x": 0.5}, 0.5, {"a": 0.2}),  # a centroid of a note not among the candidates
        ({}, {"a": 0.5}, 0.5, {}),
    ],
)
def test_with_centroids_blends_distances(
    dense: dict[str, float], centroids: dict[str, float], share: float, expected: dict[str, float]
) -> None:
    got = with_centroids(dense, centroids, share)
    assert got == pytest.approx(expected)
    assert list(got) == list(dense)  # the dense ranking's order is kept (ranks come from it)
