"""The state db's rows: the schema, NoteRecord and Edge, and how they go to and from SQL."""

from __future__ import annotations

import json
import os
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.errors import DiskFull, NotWritable, VaultmemError, environment_error

SCHEMA_VERSION = "4"  # 4: scope folders and owners matched without ASCII case (layout.classify)

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
-- a conversation memory's session: the turns of its folder said around it (search/sessions.py)
CREATE INDEX IF NOT EXISTS files_turns ON files(type, owner, created);
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
-- What `lint` found scanning a file's content for secrets (vault/secrets.py), by the content's
-- sha256: scanning is slow (~0.5 ms a line), a file's content does not change under its hash.
CREATE TABLE IF NOT EXISTS secret_scans (hash TEXT PRIMARY KEY, found TEXT NOT NULL);
-- Each note's terms by passage, from the content `hash` (statedb/passage_terms.py).
CREATE TABLE IF NOT EXISTS passage_terms (path TEXT PRIMARY KEY, hash TEXT NOT NULL, terms TEXT NOT NULL);
-- The centroid of each multi-chunk note's chunk vectors (statedb/centroids.py).
CREATE TABLE IF NOT EXISTS centroids (path TEXT PRIMARY KEY, data BLOB NOT NULL);
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
    """vm_lower: letter case and Unicode normal form left out (`Café` typed as e + U+0301
    is the title `café`), as name comparisons need: index/resolve.py's name_key, the rule
    links resolve by, which cannot be imported here (resolve.py imports this package)."""
    return unicodedata.normalize("NFC", value).lower() if isinstance(value, str) else value


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
