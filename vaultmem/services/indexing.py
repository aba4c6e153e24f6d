"""`index` and `status`: reconcile the vault into the derived indexes, and report on them."""

from __future__ import annotations

import json
from typing import Any

from vaultmem.index.catalog import diff_stats
from vaultmem.index.engine import error_list
from vaultmem.services.app import App
from vaultmem.vault.layout import walk_notes


def run_index(app: App, full: bool = False) -> dict[str, Any]:
    """Reconcile once under the writer lock (exit 6 if another writer keeps it)."""
    with app.lock("index"):
        report = app.indexer().run(full=full, with_vectors=app.embedding_choice().enabled)
    return report.to_dict()


def watcher_info(app: App) -> dict[str, Any]:
    path = app.state_dir / "watcher.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"running": False, "pid": None, "heartbeat": None}
    from vaultmem.index.lock import pid_alive

    running = bool(data.get("pid")) and pid_alive(int(data["pid"])) and data.get("state") != "stopped"
    return {"running": running, "pid": data.get("pid") if running else None, "heartbeat": data.get("heartbeat"), **{
        k: data.get(k) for k in ("started", "last_reconcile", "queue", "recent_errors") if k in data
    }}


def status(app: App) -> dict[str, Any]:
    """Read-only: what the indexes hold against what the files are. Paths, never contents."""
    db = app.db
    diff = diff_stats(walk_notes(app.root), db.stats())
    changed_files = len(diff.changed) + len(diff.deleted)
    choice = app.embedding_choice()
    ft_pending = db.pending_count("ft_hash")
    vec_pending = db.pending_count("vec_hash") if choice.enabled else 0
    stored_fp = db.get_meta("vector_fingerprint")
    by_scope = db.count_by_scope()
    pending = changed_files + ft_pending + vec_pending
    return {
        "vault": str(app.root),
        "notes": {"total": sum(by_scope.values()), "by_scope": by_scope},
        "index": {
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
        "watcher": watcher_info(app),
    }
