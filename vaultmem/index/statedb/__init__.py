"""The state db: one SQLite file under .vaultmem/ recording what every note file was when
last read, its parsed metadata and links, and how far each derived index has caught up.

Rows are never the truth: deleting the file loses nothing. Each derived index keeps a
per-row marker (`ft_hash`, `vec_hash`) of the content it holds, so every index catches up
on its own and a crash anywhere leaves a state the next run repairs. A deleted file stays
as a tombstone until every index has dropped it.

All of vaultmem's SQL is here, as named queries; so is the one other SQLite file, the
embedding cache of `reference search` (EmbeddingCache).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vaultmem.errors import VaultmemError
from vaultmem.index.healing import Damaged, sqlite_problem
from vaultmem.index.statedb.centroids import CentroidRows
from vaultmem.index.statedb.edges import EdgeRows
from vaultmem.index.statedb.embedding_cache import EmbeddingCache
from vaultmem.index.statedb.files import FileRows
from vaultmem.index.statedb.passage_terms import PassageTermRows
from vaultmem.index.statedb.progress import IndexProgress
from vaultmem.index.statedb.records import (
    _COMPANIONS,
    _SCHEMA,
    EDGE_LOG_KEEP,
    EDGE_LOG_MAX_SOURCES,
    FILTER_COLUMNS,
    RECORD_CACHE_MAX,
    SCHEMA_VERSION,
    Edge,
    NoteRecord,
    _create,
    _lower,
    _unwritable,
    filter_record,
)

__all__ = [
    "EDGE_LOG_KEEP",
    "EDGE_LOG_MAX_SOURCES",
    "FILTER_COLUMNS",
    "RECORD_CACHE_MAX",
    "SCHEMA_VERSION",
    "Edge",
    "EmbeddingCache",
    "NoteRecord",
    "StateDB",
    "filter_record",
]


class StateDB(FileRows, IndexProgress, EdgeRows, PassageTermRows, CentroidRows):
    """Thin access layer over the SQLite file. Not thread-safe; one per thread/process."""

    def __init__(self, path: Path) -> None:
        """Open (or create) the db; `Damaged` when the file cannot be read as one
        (healing.open_or_rebuild then sets it aside and opens a new one)."""
        self.path = path
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # No -wal file: no connection is open, so nobody is extending the file and its
        # header's page count must match its size (see healing.sqlite_problem).
        wal = path.with_name(path.name + "-wal")
        problem = sqlite_problem(path, check_size=not wal.exists())
        if problem is not None:
            raise Damaged("state db", path, problem, _COMPANIONS)
        self.created = not path.exists()
        if self.created:
            _create(path)
        # Why the db is open read-only (a full disk, a folder that cannot be written): a
        # write then fails with this error, reads go on.
        self.unwritable: VaultmemError | None = None
        self.conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            self._open()
        except sqlite3.OperationalError as exc:  # locked, busy, out of disk: not damage
            self.conn.close()
            self.unwritable = _unwritable(path, exc)
            if self.unwritable is None or self.created:
                raise
            # WAL mode needs its -wal and -shm files, which SQLite removes on the last close:
            # with no room (or no right) to make them again, read the file as it stands.
            self.conn = sqlite3.connect(
                f"{path.resolve().as_uri()}?immutable=1", uri=True, isolation_level=None, check_same_thread=False
            )
            self._open(read_only=True)
        except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed"
            self.conn.close()
            raise Damaged("state db", path, str(exc), _COMPANIONS) from None

    def _open(self, read_only: bool = False) -> None:
        # SQLite's NOCASE and lower() fold ASCII only; "Café" and "CAFÉ" must still collide.
        self.conn.create_function("vm_lower", 1, _lower, deterministic=True)
        self._records: dict[str, NoteRecord] = {}
        self._records_key: tuple[int, int] | None = None
        if read_only:
            self.conn.execute("SELECT count(*) FROM files").fetchone()
            return
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(_SCHEMA)
        self.conn.execute("SELECT count(*) FROM files").fetchone()  # reads the table's pages
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            # Derived state: an old layout is dropped and rebuilt, never migrated.
            self.conn.executescript(
                "DROP TABLE files; DROP TABLE edges; DROP TABLE meta; DROP TABLE IF EXISTS writes; "
                "DROP TABLE IF EXISTS edge_log; DROP TABLE IF EXISTS passage_terms; DROP TABLE IF EXISTS centroids;"
            )
            self.conn.executescript(_SCHEMA)
            self.set_meta("schema_version", SCHEMA_VERSION)
            self.created = True

    def close(self) -> None:
        self.conn.close()
