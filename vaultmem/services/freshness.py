"""How a use case makes sure it reads current state (`Freshness`): a process on its own
catches up itself (`CatchUp`), the watcher trusts its own reconciles (`KeptByWatcher`), and a
command beside a watcher that does not answer reads the indexes as they are (`AsTheyAre`).
The composition root (app.py) gives each App one.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Protocol

from vaultmem.errors import environment_error

if TYPE_CHECKING:
    from vaultmem.index.catalog import CatalogResult
    from vaultmem.services.app import App


class Freshness(Protocol):
    """How a use case makes sure it reads current state: catch up itself (a CLI process),
    or trust the watcher, which owns the indexes and reconciles before every request."""

    # Why a hybrid search must run lexically (the vector store belongs to a process that
    # does not answer), or None.
    lexical_only: str | None
    # Why the watcher did not answer this command (it runs beside a hung one), or None.
    unanswered: str | None

    def catch_up(self, app: App) -> CatalogResult: ...

    def lock(self, app: App, role: str, wait_s: float | None) -> AbstractContextManager[object]: ...

    def refresh(self, app: App) -> None: ...

    def embed_deferred(self, app: App) -> str | None:
        """Embed the notes indexed while the model loaded (Indexes.vectors_deferred), now that
        it is loaded; a warning when that failed and the search goes on without them."""
        ...


class CatchUp:
    """A process on its own: it reconciles what changed before it reads, under the lock. On
    a full or read-only disk a read goes on with the indexes as they are, and says so; the
    next command that can write catches up."""

    lexical_only: str | None = None
    unanswered: str | None = None

    def catch_up(self, app: App) -> CatalogResult:
        """Bring the state db up to date with the files (cheap: a stat walk)."""
        from vaultmem.index.catalog import CatalogResult, catch_up

        progress = None
        if app.progress is not None:
            hook = app.progress

            def progress(done: int, total: int) -> None:
                hook("reading notes", done, total)

        try:
            return catch_up(app.root, app.db, app.config, progress, names=app.indexes.views.names)
        except Exception as exc:  # OSError, sqlite3's: which ones is environment_error's business
            _stale(app, exc)
            return CatalogResult()

    def lock(self, app: App, role: str, wait_s: float | None) -> AbstractContextManager[object]:
        from vaultmem.index.lock import DEFAULT_WAIT_S, IndexLock

        return IndexLock(app.state.lock, role, DEFAULT_WAIT_S if wait_s is None else wait_s)

    def refresh(self, app: App) -> None:
        from vaultmem.services.indexing import run_index

        try:
            run_index(app, without_model=True)
        except Exception as exc:  # Whoosh's, Chroma's, SQLite's: see environment_error
            _stale(app, exc)

    def embed_deferred(self, app: App) -> str | None:
        return None  # a process on its own loads the model when it needs it: nothing waits


def _stale(app: App, exc: Exception) -> None:
    """A catch-up that failed because the disk is full or cannot be written: the read goes
    on with the indexes as they are; anything else is raised."""
    known = environment_error(exc)
    if known is None:
        raise exc
    app.notice(f"warning: the index was not brought up to date ({known.message}); answered from it as it is")


class KeptByWatcher:
    """Inside the watcher: it holds the index lock for its whole life and reconciles pending
    file events before it serves a request, so a use case neither locks nor catches up.
    `embed`: the watcher's own reconcile for the vectors it left while its model loaded
    (with its bookkeeping, and never while git writes the files)."""

    lexical_only: str | None = None
    unanswered: str | None = None

    def __init__(self, embed: Callable[[], str | None] | None = None) -> None:
        self._embed = embed

    def catch_up(self, app: App) -> CatalogResult:
        from vaultmem.index.catalog import CatalogResult

        return CatalogResult()

    def lock(self, app: App, role: str, wait_s: float | None) -> AbstractContextManager[object]:
        return nullcontext()  # a second flock would wait on the watcher's own

    def refresh(self, app: App) -> None:
        return None

    def embed_deferred(self, app: App) -> str | None:
        return self._embed() if self._embed is not None else None


class AsTheyAre(KeptByWatcher):
    """A read while the watcher that owns the indexes does not answer (stopped, wedged): no
    catch-up, no lock, no refresh — it holds them — but the indexes as they are, searched
    lexically (its vector store is not this process's to open)."""

    def __init__(self, why: str) -> None:
        super().__init__()
        self.unanswered = why
        self.lexical_only = "the watcher, which holds the vector store, did not answer: searched with BM25 + graph only"
