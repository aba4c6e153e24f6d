"""`index` and `status`: reconcile the vault into the derived indexes, and report on them."""

from __future__ import annotations

import json
from typing import Any

from vaultmem import clock
from vaultmem.index.catalog import diff_stats
from vaultmem.index.engine import error_list
from vaultmem.models import IndexReport, StatusReport
from vaultmem.paths import StatePaths
from vaultmem.services.app import App
from vaultmem.vault.layout import walk_notes


def run_index(app: App, full: bool = False) -> IndexReport:
    """Reconcile once under the writer lock (exit 6 if another writer keeps it)."""
    with app.lock("index"):
        report = app.indexes.indexer(app.progress).run(full=full, with_vectors=app.indexes.embedding_choice().enabled)
    return report


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
    info: dict[str, Any] = {"running": running, "pid": pid if running else None, "heartbeat": data.get("heartbeat")}
    info["state"] = data.get("state") if running or data.get("state") == "stopped" else "dead"
    for key in ("started", "socket", "last_reconcile", "queue", "pending_events", "recent_errors"):
        if key in data:
            info[key] = data[key]
    return info


def status(app: App) -> StatusReport:
    """Read-only: what the indexes hold against what the files are. Paths, never contents."""
    db = app.db
    diff = diff_stats(walk_notes(app.root), db.stats())
    changed_files = len(diff.changed) + len(diff.deleted)
    choice = app.indexes.embedding_choice()
    ft_pending = db.pending_count("ft_hash")
    from vaultmem.index.fulltext import SCHEMA_VERSION

    marker = StatePaths(app.root).whoosh_schema
    if not marker.exists() or marker.read_text() != SCHEMA_VERSION:
        ft_pending = sum(db.count_by_scope().values())  # the lexical index must be rebuilt
    vec_pending = db.pending_count("vec_hash") if choice.enabled else 0
    if choice.enabled and choice.dims is not None:
        identity = app.indexes.vector_identity()
        if identity is not None and (
            db.get_meta("vector_fingerprint") != identity[0]
            or db.get_meta("vector_collection") != identity[1]
            or not identity[2]
        ):
            vec_pending = sum(db.count_by_scope().values())  # everything must be re-embedded
    stored_fp = db.get_meta("vector_fingerprint")
    by_scope = db.count_by_scope()
    pending = changed_files + ft_pending + vec_pending
    return StatusReport(
        vault=str(app.root),
        notes={"total": sum(by_scope.values()), "by_scope": by_scope},
        index={
            "fresh": pending == 0 and db.get_meta("indexes_cleared") == "1",
            "pending": pending,
            "pending_detail": {"files": changed_files, "lexical": ft_pending, "vectors": vec_pending},
            "errors": error_list(db),
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
