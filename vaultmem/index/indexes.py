"""The state db and the derived indexes of one vault (Whoosh, Chroma, the embedder), each
built on first use and typed, and the warm views kept beside them (index/views.py). One
`Indexes` per vault and process: the watcher's per-ghost Apps share it. The composition
root (services/app.py) builds it.

Heavy libraries are imported inside the builders, so a command that never searches never
imports chromadb or torch.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmem.config import VaultConfig
from vaultmem.index.healing import Damaged, open_or_rebuild
from vaultmem.index.statedb import StateDB
from vaultmem.index.views import WarmViews
from vaultmem.paths import StatePaths

if TYPE_CHECKING:
    from vaultmem.index.embedder import Choice, Embedder
    from vaultmem.index.engine import Indexer
    from vaultmem.index.fulltext import FullTextIndex
    from vaultmem.index.graph import LinkGraph
    from vaultmem.index.vectors import NoteLookup, VectorIndex

Notice = Callable[[str], None]
# (label, done, total): how far a long step has come
ProgressHook = Callable[[str, int, int], None]


def _quiet(_: str) -> None:
    pass


class Indexes:
    """The state db and the derived indexes of one vault, each built on first use."""

    def __init__(
        self, root: Path, config: VaultConfig, notice: Notice = _quiet, views: WarmViews | None = None
    ) -> None:
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
        # A reconcile left the vectors for after the loading (run_index defer_vectors): the
        # first search that has the model embeds them before it answers (services/search.py).
        self.vectors_deferred = False
        self._chroma: Any = None
        self._vectors: dict[str, VectorIndex] = {}
        # The warm views (index/views.py): this object's own, or a long-lived process's, shared
        # by the Indexes it opens on the vault one after another (the MCP server's).
        self.views = views or WarmViews()

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
        """The embedding model, loaded on first use. EmbeddingUnavailable when it cannot be
        loaded (its files gone or broken, a name not downloaded on an offline machine): a
        search then runs lexically and says why; the next use tries again."""
        if self._embedder is None:
            with self._embedder_lock:
                if self._embedder is None:
                    from vaultmem.errors import VaultmemError
                    from vaultmem.index.embedder import EmbeddingUnavailable, load

                    choice = self.embedding_choice()
                    try:
                        self._embedder = (load(choice),)
                    except VaultmemError:
                        raise
                    except Exception as exc:  # the model libraries raise their own types
                        raise EmbeddingUnavailable(
                            f"the embedding model {choice.model} could not be loaded ({type(exc).__name__}: {exc})"
                        ) from exc
        return self._embedder[0]

    def model_loaded(self) -> bool:
        """The embedding model is in memory (built here, or loaded in the background and
        ready): using it costs milliseconds, not the seconds of loading it."""
        return self._embedder is not None and not self.model_loading()

    def model_loading(self) -> bool:
        """True while the embedding model loads in the background (not for a process that
        loads it when first needed, which is every process but the watcher)."""
        return self.model_ready is not None and not self.model_ready.is_set()

    def wait_for_model(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a background load (load_model_in_background) to
        end; True when it has (loaded or failed: the caller meets a failure itself)."""
        ready = self.model_ready
        return ready is None or ready.wait(timeout)

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
        # http: one server may hold the vectors of many vaults and of many clones of one
        # vault, each clone its own collection (its notes are its own until it syncs): a
        # clone is its machine and its folder, so two machines' clones at the same path
        # never share one either.
        if self.config.chroma_mode == "embedded":
            return "embedded"
        import socket

        return f"{self.config.chroma_url}|{socket.gethostname()}|{self.root}"

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

    def link_graph(self) -> LinkGraph:
        return self.views.link_graph(self.db)

    def projects(self) -> list[str]:
        return self.views.projects(self.db)

    def note_lookup(self) -> NoteLookup:
        return self.views.note_lookup(self.db)

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
            self.views.names,
            lambda: self.embedding_choice().enabled,
        )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._fulltext is not None:
            self._fulltext.close()
            self._fulltext = None
