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
        root = find_vault(vault)
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

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        for closer in self._cache.pop("_closers", []):
            closer()
