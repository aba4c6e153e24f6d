"""Each note's passage terms (index/passage_terms.py), written with its lexical index
entry: a search reads ~1.5 kB per candidate instead of reading and scanning its file to
measure how much of the query one sentence or line says (search/passages.py).

Rows are keyed by path and carry the content hash they were made from; a row whose hash
is not the note's is ignored (the search scans the file, as when there is no row)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from vaultmem.index.statedb.base import Store
from vaultmem.index.statedb.records import NoteRecord

# The layout of the rows (index/passage_terms.py); another layout empties the table and
# the indexer makes every row again (meta `passage_terms`). Text as it is: zlib halved the
# table but unpacking took ~2 ms of each search at 10k notes (~1.5 kB a note of 2.9 kB).
PASSAGE_TERMS_FORMAT = "2"


class PassageTermRows(Store):
    def passage_terms(self, paths: Iterable[str]) -> dict[str, tuple[str, str]]:
        """path -> (content hash, passage terms) of those of `paths` that have a row."""
        out: dict[str, tuple[str, str]] = {}
        keys = list(dict.fromkeys(paths))
        try:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ", ".join("?" for _ in chunk)
                for path, content, data in self.conn.execute(
                    f"SELECT path, hash, terms FROM passage_terms WHERE path IN ({marks})", chunk
                ):
                    if isinstance(data, str):  # else not a row of this layout: scanned instead
                        out[path] = (content, data)
        except sqlite3.OperationalError:
            # a state db opened read-only before the table existed: the search scans the
            # files instead
            return {}
        return out

    def record_passage_terms(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """(path, content hash, passage terms) rows, replacing any earlier row of the path."""
        self.conn.executemany("INSERT OR REPLACE INTO passage_terms VALUES (?, ?, ?)", list(rows))

    def drop_passage_terms(self, paths: Iterable[str]) -> None:
        self.conn.executemany("DELETE FROM passage_terms WHERE path=?", [(p,) for p in paths])

    def passage_terms_stale(self) -> list[NoteRecord] | None:
        """When the table is not known to hold a row for every note of the lexical index
        (a state db from before it, a catalog cleared, rows of an older layout): empties
        it and returns those notes, for the indexer to make their rows and then call
        `passage_terms_complete`. None when the table is complete."""
        if self.get_meta("passage_terms") == PASSAGE_TERMS_FORMAT:
            return None
        self._writable()
        self.conn.execute("DELETE FROM passage_terms")
        return self._select("status='note' AND ft_hash = hash")

    def passage_terms_complete(self) -> None:
        self.set_meta("passage_terms", PASSAGE_TERMS_FORMAT)

    def passage_terms_incomplete(self) -> None:
        self._writable()
        self.conn.execute("DELETE FROM meta WHERE key='passage_terms'")
