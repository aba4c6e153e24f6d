"""The one composition root: reads configuration, builds the state db, Whoosh, Chroma and
the embedder when (and only when) a use case needs them, and hands them out as arguments.

Heavy libraries are imported inside the builders, so a command that never searches never
imports chromadb or torch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmem.config import STATE_DIR, VaultConfig, find_vault, load_config, validate_ghost_name
from vaultmem.errors import InvalidInput
from vaultmem.index.statedb import StateDB
from vaultmem.vault.layout import Location, can_read, can_write

if TYPE_CHECKING:
    from vaultmem.index.catalog import CatalogResult
    from vaultmem.index.embedder import Choice, Embedder
    from vaultmem.index.engine import Indexer
    from vaultmem.index.fulltext import FullTextIndex
    from vaultmem.index.graph import LinkGraph
    from vaultmem.index.lock import IndexLock
    from vaultmem.index.vectors import VectorIndex

# Hooks the CLI passes in so services can report progress and warnings without knowing
# about terminals: (message) for notices, (label, done, total) for progress.
Notice = Callable[[str], None]
ProgressHook = Callable[[str, int, int], None]


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
    _db: StateDB | None = field(default=None, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

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
        ghost = ghost or env.get("VAULTMEM_GHOST") or None
        if ghost is not None:
            validate_ghost_name(ghost)
            if ghost not in config.ghosts:
                raise InvalidInput(f"unknown ghost {ghost!r}: register it with `vaultmem ghost add {ghost}`")
        return cls(root=root, config=config, ghost=ghost, notice=notice, progress=progress)

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
        from vaultmem.index.catalog import catch_up

        progress = None
        if self.progress is not None:
            hook = self.progress

            def progress(done: int, total: int) -> None:
                hook("reading notes", done, total)

        return catch_up(self.root, self.db, self.config, progress)

    def lock(self, role: str = "index", wait_s: float | None = None) -> IndexLock:
        from vaultmem.index.lock import DEFAULT_WAIT_S, IndexLock

        return IndexLock(self.state_dir / "index.lock", role, DEFAULT_WAIT_S if wait_s is None else wait_s)

    def fulltext(self) -> FullTextIndex:
        if "fulltext" not in self._cache:
            from vaultmem.index.fulltext import FullTextIndex

            ft = FullTextIndex(self.state_dir / "whoosh")
            if ft.created:
                self.db.reset_index("ft_hash")  # a new, empty index holds nothing
            self._cache["fulltext"] = ft
            self._cache.setdefault("_closers", []).append(ft.close)
        return self._cache["fulltext"]  # type: ignore[no-any-return]

    def embedding_choice(self) -> Choice:
        if "choice" not in self._cache:
            from vaultmem.index.embedder import Choice, choose

            if self.embedder_override is not None:
                e = self.embedder_override
                self._cache["choice"] = Choice(e.backend, e.model, reason="injected", dims=e.dims)
            else:
                self._cache["choice"] = choose(self.config.embedding_backend, self.config.embedding_model)
        return self._cache["choice"]  # type: ignore[no-any-return]

    def embedder(self) -> Embedder | None:
        if self.embedder_override is not None:
            return self.embedder_override
        if "embedder" not in self._cache:
            from vaultmem.index.embedder import load

            self._cache["embedder"] = load(self.embedding_choice())
        return self._cache["embedder"]  # type: ignore[no-any-return]

    @property
    def chroma_mode(self) -> str:
        return self.config.chroma_mode

    def vector_index(self, fingerprint: str) -> VectorIndex:
        key = f"vectors:{fingerprint}"
        if key not in self._cache:
            from vaultmem.index.vectors import VectorIndex, make_client

            if "chroma" not in self._cache:
                self._cache["chroma"] = make_client(self.config.chroma_mode, self.state_dir, self.config.chroma_url)
            self._cache[key] = VectorIndex(self._cache["chroma"], str(self.root), fingerprint)
        return self._cache[key]  # type: ignore[no-any-return]

    def link_graph(self) -> LinkGraph:
        """The NetworkX graph of resolved links, built once per reconcile generation."""
        generation = self.db.get_meta("edges_generation") or "0"
        cached = self._cache.get("graph")
        if cached is None or cached[0] != generation:
            from vaultmem.index.graph import LinkGraph

            cached = (generation, LinkGraph(self.db.all_edges()))
            self._cache["graph"] = cached
        return cached[1]  # type: ignore[no-any-return]

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
        )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        for closer in self._cache.pop("_closers", []):
            closer()
