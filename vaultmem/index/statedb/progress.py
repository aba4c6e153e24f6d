"""How far each derived index has caught up: per-row markers (`ft_hash`, `vec_hash`) of
the content each holds, and what a rebuild resets."""

from __future__ import annotations

from collections.abc import Iterable

from vaultmem.index.statedb.base import Store
from vaultmem.index.statedb.records import NoteRecord


class IndexProgress(Store):
    # --- per-index progress -----------------------------------------------------------

    def pending(self, column: str) -> tuple[list[NoteRecord], list[str]]:
        """(notes whose content the index does not hold yet, paths the index must drop).

        A tombstone is dropped even when the marker says the index never had it: a crash
        between an index commit and the marker update must not leave an orphan behind."""
        assert column in ("ft_hash", "vec_hash")
        todo = self._select(f"status='note' AND ({column} IS NULL OR {column} != hash)")
        drop = [
            r[0]
            for r in self.conn.execute(
                f"SELECT path FROM files WHERE (status='deleted' AND ({column} IS NULL OR {column} != 'gone')) "
                f"OR (status='unreadable' AND {column} IS NOT NULL AND {column} != 'gone')"
            )
        ]
        return todo, drop

    def pending_count(self, column: str) -> int:
        todo, drop = self.pending(column)
        return len(todo) + len(drop)

    def mark_indexed(self, column: str, items: Iterable[tuple[str, str]]) -> None:
        """Record that the index holds `hash` for `path` (only if the row still has it)."""
        assert column in ("ft_hash", "vec_hash")
        self.conn.executemany(
            f"UPDATE files SET {column}=? WHERE path=? AND hash=? AND status='note'", [(h, p, h) for p, h in items]
        )

    def mark_dropped(self, column: str, paths: Iterable[str]) -> None:
        assert column in ("ft_hash", "vec_hash")
        self.conn.executemany(
            f"UPDATE files SET {column}='gone' WHERE path=? AND status!='note'", [(p,) for p in paths]
        )

    def reset_index(self, column: str) -> None:
        assert column in ("ft_hash", "vec_hash")
        self.conn.execute(f"UPDATE files SET {column}=NULL")

    def clear_catalog(self) -> None:
        """Forget every row, edge and meta value but the schema version."""
        self.conn.execute("DELETE FROM files")
        self.conn.execute("DELETE FROM edges")
        self.conn.execute("DELETE FROM edge_log")
        self.conn.execute("DELETE FROM passage_terms")
        self.conn.execute("DELETE FROM centroids")
        self.conn.execute("DELETE FROM meta WHERE key != 'schema_version'")

    def distrust_indexes(self) -> None:
        """Keep the rows (what the files are, carried ids) but record that no index holds
        anything, and forget tombstones and the vector identity."""
        self.conn.execute("UPDATE files SET ft_hash=NULL, vec_hash=NULL")
        self.conn.execute("DELETE FROM files WHERE status='deleted'")
        # Without a recorded fingerprint the vector stage starts a fresh collection.
        self.conn.execute("DELETE FROM meta WHERE key IN ('vector_fingerprint', 'vector_collection')")

    def embedded_tombstones(self) -> list[tuple[str, str, str]]:
        """(path, hash, title) of deleted notes whose vectors the vector index still holds."""
        rows = self.conn.execute("SELECT path, hash, title FROM files WHERE status='deleted' AND vec_hash=hash")
        return [(path, h, title) for path, h, title in rows]

    def has_vectors(self) -> bool:
        """Whether any row records vectors held by the vector index."""
        row = self.conn.execute(
            "SELECT 1 FROM files WHERE vec_hash IS NOT NULL AND vec_hash != 'gone' LIMIT 1"
        ).fetchone()
        return row is not None
