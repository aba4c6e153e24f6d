"""What every store of the state db shares: the connection, the meta table, transactions,
and the SQL that reads rows into NoteRecords (records.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from vaultmem.errors import VaultmemError
from vaultmem.index.statedb.records import _SELECT, RECORD_CACHE_MAX, NoteRecord, _from_row


class Store:
    """The state db's connection and what every concern's queries build on."""

    conn: sqlite3.Connection
    unwritable: VaultmemError | None
    _records: dict[str, NoteRecord]
    _records_key: tuple[int, int] | None

    def change_key(self) -> tuple[int, int]:
        """Changes whenever any row may have changed: SQLite's data_version moves when another
        connection commits, total_changes with every row this connection writes."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        return (int(version), self.conn.total_changes)

    def _record_cache(self) -> dict[str, NoteRecord]:
        key = self.change_key()
        if key != self._records_key or len(self._records) > RECORD_CACHE_MAX:
            self._records = {}
            self._records_key = key
        return self._records

    # --- meta -------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._writable()
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # --- transactions -----------------------------------------------------------------

    def begin(self) -> None:
        self._writable()
        self.conn.execute("BEGIN IMMEDIATE")

    def _writable(self) -> None:
        if self.unwritable is not None:
            raise self.unwritable

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE … COMMIT, rolled back when the block raises: a connection left
        inside a failed transaction (the watcher keeps its connection) would refuse every
        later `begin` and hold the write lock."""
        self.begin()
        try:
            yield
        except BaseException:
            self.rollback()
            raise
        self.commit()

    def _select(self, where: str = "1", params: tuple[Any, ...] = ()) -> list[NoteRecord]:
        return [_from_row(r) for r in self.conn.execute(f"{_SELECT} WHERE {where}", params)]

    def _select_light(self, where: str, params: tuple[Any, ...] = ()) -> list[NoteRecord]:
        """Rows without their JSON columns (tags, links, problems, …): a scan over every
        note that needs only access, type and dates skips most of the decoding cost."""
        columns = (
            "path", "size", "mtime_ns", "hash", "status", "id", "id_derived", "title", "type", "scope", "owner",
            "project", "placed", "parent", "created", "updated", "expires", "trust", "confidence", "importance",
            "version",
        )  # fmt: skip
        cur = self.conn.cursor()
        cur.execute(f"SELECT {', '.join(columns)} FROM files WHERE {where}", params)
        out = []
        for row in cur:
            data = dict(zip(columns, row, strict=True))
            data["id_derived"] = bool(data["id_derived"])
            data["placed"] = bool(data["placed"])
            out.append(NoteRecord(**data))
        return out
