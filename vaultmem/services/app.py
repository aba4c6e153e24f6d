"""The one composition root: reads configuration, builds the state db, Whoosh, Chroma and
the embedder when (and only when) a use case needs them, and hands them out as arguments.

Heavy libraries are imported inside the builders, so a command that never searches never
imports chromadb or torch.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from vaultmem.config import STATE_DIR, VaultConfig, find_vault, load_config, validate_ghost_name
from vaultmem.errors import InvalidInput
from vaultmem.index.statedb import RECORD_CACHE_MAX, NoteRecord, StateDB
from vaultmem.vault.layout import Location, can_read, can_write

if TYPE_CHECKING:
    from vaultmem.index.catalog import CatalogResult
    from vaultmem.index.embedder import Choice, Embedder
    from vaultmem.index.engine import Indexer
    from vaultmem.index.fulltext import FullTextIndex
    from vaultmem.index.graph import LinkGraph
    from vaultmem.index.vectors import NoteLookup, VectorIndex

# Hooks the CLI passes in so services can report progress and warnings without knowing
# about terminals: (message) for notices, (label, done, total) for progress.
Notice = Callable[[str], None]
ProgressHook = Callable[[str, int, int], None]
# Told the vault-relative paths a write just changed (see App.wrote).
AfterWrite = Callable[[list[str]], None]


def _quiet(_: str) -> None:
    pass


@dataclass
class App:
    root: Path
    config: VaultConfig
    ghost: str | None
    notice: Notice = _quiet
    progress: ProgressHook | None = None
    # Tests inject a ready embedder (the real model loaded once per session, or a tiny
    # deterministic one for plumbing tests); None means "build from the config".
    embedder_override: Embedder | None = None
    # True for the watcher's App and its per-ghost views. The watcher holds the index lock
    # for its whole life and reconciles pending file events before it serves a request, so
    # work done on its behalf neither takes the lock again nor catches up first.
    in_watcher: bool = False
    # Set by the CLI when a watcher may be running: services call it (through `wrote`) after
    # writing files, and it waits until the watcher has indexed them. None: nobody to tell.
    after_write: AfterWrite | None = None
    _db: StateDB | None = field(default=None, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    _view: bool = field(default=False, repr=False)  # shares another App's db and caches
    _held_writes: list[str] | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        vault: str | Path | None,
        ghost: str | None,
        env: Mapping[str, str] | None = None,
        notice: Notice = _quiet,
        progress: ProgressHook | None = None,
    ) -> App:
        env = os.environ if env is None else env
        root = find_vault(vault, env=env)
        config = load_config(root, env)
        for warning in config.warnings:
            notice(f"warning: {warning}")
        ghost = _checked_ghost(config, ghost or env.get("VAULTMEM_GHOST") or None)
        return cls(root=root, config=config, ghost=ghost, notice=notice, progress=progress)

    def view(
        self,
        ghost: str | None,
        env: Mapping[str, str] | None = None,
        notice: Notice = _quiet,
        progress: ProgressHook | None = None,
    ) -> App:
        """This App acting for `ghost` (checked as `open` checks it): the same state db
        connection, indexes, graph and embedder, with the caller's own hooks. The watcher
        serves every request from a view of its one warm App; closing a view closes nothing."""
        env = os.environ if env is None else env
        for warning in self.config.warnings:
            notice(f"warning: {warning}")
        ghost = _checked_ghost(self.config, ghost or env.get("VAULTMEM_GHOST") or None)
        return replace(
            self, ghost=ghost, notice=notice, progress=progress, after_write=None, _view=True, _held_writes=None
        )

    # --- paths --------------------------------------------------------------------------

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    # --- access -------------------------------------------------------------------------

    def can_read(self, location: Location) -> bool:
        return can_read(location, self.ghost, self.config)

    def can_write(self, location: Location) -> bool:
        return can_write(location, self.ghost, self.config)

    # --- derived state ------------------------------------------------------------------

    @property
    def db(self) -> StateDB:
        if self._db is None:
            self._db = StateDB(self.state_dir / "state.db")
        return self._db

    def catch_up(self) -> CatalogResult:
        """Bring the state db up to date with the files (cheap: a stat walk)."""
        from vaultmem.index.catalog import CatalogResult, catch_up

        if self.in_watcher:
            return CatalogResult()  # the watcher has reconciled already

        progress = None
        if self.progress is not None:
            hook = self.progress

            def progress(done: int, total: int) -> None:
                hook("reading notes", done, total)

        return catch_up(self.root, self.db, self.config, progress)

    def lock(self, role: str = "index", wait_s: float | None = None) -> AbstractContextManager[object]:
        from vaultmem.index.lock import DEFAULT_WAIT_S, IndexLock

        if self.in_watcher:
            return nullcontext()  # the watcher holds the lock already (a second flock would wait on it)
        return IndexLock(self.state_dir / "index.lock", role, DEFAULT_WAIT_S if wait_s is None else wait_s)

    # --- after writes -------------------------------------------------------------------

    def wrote(self, paths: Iterable[str]) -> None:
        """Services call this after writing note files (vault-relative paths)."""
        changed = list(paths)
        if self._held_writes is not None:
            self._held_writes.extend(changed)
        elif changed and self.after_write is not None:
            self.after_write(changed)

    @contextmanager
    def batch_writes(self) -> Iterator[None]:
        """Hold `wrote` calls and report them once at the end: a command writing many files
        waits for one reconcile, not one per file."""
        if self._held_writes is not None:
            yield  # already inside a batch
            return
        self._held_writes = []
        try:
            yield
        finally:
            held, self._held_writes = self._held_writes, None
            if held:
                self.wrote(held)

    def fulltext(self) -> FullTextIndex:
        if "fulltext" not in self._cache:
            from vaultmem.index.fulltext import FullTextIndex

            ft = FullTextIndex(self.state_dir / "whoosh")
            if ft.created:
                self.db.reset_index("ft_hash")  # a new, empty index holds nothing
            self._cache["fulltext"] = ft
            self._cache.setdefault("_closers", []).append(ft.close)
        return self._cache["fulltext"]

    def embedding_choice(self) -> Choice:
        if "choice" not in self._cache:
            from vaultmem.index.embedder import Choice, choose

            if self.embedder_override is not None:
                e = self.embedder_override
                self._cache["choice"] = Choice(e.backend, e.model, reason="injected", dims=e.dims)
            else:
                self._cache["choice"] = choose(self.config.embedding_backend, self.config.embedding_model)
        return self._cache["choice"]

    def embedder(self) -> Embedder | None:
        if self.embedder_override is not None:
            return self.embedder_override
        if "embedder" not in self._cache:
            from vaultmem.index.embedder import load

            self._cache["embedder"] = load(self.embedding_choice())
        return self._cache["embedder"]

    @property
    def chroma_mode(self) -> str:
        return self.config.chroma_mode

    def _vector_vault_key(self) -> str:
        # Embedded: the store lives inside .vaultmem/, so a moved vault keeps its vectors.
        # http: one server may hold many vaults; the vault's path tells them apart.
        return "embedded" if self.config.chroma_mode == "embedded" else f"{self.config.chroma_url}|{self.root}"

    def vector_identity(self) -> tuple[str, str, bool] | None:
        """(fingerprint, collection name, store present) for the configured embedder.

        Loads the model only when its dimensions cannot be known otherwise."""
        from vaultmem.index.chunking import CHUNKER_VERSION
        from vaultmem.index.embedder import fingerprint
        from vaultmem.index.vectors import collection_name

        choice = self.embedding_choice()
        if not choice.enabled:
            return None
        dims = choice.dims
        if dims is None:
            embedder = self.embedder()
            if embedder is None:
                return None
            dims = embedder.dims
        fp = fingerprint(choice.backend, choice.model, dims, CHUNKER_VERSION)
        present = self.config.chroma_mode != "embedded" or (self.state_dir / "chroma" / "chroma.sqlite3").exists()
        return fp, collection_name(self._vector_vault_key(), fp), present

    def vector_index(self, fingerprint: str) -> VectorIndex:
        key = f"vectors:{fingerprint}"
        if key not in self._cache:
            from vaultmem.index.vectors import VectorIndex, make_client

            if "chroma" not in self._cache:
                self._cache["chroma"] = make_client(self.config.chroma_mode, self.state_dir, self.config.chroma_url)
            self._cache[key] = VectorIndex(self._cache["chroma"], self._vector_vault_key(), fingerprint)
        return self._cache[key]

    def link_graph(self) -> LinkGraph:
        """The NetworkX graph of resolved links, built once per reconcile generation."""
        generation = self.db.get_meta("edges_generation") or "0"
        cached = self._cache.get("graph")
        if cached is None or cached[0] != generation:
            from vaultmem.index.graph import LinkGraph

            cached = (generation, LinkGraph(self.db.all_edges()))
            self._cache["graph"] = cached
        return cached[1]

    def note_lookup(self) -> NoteLookup:
        """For dense search: a chunk id's owner key -> the note's filter metadata, read from
        the state db (see VectorIndex.search). The key -> path map is rebuilt after any
        change to the db; a record's metadata is kept while the db returns the same record."""
        from vaultmem.index.documents import doc_for
        from vaultmem.index.vectors import note_metadata, owner_key

        db = self.db
        key = db.change_key()
        cached = self._cache.get("note_owners")
        if cached is None or cached[0] != key:
            paths = {r[0] for r in db.conn.execute("SELECT path FROM files WHERE status='note'")}
            if cached is None:
                owners = {owner_key(p): p for p in paths}
            else:
                # After a reconcile only the notes that came or went are hashed again
                # (hashing every path costs ~20 ms at 10k notes).
                _, owners, before = cached
                for path in before - paths:
                    owners.pop(owner_key(path), None)
                for path in paths - before:
                    owners[owner_key(path)] = path
            cached = (key, owners, paths)
            self._cache["note_owners"] = cached
        owners = cached[1]
        metas: dict[str, tuple[NoteRecord, dict[str, Any]]] = self._cache.setdefault("note_metas", {})

        def lookup(keys: set[str]) -> dict[str, dict[str, Any]]:
            wanted = {k: owners[k] for k in keys if k in owners}
            records = db.by_paths(wanted.values())
            out: dict[str, dict[str, Any]] = {}
            for k, path in wanted.items():
                rec = records.get(path)
                if rec is None or rec.status != "note":
                    continue
                seen = metas.get(path)
                if seen is None or seen[0] is not rec:
                    if len(metas) > RECORD_CACHE_MAX:
                        metas.clear()
                    seen = metas[path] = (rec, note_metadata(doc_for(rec, "")))
                out[k] = seen[1]
            return out

        return lookup

    def projects(self) -> list[str]:
        """Projects that have notes, cached per catalog generation (every catalog change
        bumps `edges_generation`)."""
        generation = self.db.get_meta("edges_generation") or "0"
        cached = self._cache.get("projects")
        if cached is None or cached[0] != generation:
            rows = self.db.conn.execute(
                "SELECT DISTINCT project FROM files WHERE project IS NOT NULL AND status='note'"
            )
            cached = (generation, [r[0] for r in rows])
            self._cache["projects"] = cached
        return list(cached[1])

    def indexer(self) -> Indexer:
        from vaultmem.index.engine import Indexer

        return Indexer(
            self.root,
            self.db,
            self.config,
            self.fulltext,
            self.vector_index,
            self.embedder,
            self.progress,
            self.vector_identity,
        )

    def close(self) -> None:
        if self._view:
            return  # the App it views owns the connection and caches
        if self._db is not None:
            self._db.close()
            self._db = None
        for closer in self._cache.pop("_closers", []):
            closer()


P = ParamSpec("P")
R = TypeVar("R")


def batched_writes(use_case: Callable[Concatenate[App, P], R]) -> Callable[Concatenate[App, P], R]:
    """For a use case that writes several files: the watcher hears of them once, at the end."""

    @functools.wraps(use_case)
    def run(app: App, *args: P.args, **kwargs: P.kwargs) -> R:
        with app.batch_writes():
            return use_case(app, *args, **kwargs)

    return run


def _checked_ghost(config: VaultConfig, ghost: str | None) -> str | None:
    if ghost is not None:
        validate_ghost_name(ghost)
        if ghost not in config.ghosts:
            raise InvalidInput(f"unknown ghost {ghost!r}: register it with `vaultmem ghost add {ghost}`")
    return ghost
