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

import json
import os
import secrets
import sqlite3
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.errors import DiskFull, NotWritable, VaultmemError, environment_error
from vaultmem.index.healing import Damaged, sqlite_problem

SCHEMA_VERSION = "3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    status TEXT NOT NULL,          -- note | unreadable | deleted
    id TEXT,
    id_derived INTEGER NOT NULL DEFAULT 0,
    title TEXT,
    type TEXT,
    scope TEXT,
    owner TEXT,
    project TEXT,
    placed INTEGER NOT NULL DEFAULT 1,
    parent TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    aliases TEXT NOT NULL DEFAULT '[]',
    created TEXT,
    updated TEXT,
    expires TEXT,
    trust REAL,
    confidence REAL,
    importance REAL,
    version INTEGER NOT NULL DEFAULT 0,
    links TEXT NOT NULL DEFAULT '[]',
    problems TEXT NOT NULL DEFAULT '[]',
    extra TEXT NOT NULL DEFAULT '{}',
    ft_hash TEXT,                  -- content hash held by the fulltext index, or NULL
    vec_hash TEXT                  -- content hash held by the vector index, or NULL
);
CREATE INDEX IF NOT EXISTS files_id ON files(id);
CREATE INDEX IF NOT EXISTS files_id_nocase ON files(id COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS files_title ON files(title COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS files_status ON files(status);
CREATE TABLE IF NOT EXISTS edges (
    src TEXT NOT NULL,
    dst TEXT,                      -- NULL: dangling
    kind TEXT NOT NULL,            -- link | embed | parent
    target TEXT NOT NULL,
    heading TEXT,
    label TEXT
);
-- The last version known for a path (file hash, effective version): what vaultmem itself
-- wrote there (any other content is an edit by hand, a new version, SPEC §2, even before a
-- reconcile has seen the write) or what a reconcile counted. Survives `index --full`.
CREATE TABLE IF NOT EXISTS writes (path TEXT PRIMARY KEY, hash TEXT NOT NULL, version INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
-- Which notes' edges each change of the edges table replaced (meta `edges_generation` names
-- the latest): a process holding the link graph in memory (the watcher) updates it for those
-- notes instead of rebuilding it. The newest EDGE_LOG_KEEP only; a full rebuild, or a change
-- of more than EDGE_LOG_MAX_SOURCES notes, records no row: readers then rebuild.
CREATE TABLE IF NOT EXISTS edge_log (generation TEXT PRIMARY KEY, previous TEXT NOT NULL, sources TEXT NOT NULL);
"""

EDGE_LOG_KEEP = 64
EDGE_LOG_MAX_SOURCES = 5000


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """One row: everything search, graph and access need without opening the file."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    status: str
    id: str | None = None
    id_derived: bool = False
    title: str | None = None
    type: str | None = None
    scope: str | None = None
    owner: str | None = None
    project: str | None = None
    placed: bool = True
    parent: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    created: str | None = None
    updated: str | None = None
    expires: str | None = None
    trust: float | None = None
    confidence: float | None = None
    importance: float | None = None
    version: int = 0
    links: tuple[dict[str, Any], ...] = ()
    problems: tuple[dict[str, str], ...] = ()
    extra: dict[str, Any] | None = None
    ft_hash: str | None = None
    vec_hash: str | None = None

    @property
    def is_note(self) -> bool:
        return self.status == "note"


_COLUMNS = [f for f in NoteRecord.__dataclass_fields__]
_JSON_COLUMNS = {"tags", "aliases", "links", "problems", "extra"}


def _to_row(rec: NoteRecord) -> tuple[Any, ...]:
    values = []
    for name in _COLUMNS:
        value = getattr(rec, name)
        if name in _JSON_COLUMNS:
            value = json.dumps(list(value) if isinstance(value, tuple) else (value or {}), ensure_ascii=False)
        elif isinstance(value, bool):
            value = int(value)
        values.append(value)
    return tuple(values)


_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM files"
_JSON_AT = tuple(i for i, name in enumerate(_COLUMNS) if name in _JSON_COLUMNS)
_BOOL_AT = tuple(_COLUMNS.index(name) for name in ("id_derived", "placed"))


def _from_row(row: Iterable[Any]) -> NoteRecord:
    """A record from the values of `_SELECT`, in column order. Searches decode ~150 rows,
    so this skips json for the empty lists and objects most rows hold (~2x faster)."""
    values = list(row)
    for i in _JSON_AT:
        raw = values[i]
        if raw == "[]":
            values[i] = ()
        elif raw == "{}":
            values[i] = {}
        else:
            loaded = json.loads(raw)
            values[i] = tuple(loaded) if isinstance(loaded, list) else loaded
    for i in _BOOL_AT:
        values[i] = bool(values[i])
    return NoteRecord(*values)


def _lower(value: str | None) -> str | None:
    return value.lower() if isinstance(value, str) else value


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str | None
    kind: str
    target: str
    heading: str | None = None
    label: str | None = None


# The columns of a note that search filters test (filter_rows, filter_record).
FILTER_COLUMNS = (
    "path", "size", "mtime_ns", "hash", "id", "type", "scope", "owner", "project", "placed", "tags",
    "created", "updated", "expires", "trust", "confidence", "importance",
)  # fmt: skip


def filter_record(row: Sequence[Any]) -> NoteRecord:
    """A note's record from its `filter_rows` row: the columns filters test, the rest
    left at their defaults."""
    data = dict(zip(FILTER_COLUMNS, row, strict=True))
    data["placed"] = bool(data["placed"])
    raw = data["tags"]
    data["tags"] = tuple(json.loads(raw)) if raw != "[]" else ()
    return NoteRecord(status="note", **data)


# Rows `get` and `by_paths` keep decoded between changes: decoding the JSON columns is most
# of what a search spends on ~150 rows. Bounded so a 50k-note vault cannot hold them all.
RECORD_CACHE_MAX = 20_000


_COMPANIONS = ("-wal", "-shm")  # go aside with a damaged db: never meet a new one


def _unwritable(path: Path, exc: sqlite3.OperationalError) -> VaultmemError | None:
    """Why opening the db for writing failed, when the machine is the reason: no space left
    (SQLite says "disk I/O error" when it cannot make its -shm file), or no right to write."""
    known = environment_error(exc)
    if known is not None:
        return known
    if "disk i/o error" not in str(exc).lower():
        return None
    try:
        free = os.statvfs(path.parent).f_bavail
    except OSError:
        return None
    if free == 0:
        return DiskFull(
            f"cannot write the index ({path.parent}): no space left on the device; retry once there is room"
        )
    if not os.access(path.parent, os.W_OK):
        return NotWritable(f"cannot write the index ({path.parent}): the folder cannot be written")
    return None


def _create(path: Path) -> None:
    """A new, empty db in WAL mode, put in place whole: an empty `state.db` is then always
    damage, never a db another process is just creating."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    conn = sqlite3.connect(tmp)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()
    os.chmod(tmp, 0o600)  # SQLite gives its -wal and -shm files the db's own mode
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass  # another process made it first: use theirs
    finally:
        tmp.unlink(missing_ok=True)


class StateDB:
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
                "DROP TABLE IF EXISTS edge_log;"
            )
            self.conn.executescript(_SCHEMA)
            self.set_meta("schema_version", SCHEMA_VERSION)
            self.created = True

    def close(self) -> None:
        self.conn.close()

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
        reconcile counted. Kept through `index --full`, so hand edits once counted stay
        counted and a version never goes back."""
        self._writable()
        self.conn.executemany("INSERT OR REPLACE INTO writes(path, hash, version) VALUES (?, ?, ?)", list(items))

    def writes_of(self, paths: Iterable[str]) -> dict[str, tuple[str, int]]:
        """path -> (file hash, version) of vaultmem's own last write there."""
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

    def notes_titled(self, title: str, scope: str | None = None) -> list[NoteRecord]:
        """Notes (of `scope`, if given) whose title equals `title` in any letter case
        (Unicode-aware). An ASCII title uses the NOCASE index; only a non-ASCII one scans."""
        where, params = ("+status='note'", ()) if scope is None else ("+status='note' AND scope=?", (scope,))
        if title.isascii():
            return self._select(f"{where} AND title = ? COLLATE NOCASE", (*params, title))
        return self._select(f"{where} AND vm_lower(title) = ?", (*params, title.lower()))

    def notes_with_alias_text(self, alias: str) -> list[NoteRecord]:
        """Notes whose aliases contain `alias` in any letter case: a superset (a longer alias
        containing it matches too), which the caller narrows to exact aliases."""
        needle = json.dumps(alias.lower(), ensure_ascii=False)[1:-1]  # as the JSON column spells it
        return self._select("status='note' AND aliases != '[]' AND vm_lower(aliases) LIKE ?", (f"%{needle}%",))

    def notes_with_body(self, scope: str, note_type: str, body_hash: str) -> list[NoteRecord]:
        """Notes of this scope and type whose body has this hash (duplicates of a write)."""
        return self._select(
            "status='note' AND scope=? AND type=? AND json_extract(extra, '$.body_hash') = ?",
            (scope, note_type, body_hash),
        )

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


class EmbeddingCache:
    """Chunk embeddings by (fingerprint, text hash) so a topic is embedded once."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, timeout=30.0)
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS vec (fp TEXT, key TEXT, dims INTEGER, data BLOB, PRIMARY KEY (fp, key))"
        )

    def get_many(self, fp: str, keys: Sequence[str]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            batch = list(keys[start : start + 500])
            marks = ",".join("?" for _ in batch)
            for key, dims, data in self.conn.execute(
                f"SELECT key, dims, data FROM vec WHERE fp=? AND key IN ({marks})", (fp, *batch)
            ):
                out[key] = list(struct.unpack(f"{dims}f", data))
        return out

    def put_many(self, fp: str, items: dict[str, list[float]]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO vec VALUES (?, ?, ?, ?)",
                [(fp, k, len(v), struct.pack(f"{len(v)}f", *v)) for k, v in items.items()],
            )

    def close(self) -> None:
        self.conn.close()
