"""The `edges` table (links resolved among all notes) and the generations a process holding
derived state in memory checks (the edge log, the names token: index/views.py)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Iterator

from vaultmem.index.statedb.base import Store
from vaultmem.index.statedb.records import EDGE_LOG_KEEP, EDGE_LOG_MAX_SOURCES, Edge


class EdgeRows(Store):
    # --- edges ------------------------------------------------------------------------

    def replace_edges(self, edges: Iterable[Edge], sources: Iterable[str] | None = None) -> None:
        """Replace every edge, or (with `sources`) only the edges leaving those notes."""
        if sources is None:
            self.conn.execute("DELETE FROM edges")
        else:
            self.conn.executemany("DELETE FROM edges WHERE src=?", [(p,) for p in sources])
        self.conn.executemany(
            "INSERT INTO edges (src, dst, kind, target, heading, label) VALUES (?, ?, ?, ?, ?, ?)",
            [(e.src, e.dst, e.kind, e.target, e.heading, e.label) for e in edges],
        )

    def note_paths(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT path FROM files WHERE status='note'")]

    def projects(self) -> list[str]:
        """Projects that have notes."""
        rows = self.conn.execute("SELECT DISTINCT project FROM files WHERE project IS NOT NULL AND status='note'")
        return [r[0] for r in rows]

    def names(self) -> list[tuple[str, str, str, tuple[str, ...]]]:
        """(path, id, title, aliases) of every note: what link targets resolve against."""
        rows = self.conn.execute("SELECT path, id, title, aliases FROM files WHERE status='note'")
        return [(p, i or p, t or "", tuple(json.loads(a)) if a != "[]" else ()) for p, i, t, a in rows]

    def edges_from(self, path: str) -> list[Edge]:
        return [
            Edge(*r)
            for r in self.conn.execute("SELECT src, dst, kind, target, heading, label FROM edges WHERE src=?", (path,))
        ]

    def edges_to(self, path: str) -> list[Edge]:
        return [
            Edge(*r)
            for r in self.conn.execute("SELECT src, dst, kind, target, heading, label FROM edges WHERE dst=?", (path,))
        ]

    def edge_targets(self) -> Iterator[tuple[str, str]]:
        """(src, target text) of every edge."""
        return self.conn.execute("SELECT src, target FROM edges")

    def all_edges(self) -> list[Edge]:
        return [Edge(*r) for r in self.conn.execute("SELECT src, dst, kind, target, heading, label FROM edges")]

    def edges_of(self, sources: Iterable[str]) -> list[Edge]:
        """The edges leaving any of `sources`, in table order (one query however many)."""
        rows = self.conn.execute(
            "SELECT src, dst, kind, target, heading, label FROM edges "
            "WHERE src IN (SELECT value FROM json_each(?)) ORDER BY rowid",
            (json.dumps(list(sources), ensure_ascii=False),),
        )
        return [Edge(*r) for r in rows]

    # --- generations: what a process holding derived state in memory checks -------------
    # Tokens are random, never counters: a db made anew (`index --full`, healing) starts no
    # sequence a process may still hold a graph or Resolver of.

    def edges_generation(self) -> str | None:
        """The token of the edges table's current content (None: no edges were ever built)."""
        return self.get_meta("edges_generation")

    def new_edges_generation(self, sources: Iterable[str] | None) -> None:
        """Record, in the writer's transaction, that the edges table changed: a new token,
        and (`sources`: the only notes whose edges were replaced, gone notes included) a log
        row from the previous one. None: everything may have changed."""
        previous = self.edges_generation()
        # Digits: a vaultmem before the log read this as a counter, and may share the db.
        token = str(secrets.randbits(63))
        self.set_meta("edges_generation", token)
        changed = None if sources is None else sorted(set(sources))
        if previous is None or changed is None or len(changed) > EDGE_LOG_MAX_SOURCES:
            return  # a reader holding `previous` finds no row: it rebuilds
        self.conn.execute(
            "INSERT INTO edge_log (generation, previous, sources) VALUES (?, ?, ?)",
            (token, previous, json.dumps(changed, ensure_ascii=False)),
        )
        self.conn.execute("DELETE FROM edge_log WHERE rowid <= (SELECT max(rowid) FROM edge_log) - ?", (EDGE_LOG_KEEP,))

    def edge_sources_between(self, old: str, new: str, limit: int = EDGE_LOG_MAX_SOURCES) -> set[str] | None:
        """The notes whose edges changed from generation `old` to `new`, or None when the log
        cannot tell (a full rebuild between, the log does not reach back that far) or they
        are more than `limit`."""
        changed: set[str] = set()
        current = new
        for _ in range(EDGE_LOG_KEEP + 1):
            if current == old:
                return changed
            row = self.conn.execute("SELECT previous, sources FROM edge_log WHERE generation=?", (current,)).fetchone()
            if row is None:
                return None
            changed.update(json.loads(row[1]))
            if len(changed) > limit:
                return None
            current = row[0]
        return None

    def names_token(self) -> str | None:
        """The token of the notes' names (db.names()), replaced with every change of them."""
        return self.get_meta("names_token")

    def new_names_token(self) -> str:
        token = secrets.token_hex(12)
        self.set_meta("names_token", token)
        return token
