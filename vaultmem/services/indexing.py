"""`index` and `status`: reconcile the vault into the derived indexes, and report on them."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from vaultmem import clock
from vaultmem.index.catalog import diff_stats
from vaultmem.index.embedder import EmbeddingUnavailable
from vaultmem.index.engine import error_list
from vaultmem.models import IndexReport, StatusReport
from vaultmem.paths import StatePaths
from vaultmem.services.lookup import location_of
from vaultmem.vault.layout import classify, walk_notes

if TYPE_CHECKING:
    from vaultmem.services.app import App


def run_index(app: App, full: bool = False, defer_vectors: bool = False, without_model: bool = False) -> IndexReport:
    """Reconcile once under the writer lock (exit 6 if another writer keeps it).
    `defer_vectors` (the watcher's own reconciles): while the model loads in the background,
    leave the vectors to the reconcile that follows its loading rather than wait for it.
    `without_model` (a search's catch-up, the watcher's): when the embedding model cannot
    be loaded, the other indexes are brought up to date all the same, the vectors left for
    a run that can load it (a search then runs lexically and says why)."""
    enabled = app.indexes.embedding_choice().enabled
    with_vectors = enabled and not (defer_vectors and app.indexes.model_loading())
    try:
        with app.lock("index"):
            report = app.indexes.indexer(app.progress).run(full=full, with_vectors=with_vectors)
    except EmbeddingUnavailable as exc:
        if not (without_model and with_vectors):
            raise
        app.notice(f"warning: {exc.message}; indexed without vectors")
        with_vectors = False
        with app.lock("index"):
            report = app.indexes.indexer(app.progress).run(full=full, with_vectors=False)
    if with_vectors:
        app.indexes.vectors_deferred = False
    elif enabled:
        # the first search with the model embeds them first: what this reconcile indexed,
        # and what an earlier process left without vectors (killed mid-embedding), which
        # its report does not count
        app.indexes.vectors_deferred = True
    if report.added or report.updated or report.deleted or report.moved or full:
        app.state.secure(deep=True)  # the files Whoosh, Chroma and SQLite just made: owner-only
    return report if app.ghost is None else readers_view(app, report)


def readers_view(app: App, report: IndexReport) -> IndexReport:
    """What a ghost is told of a reconcile of the whole vault (SPEC §3: an operator command
    run with a ghost shows that ghost's view): changes, unchanged notes and problems of the
    notes it may see; the indexer's own counters, which count everyone's, left out."""
    mine = _visible_paths(app)
    kinds = [kind for path, kind in report.changes.items() if mine(path)]
    seen = sum(_count_by_scope(app).values())
    changed = kinds.count("added") + kinds.count("updated") + kinds.count("moved")
    return replace(
        report,
        added=kinds.count("added"),
        updated=kinds.count("updated"),
        deleted=kinds.count("deleted"),
        moved=kinds.count("moved"),
        unchanged=max(0, seen - changed),
        errors=[e for e in report.errors if mine(e["path"])],
        fulltext_docs=None,
        embedded_notes=None,
        embedded_chunks=None,
        kept_chunks=None,
        changes={},
    )


# A watcher rewrites its status file every few seconds; one silent for longer is gone
# (killed, or its pid reused by another process) even if the file still says otherwise.
HEARTBEAT_STALE_S = 30.0


def watcher_info(app: App) -> dict[str, Any]:
    """The watcher's own report (.vaultmem/watcher.json), and whether it is really running."""
    from vaultmem.index.lock import pid_alive
    from vaultmem.vault.dates import parse_iso

    path = StatePaths(app.root).watcher_status
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        return {"running": False, "pid": None, "heartbeat": None}
    pid = data.get("pid")
    beat = parse_iso(data["heartbeat"]) if isinstance(data.get("heartbeat"), str) else None
    fresh = beat is not None and clock.epoch() - beat.timestamp() < HEARTBEAT_STALE_S
    running = isinstance(pid, int) and pid_alive(pid) and data.get("state") != "stopped" and fresh
    # Its socket must still be a socket: one replaced by a file answers nobody (the
    # watcher notices at its next heartbeat and stops).
    socket_path = data.get("socket")
    if running and isinstance(socket_path, str) and not _is_socket(socket_path):
        running = False
    # Alive but not answering: this command met it hung (the client's first-byte bound), or
    # its heartbeat stopped while its process lives on (stopped with SIGSTOP, wedged).
    hung = isinstance(pid, int) and pid_alive(pid) and data.get("state") != "stopped"
    hung = hung and (app.freshness.unanswered is not None or not fresh)
    running = running and not hung
    info: dict[str, Any] = {
        "running": running,
        "pid": pid if running or hung else None,
        "heartbeat": data.get("heartbeat"),
    }
    if hung:
        info["state"] = "unresponsive"
    else:
        info["state"] = data.get("state") if running or data.get("state") == "stopped" else "dead"
    # idle_exit_s: a watcher started on demand (cli/autostart.py) exits after that long idle;
    # model: "loading" while hybrid and vector searches wait for it; postings: "decoding" while
    # it decodes the lexical index ahead (a search meanwhile decodes what it needs itself)
    keys = (
        "started", "socket", "last_reconcile", "queue", "pending_events", "recent_errors", "idle_exit_s", "model",
        "postings",
    )  # fmt: skip
    # What the last reconcile changed, the events waiting and the errors met are the whole
    # vault's: a ghost polling them would count another ghost's private writes (SPEC §3).
    vault_wide = ("last_reconcile", "queue", "pending_events", "recent_errors")
    for key in keys:
        if key in data and not (app.ghost is not None and key in vault_wide):
            info[key] = data[key]
    return info


def _is_socket(path: str) -> bool:
    import os
    import stat

    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def status(app: App) -> StatusReport:
    """Read-only: what the indexes hold against what the files are. Paths, never contents.
    An operator command over the whole vault; with a ghost, that ghost's view of it: counts,
    pending work and problems of the notes it may see only (SPEC §3)."""
    db = app.db
    mine = _visible_paths(app)
    diff = diff_stats(walk_notes(app.root), db.stats())
    changed_files = sum(1 for p in [*(e.relpath for e in diff.changed), *diff.deleted] if mine(p))
    choice = app.indexes.embedding_choice()
    by_scope = _count_by_scope(app)
    everything = sum(by_scope.values())
    ft_pending = _pending(app, "ft_hash", mine)
    from vaultmem.index.fulltext import SCHEMA_VERSION, problem

    state = StatePaths(app.root)
    marker = state.whoosh_schema
    # Read-only: a damaged store is reported here, and set aside by the next reconcile.
    damaged = problem(state.whoosh)
    if damaged is not None:
        app.notice(f"warning: the lexical index is damaged ({damaged}): the next index or search rebuilds it")
    if damaged is not None or not marker.is_file() or marker.read_text() != SCHEMA_VERSION:
        ft_pending = everything  # the lexical index must be rebuilt
    vec_pending = _pending(app, "vec_hash", mine) if choice.enabled else 0
    if choice.enabled and app.config.chroma_mode == "embedded":
        from vaultmem.index.vectors import store_problem

        damaged = store_problem(state.dir)
        if damaged is not None:
            app.notice(f"warning: the vector store is damaged ({damaged}): the next index rebuilds it")
    if choice.enabled and choice.dims is not None:
        identity = app.indexes.vector_identity()
        if identity is not None and (
            db.get_meta("vector_fingerprint") != identity[0]
            or db.get_meta("vector_collection") != identity[1]
            or not identity[2]
        ):
            vec_pending = everything  # everything must be re-embedded
    stored_fp = db.get_meta("vector_fingerprint")
    pending = changed_files + ft_pending + vec_pending
    return StatusReport(
        vault=str(app.root),
        notes={"total": everything, "by_scope": by_scope},
        index={
            "fresh": pending == 0 and db.get_meta("indexes_cleared") == "1",
            "pending": pending,
            "pending_detail": {"files": changed_files, "lexical": ft_pending, "vectors": vec_pending},
            "errors": [e for e in error_list(db) if mine(e["path"])],
            "embedding": {
                "backend": choice.backend,
                "model": choice.model or None,
                "dims": choice.dims,
                "reason": choice.reason,
                "fingerprint": stored_fp,
            },
            "chroma": {"mode": app.config.chroma_mode, "url": app.config.chroma_url},
        },
        watcher=watcher_info(app),
    )


def _visible_paths(app: App) -> Callable[[str], bool]:
    """Which vault-relative paths an operator command may speak of: all of them without a
    ghost, those the ghost may read with one."""
    if app.ghost is None:
        return lambda path: True
    return lambda path: app.can_read(classify(path))


def _count_by_scope(app: App) -> dict[str, int]:
    if app.ghost is None:
        return app.db.count_by_scope()
    counts: dict[str, int] = {}
    for rec in app.db.light_notes():
        if rec.scope is not None and app.can_read(location_of(rec)):
            counts[rec.scope] = counts.get(rec.scope, 0) + 1
    return counts


def _pending(app: App, column: str, mine: Callable[[str], bool]) -> int:
    if app.ghost is None:
        return app.db.pending_count(column)
    todo, drop = app.db.pending(column)
    return sum(1 for r in todo if mine(r.path)) + sum(1 for p in drop if mine(p))
