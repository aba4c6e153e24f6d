"""The `files` and `writes` tables: what every note file was when last read, and what
vaultmem itself wrote (so that any other content is a hand edit)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from vaultmem.index.statedb.base import Store
from vaultmem.index.statedb.records import _COLUMNS, _SELECT, FILTER_COLUMNS, NoteRecord, _from_row, _lower, _to_row


class FileRows(Store):
    # --- files ------------------------------------------------------------------------

    def stats(self) -> dict[str, tuple[int, int, str, str]]:
        """path -> (size, mtime_ns, hash, status) for every live row (not tombstones)."""
        cur = self.conn.execute("SELECT path, size, mtime_ns, hash, status FROM files WHERE status != 'deleted'")
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in cur}

    def upsert(self, records: Iterable[NoteRecord]) -> None:
        placeholders = ", ".join("?" for _ in _COLUMNS)
        updates = ", ".join(f"{c}=excluded.{c}" for c in _COLUMNS if c not in ("path", "ft_hash", "vec_hash"))
        self.conn.executemany(
            f"INSERT INTO files ({', '.join(_COLUMNS)}) VALUES ({placeholders}) "
            f"ON CONFLICT(path) DO UPDATE SET {updates}",
            [_to_row(r) for r in records],
        )

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        self.conn.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", (size, mtime_ns, path))

    def tombstone(self, paths: Iterable[str]) -> None:
        self.conn.executemany("UPDATE files SET status='deleted' WHERE path=?", [(p,) for p in paths])

    def purge_tombstones(self, vectors_built: bool) -> None:
        """Forget deleted files once every index has dropped them."""
        if vectors_built:
            self.conn.execute("DELETE FROM files WHERE status='deleted' AND ft_hash='gone' AND vec_hash='gone'")
        else:
            self.conn.execute("DELETE FROM files WHERE status='deleted' AND ft_hash='gone'")

    def record_write(self, path: str, file_hash: str, version: int) -> None:
        self.record_versions([(path, file_hash, version)])

    def record_versions(self, items: Iterable[tuple[str, str, int]]) -> None:
        """Remember (path, file hash, effective version): what vaultmem wrote, and what a
        reconcile or a read counted. Kept through `index --full`, so hand edits once
        counted stay counted and a version never goes back."""
        self._writable()
        self.conn.executemany("INSERT OR REPLACE INTO writes(path, hash, version) VALUES (?, ?, ?)", list(items))

    def writes_of(self, paths: Iterable[str]) -> dict[str, tuple[str, int]]:
        """path -> (file hash, version) last recorded there: vaultmem's write, or a count."""
        out: dict[str, tuple[str, int]] = {}
        wanted = list(paths)
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ", ".join("?" for _ in chunk)
            for path, file_hash, version in self.conn.execute(
                f"SELECT path, hash, version FROM writes WHERE path IN ({marks})", chunk
            ):
                out[path] = (file_hash, int(version))
        return out

    def owners(self) -> list[str]:
        """Every ghost that owns a note (private, diary or inbox folders)."""
        return [r[0] for r in self.conn.execute("SELECT DISTINCT owner FROM files WHERE owner IS NOT NULL")]

    def secret_scans(self, hashes: Iterable[str]) -> dict[str, list[list[Any]]]:
        """content sha256 -> the secrets found in it as [[kind, line], …], for those scanned."""
        out: dict[str, list[list[Any]]] = {}
        keys = list(hashes)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for key, found in self.conn.execute(f"SELECT hash, found FROM secret_scans WHERE hash IN ({marks})", chunk):
                out[key] = json.loads(found)
        return out

    def record_secret_scans(self, scans: dict[str, list[list[Any]]]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO secret_scans VALUES (?, ?)", [(k, json.dumps(v)) for k, v in scans.items()]
            )

    def get(self, path: str) -> NoteRecord | None:
        cache = self._record_cache()
        rec = cache.get(path)
        if rec is None:
            row = self.conn.execute(f"{_SELECT} WHERE path=?", (path,)).fetchone()
            if row is None:
                return None
            rec = cache[path] = _from_row(row)
        return rec

    def notes(self) -> Iterator[NoteRecord]:
        for row in self.conn.execute(f"{_SELECT} WHERE status='note' ORDER BY path"):
            yield _from_row(row)

    def tombstones(self) -> list[NoteRecord]:
        """Deleted files some index has not dropped yet (`list --include-deleted`), by path."""
        return self._select_light("status='deleted' ORDER BY path")

    def light_notes(self, titled: bool = False) -> list[NoteRecord]:
        """Every note (only those with a title, with `titled`) without the JSON columns, by path."""
        if titled:
            return self._select_light("status='note' AND title IS NOT NULL AND title != '' ORDER BY path")
        return self._select_light("status='note' ORDER BY path")

    def by_id(self, note_id: str, any_case: bool = False) -> list[NoteRecord]:
        """Notes with this id; with `any_case`, in any ASCII letter case (ULIDs are Crockford
        base32, which is case-insensitive). `+status`: SQLite, left to itself, walks the
        status index (every note: ~20 ms at 50k notes) rather than the id's."""
        if any_case:
            return self._select("+status='note' AND id = ? COLLATE NOCASE", (note_id,))
        return self._select("+status='note' AND id=?", (note_id,))

    def by_former_id(self, note_id: str) -> list[NoteRecord]:
        """Notes that were known by `note_id` before `lint --fix` gave them a real id."""
        if not note_id.startswith("p-"):
            return []  # only derived ids are ever replaced
        return self._select(
            "status='note' AND extra LIKE ? AND EXISTS "
            "(SELECT 1 FROM json_each(files.extra, '$.former_ids') WHERE value = ?)",
            (f"%{note_id}%", note_id),
        )

    def notes_titled(self, title: str, scope: str | None = None) -> list[NoteRecord]:
        """Notes (of `scope`, if given) whose title equals `title` in any letter case
        (Unicode-aware). An ASCII title uses the NOCASE index; only a non-ASCII one scans."""
        where, params = ("+status='note'", ()) if scope is None else ("+status='note' AND scope=?", (scope,))
        if title.isascii():
            return self._select(f"{where} AND title = ? COLLATE NOCASE", (*params, title))
        return self._select(f"{where} AND vm_lower(title) = ?", (*params, _lower(title)))

    def notes_with_alias_text(self, alias: str) -> list[NoteRecord]:
        """Notes whose aliases contain `alias` in any letter case: a superset (a longer alias
        containing it matches too), which the caller narrows to exact aliases."""
        needle = json.dumps(_lower(alias), ensure_ascii=False)[1:-1]  # as the JSON column spells it
        return self._select("status='note' AND aliases != '[]' AND vm_lower(aliases) LIKE ?", (f"%{needle}%",))

    def notes_with_body(self, scope: str, note_type: str, body_hash: str) -> list[NoteRecord]:
        """Notes of this scope and type whose body has this hash (duplicates of a write)."""
        return self._select(
            "status='note' AND scope=? AND type=? AND json_extract(extra, '$.body_hash') = ?",
            (scope, note_type, body_hash),
        )

    def conversation_turns(
        self, scope: str | None, owner: str | None, project: str | None, since: str, until: str
    ) -> list[tuple[str, str, str]]:
        """(path, id, created) of the conversation memories of one folder (scope, owner,
        project) made from `since` to `until` (ISO-8601 UTC, as vaultmem writes dates), in
        the order they were said: by `created`, then id (ULIDs made in one write rise).
        Placed notes only: a file loose in `inbox/` has the scope, owner and project of
        `inbox/shared/` but nobody may read it, so it is no one's neighbour."""
        cur = self.conn.execute(
            "SELECT path, coalesce(id, path), created FROM files WHERE type='conversation' AND owner IS ? "
            "AND created BETWEEN ? AND ? AND scope IS ? AND project IS ? AND status='note' AND placed "
            "ORDER BY created, id",
            (owner, since, until, scope, project),
        )
        return [(r[0], r[1], r[2]) for r in cur]

    def notes_in_scope(self, scope: str) -> list[NoteRecord]:
        """The notes of one scope, oldest first (then by path)."""
        return self._select("status='note' AND scope=? ORDER BY created, path", (scope,))

    def note_locations(
        self, paths: Iterable[str] | None = None
    ) -> dict[str, tuple[str | None, str | None, str | None, bool]]:
        """path -> (scope, owner, project, placed) of every note (or of those of `paths` that
        are notes): who may see each, without decoding any row (what resolving links for one
        reader needs of all of them)."""
        if paths is None:
            rows = self.conn.execute("SELECT path, scope, owner, project, placed FROM files WHERE status='note'")
        else:
            # `+status`: each path's row, not the status index (by_id)
            rows = self.conn.execute(
                "SELECT path, scope, owner, project, placed FROM files "
                "WHERE +status='note' AND path IN (SELECT value FROM json_each(?))",
                (json.dumps(list(paths), ensure_ascii=False),),
            )
        return {path: (scope, owner, project, bool(placed)) for path, scope, owner, project, placed in rows}

    def filter_rows(self, paths: Iterable[str]) -> dict[str, tuple[Any, ...]]:
        """path -> the FILTER_COLUMNS of each of `paths` that is a note, as stored (JSON
        undecoded). Dense search checks ~100 notes against the filters for its nearest
        chunks; reading and decoding whole rows (links, extra) was most of that time."""
        rows = self.conn.execute(
            f"SELECT {', '.join(FILTER_COLUMNS)} FROM files "
            "WHERE +status='note' AND path IN (SELECT value FROM json_each(?))",  # +: see by_id
            (json.dumps(list(paths), ensure_ascii=False),),
        )
        return {row[0]: row for row in rows}

    def note_ids(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT id FROM files WHERE status='note'")}

    def by_paths(self, paths: Iterable[str]) -> dict[str, NoteRecord]:
        cache = self._record_cache()
        out: dict[str, NoteRecord] = {}
        wanted = []
        for path in paths:
            rec = cache.get(path)
            if rec is None:
                wanted.append(path)
            else:
                out[path] = rec
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for rec in self._select(f"path IN ({marks})", tuple(chunk)):
                out[rec.path] = cache[rec.path] = rec
        return out

    def error_problems(self) -> list[tuple[str, list[dict[str, str]]]]:
        """(path, problems) of the live rows with an error among their problems. Warnings
        are common (a vault of notes without ids has one on every row): SQL keeps only rows
        whose JSON names the error severity, so a reconcile never decodes the rest."""
        rows = self.conn.execute(
            "SELECT path, problems FROM files WHERE status != 'deleted' AND problems != '[]' "
            "AND problems LIKE '%\"error\"%' ORDER BY path"
        )
        return [(path, json.loads(raw)) for path, raw in rows]

    def count_by_scope(self) -> dict[str, int]:
        cur = self.conn.execute("SELECT scope, COUNT(*) FROM files WHERE status='note' GROUP BY scope")
        return {r[0]: r[1] for r in cur}
