"""The one composition root: reads configuration and builds, when (and only when) a use
case needs them, the parts the use cases take:

- `App`: the vault root and config, the acting ghost and its access rules, the hooks the
  front end passes in (notices, progress, what to do after a write), and how the vault is
  kept fresh (`Freshness`);
- `Indexes`: the state db and the derived indexes (Whoosh, Chroma, the embedder, the link
  graph), each built on first use and typed. One `Indexes` per vault and process: the
  watcher's per-ghost views share it.

Heavy libraries are imported inside the builders, so a command that never searches never
imports chromadb or torch.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

from vaultmem.config import VaultConfig, find_vault, load_config, validate_ghost_name
from vaultmem.errors import InvalidInput, environment_error
from vaultmem.index.healing import Damaged, open_or_rebuild
from vaultmem.index.statedb import RECORD_CACHE_MAX, StateDB, filter_record
from vaultmem.paths import StatePaths
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
# Up to this many notes whose edges changed, the link graph is updated in place (a note's
# few edges each); more, and one build over every edge (~2 s at 50k notes) costs as much.
GRAPH_DELTA_MAX = 5000


def _quiet(_: str) -> None:
    pass


class Indexes:
    """The state db and the derived indexes of one vault, each built on first use."""

    def __init__(self, root: Path, config: VaultConfig, notice: Notice = _quiet) -> None:
        self.root = root
        self.config = config
        self.state = StatePaths(root)
        self.state.secure()  # a state folder an earlier version left readable to all: owner-only now
        if self.state.where == "read-only":
            notice(f"note: {root} cannot be written: its index is kept in {self.state.dir}")
        self.notice = notice  # told when a damaged store is set aside (index/healing.py)
        self._db: StateDB | None = None
        self._fulltext: FullTextIndex | None = None
        self._choice: Choice | None = None
        self._embedder: tuple[Embedder | None] | None = None  # built once, even when None
        # The watcher loads the model and opens Chroma on a thread of its own: a second
        # caller waits for the first one's load.
        self._embedder_lock = threading.Lock()
        self._vectors_lock = threading.Lock()
        # Set by a process that loads the model in the background (the watcher, see
        # load_model_in_background): until the event is set, `search` runs BM25 + graph and
        # says so, and a reconcile leaves the vectors for later, instead of waiting for it.
        self.model_ready: threading.Event | None = None
        self._chroma: Any = None
        self._vectors: dict[str, VectorIndex] = {}
        self._graph: tuple[str, LinkGraph] | None = None
        self._projects: tuple[str, list[str]] | None = None
        self._owners: tuple[tuple[int, int], dict[str, str], set[str]] | None = None
        self._metas: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}  # by the row they come from

    @property
    def db(self) -> StateDB:
        if self._db is None:
            self._db = open_or_rebuild(lambda: StateDB(self.state.db), self.notice)
        return self._db

    def fulltext(self) -> FullTextIndex:
        if self._fulltext is None:
            from vaultmem.index.fulltext import FullTextIndex

            self._fulltext = open_or_rebuild(lambda: FullTextIndex(self.state.whoosh), self.notice)
            if self._fulltext.created:
                self.db.reset_index("ft_hash")  # a new, empty index holds nothing
        return self._fulltext

    def embedding_choice(self) -> Choice:
        if self._choice is None:
            from vaultmem.index.embedder import choose

            self._choice = choose(
                self.config.embedding_backend, self.config.embedding_model, self.config.embedding_precision
            )
        return self._choice

    def embedder(self) -> Embedder | None:
        if self._embedder is None:
            with self._embedder_lock:
                if self._embedder is None:
                    from vaultmem.index.embedder import load

                    self._embedder = (load(self.embedding_choice()),)
        return self._embedder[0]

    def model_loading(self) -> bool:
        """True while the embedding model loads in the background (not for a process that
        loads it when first needed, which is every process but the watcher)."""
        return self.model_ready is not None and not self.model_ready.is_set()

    def load_model_in_background(self, fingerprint: str | None, done: Callable[[BaseException | None], None]) -> None:
        """Load the embedding model (and run it once) and open the vector index of
        `fingerprint` on a thread of its own; `done(error)` is called after, from that
        thread. Meanwhile `model_loading()` is True."""
        ready = threading.Event()
        self.model_ready = ready

        def load() -> None:
            error: BaseException | None = None
            try:
                index = self.vector_index(fingerprint) if fingerprint is not None else None  # chromadb: ~0.4 s
                embedder = self.embedder()
                if embedder is not None:
                    vector = embedder.embed(["warm up"])[0]  # the first run is slow: not a client's query
                    if index is not None:
                        with contextlib.suppress(Exception):  # only a warm-up: a search reports its own
                            index.nearest(vector, 10)  # Chroma loads its HNSW index at the first query
            except Exception as exc:  # the model libraries raise their own types
                error = exc
            finally:
                ready.set()  # also on failure: a search then meets the error itself
            done(error)

        threading.Thread(target=load, name="vaultmem-model", daemon=True).start()

    def _vector_vault_key(self) -> str:
        # Embedded: the store lives inside .vaultmem/, so a moved vault keeps its vectors.
        # http: one server may hold many vaults; the vault's path tells them apart.
        return "embedded" if self.config.chroma_mode == "embedded" else f"{self.config.chroma_url}|{self.root}"

    def vector_identity(self) -> tuple[str, str, bool] | None:
        """(fingerprint, collection name, store present) for the configured embedder.

        Loads the model only when its dimensions cannot be known otherwise."""
        from vaultmem.index.chunking import CHUNKER_VERSION
        from vaultmem.index.embedder import fingerprint
        from vaultmem.index.vectors import collection_name, store_problem

        choice = self.embedding_choice()
        if not choice.enabled:
            return None
        dims = choice.dims
        if dims is None:
            embedder = self.embedder()
            if embedder is None:
                return None
            dims = embedder.dims
        fp = fingerprint(choice.backend, choice.model, dims, CHUNKER_VERSION, choice.precision)
        # A store that lost its file, or whose file is no longer whole, holds nothing the
        # markers say: re-embed (the reconcile's open sets the damaged store aside).
        present = self.config.chroma_mode != "embedded" or (
            self.state.chroma_store.exists() and store_problem(self.state.dir) is None
        )
        return fp, collection_name(self._vector_vault_key(), fp), present

    def vector_index(self, fingerprint: str) -> VectorIndex:
        if fingerprint not in self._vectors:
            with self._vectors_lock:
                if fingerprint not in self._vectors:
                    self._vectors[fingerprint] = open_or_rebuild(
                        lambda: self._open_vectors(fingerprint), self._vectors_lost
                    )
        return self._vectors[fingerprint]

    def _open_vectors(self, fingerprint: str) -> VectorIndex:
        from vaultmem.index.vectors import make_client, open_index

        if self._chroma is None:
            self._chroma = make_client(self.config.chroma_mode, self.state.dir, self.config.chroma_url)
        embedded = self.config.chroma_mode == "embedded"
        try:
            return open_index(self._chroma, self._vector_vault_key(), fingerprint, self.state.dir if embedded else None)
        except Damaged:
            self._chroma = None
            self._vectors.clear()
            raise

    def _vectors_lost(self, message: str) -> None:
        """The vector store was set aside: whatever the markers say, the next reconcile
        embeds every note again (one under way sees an empty store and does so now)."""
        self.notice(message)
        self.db.set_meta("vector_collection", "")

    def _generation(self) -> str:
        # Every catalog change sets a new one (catalog.rebuild_edges).
        return self.db.edges_generation() or ""

    def link_graph(self) -> LinkGraph:
        """The NetworkX graph of resolved links, kept from one catalog generation to the next:
        updated for the notes whose edges changed when the state db's log tells which (a
        few), built anew otherwise."""
        from vaultmem.index.graph import LinkGraph

        db = self.db
        # Read before the edges: edges newer than their label are redone next time, never missed.
        generation = db.edges_generation()
        held = self._graph
        if held is not None and generation is not None and held[0] != generation:
            changed = db.edge_sources_between(held[0], generation, limit=GRAPH_DELTA_MAX)
            if changed is not None:
                held[1].replace_sources(changed, db.edges_of(changed))
                held = self._graph = (generation, held[1])
        if held is None or generation is None or held[0] != generation:
            held = (generation or "", LinkGraph(db.all_edges()))
            self._graph = held if generation is not None else None
        return held[1]

    def projects(self) -> list[str]:
        """Projects that have notes, cached per catalog generation."""
        generation = self._generation()
        if self._projects is None or self._projects[0] != generation:
            self._projects = (generation, self.db.projects())
        return list(self._projects[1])

    def note_lookup(self) -> NoteLookup:
        """For dense search: a chunk id's owner key -> the note's filter metadata, read from
        the state db (see VectorIndex.search). The key -> path map is rebuilt after any
        change to the db; a note's metadata is kept while its row reads the same."""
        from vaultmem.index.documents import doc_for
        from vaultmem.index.vectors import note_metadata, owner_key

        db = self.db
        key = db.change_key()
        if self._owners is None or self._owners[0] != key:
            paths = set(db.note_paths())
            if self._owners is None:
                owners = {owner_key(p): p for p in paths}
            else:
                # After a reconcile only the notes that came or went are hashed again
                # (hashing every path costs ~20 ms at 10k notes).
                _, owners, before = self._owners
                for path in before - paths:
                    owners.pop(owner_key(path), None)
                for path in paths - before:
                    owners[owner_key(path)] = path
            self._owners = (key, owners, paths)
        owners = self._owners[1]
        metas = self._metas

        def lookup(keys: set[str]) -> dict[str, dict[str, Any]]:
            wanted = {k: owners[k] for k in keys if k in owners}
            rows = db.filter_rows(wanted.values())
            out: dict[str, dict[str, Any]] = {}
            for k, path in wanted.items():
                row = rows.get(path)
                if row is None:
                    continue
                seen = metas.get(path)
                if seen is None or seen[0] != row:
                    if len(metas) > RECORD_CACHE_MAX:
                        metas.clear()
                    seen = metas[path] = (row, note_metadata(doc_for(filter_record(row), "")))
                out[k] = seen[1]
            return out

        return lookup

    def indexer(self, progress: ProgressHook | None) -> Indexer:
        from vaultmem.index.engine import Indexer

        return Indexer(
            self.root,
            self.db,
            self.config,
            self.fulltext,
            self.vector_index,
            self.embedder,
            progress,
            self.vector_identity,
        )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._fulltext is not None:
            self._fulltext.close()
            self._fulltext = None


class Freshness(Protocol):
    """How a use case makes sure it reads current state: catch up itself (a CLI process),
    or trust the watcher, which owns the indexes and reconciles before every request."""

    # Why a hybrid search must run lexically (the vector store belongs to a process that
    # does not answer), or None.
    lexical_only: str | None

    def catch_up(self, app: App) -> CatalogResult: ...

    def lock(self, app: App, role: str, wait_s: float | None) -> AbstractContextManager[object]: ...

    def refresh(self, app: App) -> None: ...


class CatchUp:
    """A process on its own: it reconciles what changed before it reads, under the lock. On
    a full or read-only disk a read goes on with the indexes as they are, and says so; the
    next command that can write catches up."""

    lexical_only: str | None = None

    def catch_up(self, app: App) -> CatalogResult:
        """Bring the state db up to date with the files (cheap: a stat walk)."""
        from vaultmem.index.catalog import CatalogResult, catch_up

        progress = None
        if app.progress is not None:
            hook = app.progress

            def progress(done: int, total: int) -> None:
                hook("reading notes", done, total)

        try:
            return catch_up(app.root, app.db, app.config, progress)
        except Exception as exc:  # OSError, sqlite3's: which ones is environment_error's business
            _stale(app, exc)
            return CatalogResult()

    def lock(self, app: App, role: str, wait_s: float | None) -> AbstractContextManager[object]:
        from vaultmem.index.lock import DEFAULT_WAIT_S, IndexLock

        return IndexLock(app.state.lock, role, DEFAULT_WAIT_S if wait_s is None else wait_s)

    def refresh(self, app: App) -> None:
        from vaultmem.services.indexing import run_index

        try:
            run_index(app)
        except Exception as exc:  # Whoosh's, Chroma's, SQLite's: see environment_error
            _stale(app, exc)


def _stale(app: App, exc: Exception) -> None:
    """A catch-up that failed because the disk is full or cannot be written: the read goes
    on with the indexes as they are; anything else is raised."""
    known = environment_error(exc)
    if known is None:
        raise exc
    app.notice(f"warning: the index was not brought up to date ({known.message}); answered from it as it is")


class KeptByWatcher:
    """Inside the watcher: it holds the index lock for its whole life and reconciles pending
    file events before it serves a request, so a use case neither locks nor catches up."""

    lexical_only: str | None = None

    def catch_up(self, app: App) -> CatalogResult:
        from vaultmem.index.catalog import CatalogResult

        return CatalogResult()

    def lock(self, app: App, role: str, wait_s: float | None) -> AbstractContextManager[object]:
        return nullcontext()  # a second flock would wait on the watcher's own

    def refresh(self, app: App) -> None:
        return None


class AsTheyAre(KeptByWatcher):
    """A read while the watcher that owns the indexes does not answer (stopped, wedged): no
    catch-up, no lock, no refresh — it holds them — but the indexes as they are, searched
    lexically (its vector store is not this process's to open)."""

    def __init__(self, why: str) -> None:
        self.why = why
        self.lexical_only = "the watcher, which holds the vector store, did not answer: searched with BM25 + graph only"


@dataclass
class App:
    root: Path
    ghost: str | None
    indexes: Indexes
    notice: Notice = _quiet
    progress: ProgressHook | None = None
    freshness: Freshness = field(default_factory=CatchUp)
    # Set by the CLI when a watcher may be running: services call it (through `wrote`) after
    # writing files, and it waits until the watcher has indexed them. None: nobody to tell.
    after_write: AfterWrite | None = None
    _held_writes: list[str] | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        vault: str | Path | None,
        ghost: str | None,
        env: Mapping[str, str] | None = None,
        notice: Notice = _quiet,
        progress: ProgressHook | None = None,
        freshness: Freshness | None = None,
    ) -> App:
        env = os.environ if env is None else env
        root = find_vault(vault, env=env)
        config = load_config(root, env)
        for warning in config.warnings:
            notice(f"warning: {warning}")
        ghost = _checked_ghost(config, ghost or env.get("VAULTMEM_GHOST") or None)
        return cls(root, ghost, Indexes(root, config, notice), notice, progress, freshness or CatchUp())

    def view(
        self,
        ghost: str | None,
        env: Mapping[str, str] | None = None,
        notice: Notice = _quiet,
        progress: ProgressHook | None = None,
    ) -> App:
        """This App acting for `ghost` (checked as `open` checks it): the same indexes, with
        the caller's own hooks. The watcher serves every request from a view of its one warm
        App; views are never closed (the App they view owns the indexes)."""
        env = os.environ if env is None else env
        for warning in self.config.warnings:
            notice(f"warning: {warning}")
        ghost = _checked_ghost(self.config, ghost or env.get("VAULTMEM_GHOST") or None)
        return App(self.root, ghost, self.indexes, notice, progress, self.freshness)

    @property
    def config(self) -> VaultConfig:
        return self.indexes.config

    @property
    def state(self) -> StatePaths:
        return self.indexes.state

    @property
    def db(self) -> StateDB:
        return self.indexes.db

    # --- access -------------------------------------------------------------------------

    def can_read(self, location: Location) -> bool:
        return can_read(location, self.ghost, self.config)

    def can_write(self, location: Location) -> bool:
        return can_write(location, self.ghost, self.config)

    # --- freshness --------------------------------------------------------------------

    def catch_up(self) -> CatalogResult:
        return self.freshness.catch_up(self)

    def lock(self, role: str = "index", wait_s: float | None = None) -> AbstractContextManager[object]:
        return self.freshness.lock(self, role, wait_s)

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

    def close(self) -> None:
        self.indexes.close()


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
