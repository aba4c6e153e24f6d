"""The dense index: note chunks in Chroma, embedded (PersistentClient) or over http.

Vectors of different embedding fingerprints never mix: the collection name carries the
fingerprint, and a new fingerprint means a new, empty collection (the old one is dropped).
Filters run in Python on the state db's rows of the nearest chunks' notes (`pick`); every
chunk also carries its note's filter metadata, for Chroma's `where` when a narrow filter
leaves too few of them (both from the rules of filter_rules.py).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from vaultmem.errors import InvalidInput, VaultmemError
from vaultmem.index.chunking import Chunk
from vaultmem.index.documents import Filters, IndexDoc, filter_fields
from vaultmem.index.filter_rules import chroma_where, predicate
from vaultmem.index.healing import Damaged, sqlite_problem
from vaultmem.paths import CHROMA_DIR, CHROMA_STORE

log = logging.getLogger("vaultmem.index")

COLLECTION_PREFIX = "vaultmem"
TEXT_KEY = "text_key"  # chunk metadata: text_key() of the text its vector embeds
# How wide Chroma's HNSW search looks (ef). At Chroma's default (100) the 200 chunks a search
# of 10 notes asks for held 98.3% of the true nearest 200 for the Obsidian Help questions (the
# 40 of review's near-duplicate check 97.9%), some misses far nearer than the last chunk
# returned (0.55 against 0.78), and which ones changed when a process loaded the graph anew;
# at 400 (no fewer than the most chunks `nearest` asks for) 99.8% and 99.9%
# (docs/BENCHMARKS.md, "How wide the dense side looks").
SEARCH_EF = 400


class VectorStoreError(VaultmemError):
    code = "vector_store"


@dataclass(frozen=True, slots=True)
class DenseHit:
    path: str
    rank: int  # 1-based, by the note's best chunk
    distance: float  # cosine distance of the best chunk
    chunk: int  # index of the best chunk


def _short(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def collection_name(vault_key: str, fingerprint: str) -> str:
    return f"{COLLECTION_PREFIX}-{_short(vault_key)}-{_short(fingerprint)}"


def owner_key(path: str) -> str:
    """The prefix of every chunk id of the note at `path`: chunk ids are `{owner_key}-{index}`."""
    return _short(path)


def note_metadata(doc: IndexDoc) -> dict[str, Any]:
    """What every chunk of a note carries for filtering: the fields filter_rules tests."""
    meta: dict[str, Any] = {"path": doc.path, "note_id": doc.id, **filter_fields(doc)}
    for tag in doc.tags:
        meta[f"tag:{tag}"] = True
    return meta


def text_key(text: str) -> str:
    """The key of a chunk's embedded text: a chunk whose text has this key has this vector
    (in one collection, i.e. one fingerprint), whichever note or edit it comes from."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def chunk_metadata(doc: IndexDoc, chunk: Chunk, key: str = "") -> dict[str, Any]:
    meta = {**note_metadata(doc), "chunk": chunk.index, "heading": chunk.heading[:200]}
    if key:
        meta[TEXT_KEY] = key
    return meta


# short note key -> that note's `note_metadata`, for the keys it knows (see VectorIndex.search)
NoteLookup = Callable[[set[str]], Mapping[str, Mapping[str, Any]]]


def make_client(mode: str, state_dir: Path, url: str | None) -> Any:
    import chromadb
    from chromadb.config import Settings
    from chromadb.errors import ChromaError

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if mode == "http":
        if not url:
            raise InvalidInput("chroma mode http needs a url (chroma.url or VAULTMEM_CHROMA_URL)")
        parsed = urlparse(url if "://" in url else f"http://{url}")
        if not parsed.hostname:
            raise InvalidInput(f"invalid Chroma url {url!r}")
        try:
            return chromadb.HttpClient(
                host=parsed.hostname,
                port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                ssl=parsed.scheme == "https",
                settings=settings,
            )
        except Exception as exc:  # chromadb raises bare exceptions for connection failures
            raise VectorStoreError(f"cannot reach Chroma at {url}: {exc}") from None
    path = state_dir / CHROMA_DIR
    problem = store_problem(state_dir)
    if problem is not None:
        _forget_system(path)  # one this process made before the damage
        raise Damaged("vector store", path, problem)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=settings)
    except (ChromaError, OSError) as exc:  # e.g. InternalError "database disk image is malformed"
        _forget_system(path)
        raise Damaged("vector store", path, f"{type(exc).__name__}: {str(exc)[:100]}") from None


def _forget_system(path: Path) -> None:
    """Chroma keeps one system per store path for the whole process, even one that failed
    to start: drop this path's, so the client made after the store is set aside opens the
    new, empty folder (and other stores' clients live on)."""
    import contextlib

    from chromadb.api.shared_system_client import SharedSystemClient

    system = SharedSystemClient._identifier_to_system.pop(str(path), None)
    SharedSystemClient._identifier_to_refcount.pop(str(path), None)
    if system is not None:
        with contextlib.suppress(Exception):  # a half-started system may fail to stop too
            system.stop()


def store_problem(state_dir: Path) -> str | None:
    """Why the embedded Chroma store under `state_dir` cannot be whole, from its files
    alone (no chromadb import: `status` and every reconcile ask); None when it looks whole
    or does not exist yet. An emptied `chroma.sqlite3` would otherwise open as a new, empty
    store: vector search silently finding nothing."""
    path = state_dir / CHROMA_DIR
    if not os.path.lexists(path):
        return None
    if path.is_symlink() or not path.is_dir():
        return "not a directory"
    # Chroma's SQLite file uses a rollback journal: after every commit its size matches its
    # header, and it is written only under the index lock.
    return sqlite_problem(path / CHROMA_STORE)


def open_index(client: Any, vault_key: str, fingerprint: str, state_dir: Path | None) -> VectorIndex:
    """The collection of `fingerprint`; `Damaged` when Chroma cannot read the embedded
    store under `state_dir` (None: a Chroma server's errors are its own)."""
    from chromadb.errors import ChromaError

    try:
        return VectorIndex(client, vault_key, fingerprint)
    except ChromaError as exc:
        if state_dir is None:
            raise
        _forget_system(state_dir / CHROMA_DIR)
        raise Damaged("vector store", state_dir / CHROMA_DIR, f"{type(exc).__name__}: {str(exc)[:100]}") from None


class VectorIndex:
    def __init__(self, client: Any, vault_key: str, fingerprint: str) -> None:
        self.client = client
        self.fingerprint = fingerprint
        self.name = collection_name(vault_key, fingerprint)
        self._prefix = f"{COLLECTION_PREFIX}-{_short(vault_key)}-"
        self._count: int | None = None  # Chroma's count costs ~3 ms at 30k chunks; writes reset it
        # On a shared server, whose collection this is (`host|folder`), for the person who
        # looks after the server: a clone's collection outlives a clone deleted by hand.
        self._metadata: dict[str, Any] = {
            "hnsw:space": "cosine",
            "hnsw:search_ef": SEARCH_EF,
            "fingerprint": fingerprint,
        }
        if "|" in vault_key:
            self._metadata["clone"] = vault_key.split("|", 1)[1][:500]
        self.collection = client.get_or_create_collection(self.name, metadata=self._metadata, embedding_function=None)
        self._widen_search()

    def _widen_search(self) -> None:
        """A collection made before SEARCH_EF (or by another client) searches as wide, from
        its next load on (ef can change after a collection is made; M and construction ef
        cannot)."""
        hnsw = (getattr(self.collection, "configuration_json", None) or {}).get("hnsw") or {}
        if int(hnsw.get("ef_search", SEARCH_EF)) >= SEARCH_EF:
            return
        for wait in (0.05, 0.2, 0.8, None):
            try:
                self.collection.modify(configuration={"hnsw": {"ef_search": SEARCH_EF}})
                return
            except Exception as exc:  # a store that will not change it still searches, if narrower
                # another process (or Chroma's own background work) writing the store holds
                # its database for a moment: worth a short wait; anything else is not
                if wait is None or "locked" not in str(exc):
                    log.warning("Chroma collection %s keeps its search width: %s", self.name, str(exc)[:200])
                    return
                time.sleep(wait)

    def drop_other_fingerprints(self) -> list[str]:
        """Delete this vault's collections built with another embedding fingerprint."""
        dropped = []
        for col in self.client.list_collections():
            name = col if isinstance(col, str) else col.name
            if name.startswith(self._prefix) and name != self.name:
                self.client.delete_collection(name)
                dropped.append(name)
        return dropped

    def reset(self) -> None:
        self._count = None
        self.client.delete_collection(self.name)
        self.collection = self.client.get_or_create_collection(
            self.name, metadata=self._metadata, embedding_function=None
        )

    def delete_paths(self, paths: Iterable[str]) -> None:
        wanted = list(paths)
        self._count = None
        for start in range(0, len(wanted), 200):
            batch = wanted[start : start + 200]
            self.collection.delete(where={"path": {"$in": batch}} if len(batch) > 1 else {"path": batch[0]})

    def add(self, items: Sequence[tuple[IndexDoc, Chunk, list[float]]], keys: Sequence[str] | None = None) -> None:
        """Store chunks with their vectors; `keys` (text_key of each chunk's embedded text,
        in the same order) lets a later edit of the note keep the vectors of unchanged chunks."""
        self._count = None
        if keys is not None and len(keys) != len(items):
            raise ValueError("one key per chunk")
        for start in range(0, len(items), 1000):
            batch = items[start : start + 1000]
            batch_keys = keys[start : start + 1000] if keys is not None else [""] * len(batch)
            self.collection.upsert(
                ids=[f"{owner_key(doc.path)}-{chunk.index}" for doc, chunk, _ in batch],
                embeddings=[vec for _, _, vec in batch],
                metadatas=[
                    chunk_metadata(doc, chunk, key) for (doc, chunk, _), key in zip(batch, batch_keys, strict=True)
                ],
            )

    def chunks_of(self, path: str) -> list[tuple[int, str, list[float], str]]:
        """(chunk index, heading, vector, text key or "") of every chunk stored for `path`."""
        got = self.collection.get(where={"path": path}, include=["embeddings", "metadatas"])
        metas = got.get("metadatas") or []
        vectors = got.get("embeddings")
        if vectors is None or len(metas) != len(vectors):
            return []
        return [
            (int(m.get("chunk", 0)), str(m.get("heading") or ""), [float(x) for x in v], str(m.get(TEXT_KEY) or ""))
            for m, v in zip(metas, vectors, strict=True)
        ]

    def vectors_by_key(self, paths: Sequence[str]) -> dict[str, list[float]]:
        """text key -> vector of the stored chunks of `paths` that have a key (chunks stored
        before keys existed have none: they are embedded again)."""
        out: dict[str, list[float]] = {}
        for start in range(0, len(paths), 200):
            batch = list(paths[start : start + 200])
            where = {"path": {"$in": batch}} if len(batch) > 1 else {"path": batch[0]}
            got = self.collection.get(where=where, include=["embeddings", "metadatas"])
            metas = got.get("metadatas") or []
            vectors = got.get("embeddings")
            if vectors is None or len(metas) != len(vectors):
                continue
            for meta, vec in zip(metas, vectors, strict=True):
                key = meta.get(TEXT_KEY) if meta else None
                if key:
                    out[str(key)] = [float(x) for x in vec]
        return out

    def chunk_sums(self, page: int = 5000) -> dict[str, tuple[Any, int]]:
        """path -> (the sum of its stored chunk vectors, float64, and how many): a pass over
        the whole collection, a page at a time (a note's chunks may span pages)."""
        import numpy as np

        sums: dict[str, tuple[Any, int]] = {}
        offset = 0
        while True:
            got = self.collection.get(include=["embeddings", "metadatas"], limit=page, offset=offset)
            metas = got.get("metadatas") or []
            vectors = got.get("embeddings")
            if vectors is None or not len(metas):
                return sums
            for meta, vec in zip(metas, vectors, strict=True):
                path = meta.get("path") if meta else None
                if path:
                    total, n = sums.get(str(path), (0.0, 0))
                    sums[str(path)] = (np.asarray(vec, dtype=np.float64) + total, n + 1)
            offset += len(metas)

    def count(self) -> int:
        # Cached between this object's own writes: while a process holds the indexes it is
        # their only writer (the watcher, or one command under the writer lock).
        if self._count is None:
            self._count = int(self.collection.count())
        return self._count

    def search(self, vector: list[float], filters: Filters, limit: int, notes: NoteLookup) -> list[DenseHit]:
        """Nearest notes: chunks ranked by distance, a note scored by its best chunk."""
        return self.pick(self.nearest(vector, limit), filters, limit, notes)

    def nearest(self, vector: list[float], limit: int) -> Nearest:
        """The unfiltered nearest chunks for a search of `limit` notes, ids and distances
        only: the part of a dense search that runs in Chroma (and releases the GIL, so it
        can overlap other work).

        Chroma's `where` makes a query over 30k chunks cost ~170 ms against ~10 ms without
        one, and fetching 200 chunks' metadata costs ~15 ms of a ~21 ms query, so `pick`
        filters afterwards, on the state db's rows."""
        total = self.count()
        n = min(max(limit * 4, 40), 400)
        if total == 0:
            return Nearest(vector, n, total, [], [])
        res = self.collection.query(query_embeddings=[vector], n_results=min(n, total), include=["distances"])
        return Nearest(vector, n, total, list(res["ids"][0]), list(res["distances"][0]))

    def pick(self, near: Nearest, filters: Filters, limit: int, notes: NoteLookup) -> list[DenseHit]:
        """The filtered top `limit` notes of `near` (filter_rules: `predicate` here, the
        same rules as the `where` of the fallback).

        Each chunk's note is looked up in `notes`, which the caller derives from the state
        db: the current truth about a note (access included), even before its vectors catch
        up; a chunk whose note it does not know is left out. The first `limit` notes that
        pass are exactly the filtered top `limit`, provided that many pass; when a narrow
        filter leaves fewer, Chroma filters instead."""
        if near.total == 0:
            return []
        split = [(cid.rpartition("-"), d) for cid, d in zip(near.ids, near.distances, strict=False)]
        known = notes({key for (key, _, _), _ in split})
        passes = predicate(filters)
        rows: list[tuple[Mapping[str, Any], float]] = []
        for (key, _, index), dist in split:
            meta = known.get(key)
            if meta is not None and passes(meta):
                rows.append(({"path": meta["path"], "chunk": int(index)}, dist))
        hits = _best_chunks(rows, limit)
        if len(hits) < limit and near.n < near.total:
            res = self.collection.query(
                query_embeddings=[near.vector],
                n_results=near.n,
                where=chroma_where(filters),
                include=["metadatas", "distances"],
            )
            hits = _best_chunks(list(zip(res["metadatas"][0], res["distances"][0], strict=False)), limit)
        return hits


@dataclass(frozen=True, slots=True)
class Nearest:
    """Chroma's answer before filtering (VectorIndex.nearest)."""

    vector: list[float]
    n: int  # chunks asked for
    total: int  # chunks in the collection
    ids: list[str]
    distances: list[float]


# Chroma's float32 distances of one vector differ in their last bits (~1e-7) once its index
# has changed (the same sums in another order), whoever's notes changed it. Distances
# closer than this are one: such notes get one distance and go in the order of their
# paths, so neither their order nor their scores follow the index's history.
SAME_DISTANCE = 1e-6


def _best_chunks(rows: Sequence[tuple[Any, float]], limit: int) -> list[DenseHit]:
    """A note by its best chunk (the lowest chunk number among equally near ones), notes by
    distance, equal distances (SAME_DISTANCE) by path."""
    best: dict[str, tuple[float, int]] = {}
    for meta, dist in rows:
        path, chunk = str(meta["path"]), int(meta.get("chunk", 0))
        held = best.get(path)
        if held is None or dist < held[0] - SAME_DISTANCE or (dist < held[0] + SAME_DISTANCE and chunk < held[1]):
            best[path] = (float(dist) if held is None else min(float(dist), held[0]), chunk)
    ordered = sorted(best.items(), key=lambda kv: (kv[1][0], kv[0]))
    hits: list[DenseHit] = []
    i = 0
    while i < len(ordered) and len(hits) < limit:
        first = ordered[i][1][0]
        j = i
        while j < len(ordered) and ordered[j][1][0] - first < SAME_DISTANCE:
            j += 1
        for path, (_, chunk) in sorted(ordered[i:j]):
            hits.append(DenseHit(path, len(hits) + 1, first, chunk))
        i = j
    return hits[:limit]
