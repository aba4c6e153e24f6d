"""The one composition root: reads configuration and builds, when (and only when) a use
case needs them, the parts the use cases take. An `App` is the vault root and config, the
acting ghost and its access rules, the hooks the front end passes in (notices, progress,
what to do after a write), how the vault is kept fresh (services/freshness.py), and the
vault's indexes and warm views (index/indexes.py, index/views.py), built on first use.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from vaultmem.config import VaultConfig, load_config, validate_ghost_name
from vaultmem.errors import InvalidInput
from vaultmem.index.indexes import Indexes, Notice, ProgressHook
from vaultmem.index.statedb import StateDB
from vaultmem.paths import StatePaths
from vaultmem.vault.layout import Location, can_read, can_write
from vaultmem.vault.nesting import opened_vault

if TYPE_CHECKING:
    from vaultmem.index.catalog import CatalogResult
    from vaultmem.index.graph import ReaderLinks
    from vaultmem.index.views import WarmViews
    from vaultmem.services.freshness import Freshness

__all__ = ["AfterWrite", "App", "Indexes", "Notice", "ProgressHook", "batched_writes"]

# Told the vault-relative paths a write just changed (see App.wrote).
AfterWrite = Callable[[list[str]], None]


def _quiet(_: str) -> None:
    pass


def _catch_up() -> Freshness:
    from vaultmem.services.freshness import CatchUp

    return CatchUp()


def uncounted(ghost: str | None, progress: ProgressHook | None) -> ProgressHook | None:
    """A ghost's progress hook: the stages without their counts. A catch-up counts every
    changed file of the vault, another ghost's private notes too (bob's 700 new notes showed
    on alice's terminal as `reading notes 700/700`); a count of 0 draws no number."""
    if ghost is None or progress is None:
        return progress
    hook = progress
    return lambda stage, done, total: hook(stage, 0, 0)


@dataclass
class App:
    root: Path
    ghost: str | None
    indexes: Indexes
    notice: Notice = _quiet
    progress: ProgressHook | None = None
    freshness: Freshness = field(default_factory=_catch_up)
    # Set by the CLI when a watcher may be running: services call it (through `wrote`) after
    # writing files, and it waits until the watcher has indexed them. None: nobody to tell.
    after_write: AfterWrite | None = None
    # A person of the vault ([vault] people, $VAULTMEM_PERSON) acting without a ghost: reads
    # and writes every note, as in Obsidian (checked_person below). None for agents.
    person: str | None = None
    # Provenance of this caller's writes (vault/journal.py): the model it runs, why it writes.
    model: str | None = None
    reason: str | None = None
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
        views: WarmViews | None = None,
    ) -> App:
        """`views`: warm views a long-lived process keeps for the vault between Apps."""
        env = os.environ if env is None else env
        root = opened_vault(vault, env=env)
        config = load_config(root, env)
        for warning in config.warnings:
            notice(f"warning: {warning}")
        ghost = _checked_ghost(config, ghost or env.get("VAULTMEM_GHOST") or None)
        app = cls(
            root,
            ghost,
            Indexes(root, config, notice, views),
            notice,
            uncounted(ghost, progress),
            freshness or _catch_up(),
        )
        app.person = checked_person(config, ghost, env)
        return app

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
        app = App(self.root, ghost, self.indexes, notice, uncounted(ghost, progress), self.freshness)
        app.person = checked_person(self.config, ghost, env)
        return app

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
        if self.person is not None:
            return location.placed  # a person sees what Obsidian shows
        return can_read(location, self.ghost, self.config)

    def can_write(self, location: Location) -> bool:
        if self.person is not None:
            return location.placed
        return can_write(location, self.ghost, self.config)

    def reader_tokens(self) -> list[str]:
        """The access classes the caller reads (index/documents.py readers)."""
        from vaultmem.vault.layout import reader_tokens

        owners = self.db.owners() if self.person is not None else None
        return reader_tokens(self.ghost, self.config, self.indexes.projects(), owners)

    def reader_links(self) -> ReaderLinks:
        """Links as this ghost resolves them: a note it cannot see wins no link (SPEC §3)."""
        who = f"person:{self.person}" if self.person is not None else self.ghost
        return self.indexes.views.reader_links(self.db, who, self.config, self.can_read)

    # --- freshness --------------------------------------------------------------------

    def catch_up(self) -> CatalogResult:
        return self.freshness.catch_up(self)

    def lock(self, role: str = "index", wait_s: float | None = None) -> AbstractContextManager[object]:
        return self.freshness.lock(self, role, wait_s)

    # --- after writes -------------------------------------------------------------------

    def wrote(self, paths: Iterable[str], upkeep: bool = False, was: Mapping[str, str] | None = None) -> None:
        """Services call this after writing note files (vault-relative paths): each gets its
        line in the write journal at once, and the watcher hears of them (once per batch).
        `upkeep`: writes the caller did not ask for and may not see (the links of another
        ghost's private note to a note it moved): journaled as the note's owner's (a
        person's for a note of a project), so they are never in the caller's journal,
        review or commits (SPEC §3), and the owner's review, commit and revert take them
        as theirs. `was`: path -> sha256 of the file each write changed, so that review
        tells a person's edit in between two writes (review.writers)."""
        changed = list(paths)
        self._journal(changed, upkeep, was or {})
        if self._held_writes is not None:
            self._held_writes.extend(changed)
        elif changed and self.after_write is not None:
            self.after_write(changed)

    def _journal(self, paths: list[str], upkeep: bool, was: Mapping[str, str]) -> None:
        from vaultmem.clock import epoch
        from vaultmem.vault import journal
        from vaultmem.vault.layout import classify
        from vaultmem.vault.writers import held

        at = journal.stamp(epoch())
        # The writers' lock, shared: sync holds it alone while it sets journal lines not yet
        # committed aside and git merges (vault/journal_aside.py); a line appended then would
        # be cut off with them, or written over by git.
        with held(self.root):
            if not upkeep:
                refused = journal.record(self.root, paths, at, self.ghost, self.model, self.reason, self.person, was)
            else:
                owners: dict[str | None, list[str]] = {}
                for path in paths:
                    owners.setdefault(classify(path).owner, []).append(path)
                # A refusal is told only for notes the caller sees: that a hidden note links to
                # the one it moved is not its to know (the upkeep is done all the same)
                refused = [
                    file
                    for owner, owned in owners.items()
                    for file in journal.record(self.root, owned, at, owner, None, journal.UPKEEP_REASON, was=was)
                    if all(self.can_read(classify(p)) for p in owned)
                ]
        if refused:
            self._journal_refused(refused)

    def _journal_refused(self, files: list[str]) -> None:
        """A warning, not an error: the note files are written by then and stay so, and a
        failed command would be retried (a second note) while every write met the same
        link. Without their lines, review and commit take the changes for a person's, which
        no ghost commits or syncs: the safe side. Another ghost's journal is not named."""
        from vaultmem.vault.journal import JOURNAL_DIR

        own = f"{JOURNAL_DIR}/{self.ghost}/"
        if self.ghost is None or all(f.startswith(own) for f in files):
            where = ", ".join(sorted({f.rsplit("/", 1)[0] + "/" for f in files}))
        else:
            where = "a journal folder of this vault"
        self.notice(
            f"warning: the write is done but not journaled: a symlink, or what is not a folder or file, stands "
            f"on the way to {where}, and vaultmem writes no journal through one; review and commit take the "
            "change for a person's until a person puts a real folder there"
        )

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
            if held and self.after_write is not None:
                self.after_write(held)  # journaled already, each as it was written

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


def naming(use_case: Callable[Concatenate[App, P], R]) -> Callable[Concatenate[App, P], R]:
    """For a use case that checks a name is free (a shared title, a memory not yet written, a
    capture not yet promoted) and takes it: run in the vault's naming turn, its catch-up
    of the index inside it (vault/writers.py naming_turn)."""
    from vaultmem.vault.writers import naming_turn

    @functools.wraps(use_case)
    def run(app: App, *args: P.args, **kwargs: P.kwargs) -> R:
        with naming_turn(app.root):
            return use_case(app, *args, **kwargs)

    return run


PERSON_ENV = "VAULTMEM_PERSON"


def checked_person(config: VaultConfig, ghost: str | None, env: Mapping[str, str]) -> str | None:
    """The person acting, when no ghost is: $VAULTMEM_PERSON naming one of the vault's
    people ([vault] people). A ghost always wins (an agent is never a person by inheriting
    its person's shell); the MCP server strips the variable (mcp/runner.py)."""
    name = env.get(PERSON_ENV) or None
    if ghost is not None or name is None:
        return None
    if name not in config.people:
        raise InvalidInput(
            f"{PERSON_ENV}={name!r} is not one of this vault's people: add it to [vault] people in vaultmem.toml"
        )
    return name


def _checked_ghost(config: VaultConfig, ghost: str | None) -> str | None:
    if ghost is not None:
        validate_ghost_name(ghost)
        if ghost not in config.ghosts:
            raise InvalidInput(f"unknown ghost {ghost!r}: register it with `vaultmem ghost add {ghost}`")
    return ghost
