"""The centroid of each multi-chunk note's chunk vectors, written with its vectors: the
fusion scores a note by its best chunk and by how near the note as a whole is to the
query (search/fusion.py `with_centroids`, 0 in the shipped fit), and a search reads ~1.5 kB per dense
candidate here instead of fetching every chunk vector from Chroma.

Rows describe the vectors of the current collection: they are written, moved and dropped
where the chunk vectors are (index/engine.py), all of them cleared when the collection is
made anew. A note with one chunk has no row (its centroid is its chunk)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from vaultmem.index.statedb.base import Store

# The layout of a row (float32, little-endian, unit length); another layout empties the
# table and the indexer makes every row again from the stored vectors (meta `centroids`).
CENTROIDS_FORMAT = "1"


def centroid(vectors: Sequence[Sequence[float]]) -> bytes | None:
    """The unit-length mean of a note's chunk vectors as a row's data; None for fewer than
    two chunks or a mean of length zero."""
    import numpy as np

    return _unit(np.asarray(vectors, dtype=np.float64).sum(axis=0), len(vectors)) if vectors else None


def _unit(total: Any, count: int) -> bytes | None:
    """A row's data from the sum of a note's `count` chunk vectors (the mean's direction)."""
    import numpy as np

    norm = float(np.linalg.norm(total))
    if count < 2 or not np.isfinite(norm) or norm == 0.0:
        return None
    return (total / norm).astype("<f4").tobytes()


class CentroidRows(Store):
    def centroids(self, paths: Iterable[str]) -> dict[str, bytes]:
        """path -> centroid (float32 bytes) of those of `paths` that have a row."""
        out: dict[str, bytes] = {}
        keys = list(dict.fromkeys(paths))
        try:
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ", ".join("?" for _ in part)
                for path, data in self.conn.execute(f"SELECT path, data FROM centroids WHERE path IN ({marks})", part):
                    if isinstance(data, bytes):
                        out[path] = data
        except sqlite3.OperationalError:
            return {}  # a state db opened read-only before the table existed: best chunks only
        return out

    def record_centroids(self, notes: Mapping[str, Sequence[Sequence[float]]]) -> None:
        """path -> its chunk vectors: replaces each path's row, or drops it when the note
        has one chunk."""
        rows = {path: data for path, vectors in notes.items() if (data := centroid(vectors)) is not None}
        self._replace(notes, rows)

    def record_centroid_sums(self, sums: Mapping[str, tuple[Any, int]]) -> None:
        """path -> (sum of its chunk vectors, how many): as record_centroids."""
        rows = {path: data for path, (total, n) in sums.items() if (data := _unit(total, n)) is not None}
        self._replace(sums, rows)

    def _replace(self, paths: Iterable[str], rows: Mapping[str, bytes]) -> None:
        self.drop_centroids(paths)
        self.conn.executemany("INSERT INTO centroids VALUES (?, ?)", list(rows.items()))

    def drop_centroids(self, paths: Iterable[str]) -> None:
        self.conn.executemany("DELETE FROM centroids WHERE path=?", [(p,) for p in paths])

    def centroids_current(self) -> bool:
        return self.get_meta("centroids") == CENTROIDS_FORMAT

    def reset_centroids(self, complete: bool) -> None:
        """Empty the table; `complete` when the vectors are gone too (nothing to rebuild)."""
        self._writable()
        self.conn.execute("DELETE FROM centroids")
        if complete:
            self.set_meta("centroids", CENTROIDS_FORMAT)
        else:
            self.conn.execute("DELETE FROM meta WHERE key='centroids'")

    def centroids_complete(self) -> None:
        self.set_meta("centroids", CENTROIDS_FORMAT)


def similarities(vector: Sequence[float], rows: Mapping[str, bytes]) -> dict[str, float]:
    """path -> cosine similarity of `vector` to each row's centroid (rows are unit length)."""
    import numpy as np

    if not rows:
        return {}
    q = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    if norm == 0.0 or not np.isfinite(norm):
        return {}
    # rows of another size (another model's: the table is cleared with the collection, or a
    # damaged row) are not compared
    paths = [p for p, data in rows.items() if len(data) == 4 * q.shape[0]]
    if not paths:
        return {}
    matrix = np.frombuffer(b"".join(rows[p] for p in paths), dtype="<f4").reshape(len(paths), -1)
    return {p: float(v) for p, v in zip(paths, matrix @ (q / norm), strict=True)}
