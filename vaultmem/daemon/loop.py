"""The watcher's worker loop: the one thread that touches the App, taking in turn syncs,
requests, settled file events, rescans and warm-up steps; each reconcile, and a changed
vaultmem.toml picked up."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from vaultmem.config import CONFIG_NAME, load_config
from vaultmem.daemon.base import SIGNAL_POLL_S, WatcherBase, WatcherStopping, index_settings, log
from vaultmem.daemon.events import CONFIG, git_writing
from vaultmem.daemon.server import Pending, error_reply
from vaultmem.daemon.status import now_iso
from vaultmem.errors import VaultmemError
from vaultmem.services.indexing import run_index
from vaultmem.vault import racy

# While git writes the tree (its index lock held), file events wait: checked this often,
# and a lock older than this is taken for one a crashed git left behind.
GIT_POLL_S = 0.1
GIT_LOCK_STALE_S = 120.0


class WorkerLoop(WatcherBase):
    def _loop(self) -> None:
        while True:
            action = self._next_action()
            if action is None:
                return
            kind, payload = action
            try:
                if kind == "sync":
                    self._sync(payload)
                elif kind == "job":
                    self._serve(payload)
                elif kind == "warm":
                    self._warm_more()
                elif kind == "commit":
                    self._autocommit()
                else:
                    self._reconcile(kind)
            except WatcherStopping:
                stopping = error_reply("stopping", "the watcher is stopping")
                for pending in payload if kind == "sync" else [payload.pending] if kind == "job" else []:
                    pending.finish(stopping)
                raise

    def _next_action(self) -> tuple[str, Any] | None:
        with self.cond:
            while not self.stopping:
                now = time.monotonic()
                self.worker_beat = now
                if self.waiters:
                    waiters, self.waiters = self.waiters, []
                    return "sync", waiters
                job = self._next_job(now)
                if job is not None:
                    return "job", job
                due = self.debounce.due_in(now)
                git_busy = (due == 0 or now >= self.next_rescan) and self._git_busy()
                if due == 0 and git_busy:
                    due = GIT_POLL_S  # git is writing the tree: index it once, when git is done
                if due == 0:
                    return "events", None
                if now >= self.next_rescan and not git_busy:
                    return "rescan", None
                if self.cold_segments and due is None:
                    return "warm", None
                commit_in = self._commit_in(now)
                if commit_in == 0:
                    return "commit", None
                if self._idle_too_long(now):
                    log.info("idle for %.0f s: exiting (started on demand)", now - self.last_request)
                    return None
                if self._unload_due(now):
                    self.unloading = now - self.last_request
                    log.info("idle for %.0f s: starting afresh without the model (started on demand)", self.unloading)
                    return None
                wait = self.next_rescan - now if commit_in is None else min(self.next_rescan - now, commit_in)
                # At most a second: Python runs a signal handler only when the main thread
                # runs Python code, and a SIGTERM the kernel hands to another thread does not
                # wake this wait; without the bound it would wait for the next rescan.
                self.cond.wait(min(SIGNAL_POLL_S, wait if due is None else min(due, wait)))
            return None

    def _git_busy(self) -> bool:
        """Git holds its index lock: a pull, checkout or merge is writing the vault's files."""
        if self.git_lock is None:
            return False
        try:
            mtime = os.stat(self.git_lock).st_mtime
        except OSError:
            return False
        return git_writing(mtime, time.time(), GIT_LOCK_STALE_S)

    def _commit_in(self, now: float) -> float | None:
        """Seconds until `[git] autocommit` commits the changes a reconcile found (0: now);
        None when off or nothing waits."""
        config = self.app.config
        if not config.git_autocommit or self.last_change is None:
            return None
        return max(0.0, self.last_change + config.git_quiet_seconds - now)

    def _autocommit(self) -> None:
        """`vaultmem commit` as the person who runs the watcher: one commit per ghost."""
        from vaultmem.services.commits import commit_pending

        self.last_change = None
        try:
            result = commit_pending(self.app)
        except VaultmemError as exc:
            self._error(f"autocommit failed: {exc.message}")
            # Tried again once the vault has been quiet as long again: most failures pass (a
            # person's `git status` or an editor's git plugin holding the index lock), and the
            # changes would otherwise wait for the next change to be committed.
            self.last_change = time.monotonic()
            return
        made = result.commits
        if result.held:
            held = ", ".join(str(h["path"]) for h in result.held)
            self._error(f"autocommit held back for a person (vaultmem review): {held}")
        if made:
            log.info("autocommit: %s", "; ".join(c.message.split("\n", 1)[0] for c in made))

    def _unload_due(self, now: float) -> bool:
        """Idle long enough, holding the model or decoded posting lists (not lean), with
        nothing to do: time to give their memory back (cli/serve.py restarts it lean)."""
        limit = self.settings.unload_after_s
        return (
            limit is not None
            and not self.lean
            and now - self.last_request >= limit
            and not (self.jobs or self.slow_jobs or self.waiters or self.debounce.pending or self.cold_segments)
            and self._commit_in(now) is None  # no autocommit waits
        )

    def _idle_too_long(self, now: float) -> bool:
        limit = self.settings.idle_exit_s
        return limit is not None and now - self.last_request >= limit

    def _idle(self) -> bool:
        # Hand the GIL over first: the request server's thread needs it for every step of
        # taking a request in, and would otherwise wait the switch interval (5 ms) each time.
        time.sleep(0)
        return not (
            self.jobs or self.slow_jobs or self.waiters or self.stopping or self.debounce.due_in(time.monotonic()) == 0
        )

    def _reconcile(self, reason: str, refresh: bool = True) -> bool:
        with self.cond:
            self.debounce.clear()  # the walk below sees every change made before this point
        if refresh:
            self._refresh_config()
        started = time.monotonic()
        self.progress = {"stage": "reading notes", "done": 0, "total": 0}
        try:
            # The very reconcile `vaultmem index` runs (the App's lock is the one we hold).
            report = run_index(self.app, defer_vectors=True, without_model=True)
        except WatcherStopping:
            raise
        except VaultmemError as exc:
            self._failed(reason, exc.message)
            return False
        except Exception as exc:
            # Whoosh, Chroma and SQLite raise their own exception types. The watcher must
            # outlive one failed reconcile: it logs, and the rescan retries shortly.
            log.exception("reconcile (%s) failed", reason)
            self._failed(reason, f"{type(exc).__name__}: {exc}")
            return False
        finally:
            self.progress = None
        self.reconciles += 1
        self.next_rescan = time.monotonic() + self.rescan_s
        counts = {"added": report.added, "updated": report.updated, "deleted": report.deleted, "moved": report.moved}
        summary = {"at": now_iso(), "reason": reason, **counts, "seconds": round(time.monotonic() - started, 3)}
        self.last_reconcile = summary
        if report.embedded_chunks or (report.fulltext_docs or 0) > 100:
            self._trim(True)
        elif report.fulltext_docs or report.deleted:
            # Small batches too, at most every few seconds: a Whoosh segment merge every
            # dozen commits frees megabytes the heap would otherwise keep (issue 14, churn).
            self._trim()
        if any(counts.values()):
            self.last_change = time.monotonic()
        if any(counts.values()) or reason == "start":
            log.info(
                "reconciled (%s): %d added, %d updated, %d deleted, %d moved in %.3f s",
                reason, *counts.values(), summary["seconds"],
            )  # fmt: skip
            with contextlib.suppress(OSError):
                self.status.write()
        return True

    def _embed_deferred(self) -> str | None:
        """The vectors of what was indexed while the model loaded, made for a search that
        waited for the model (services/search.py): the reconcile the loading asks for would
        run only after that search. Not while git writes the files (answered as they are,
        reconciled after); tried once, the rescan retries a failure."""
        if self._git_busy():
            return (
                "git is writing the vault's files: searched without the vectors of notes changed while the model loaded"
            )
        self.app.indexes.vectors_deferred = False
        # no config refresh here: a changed vaultmem.toml reopens the indexes, and the
        # search that asked holds them; the next reconcile picks it up
        if self._reconcile("model ready", refresh=False):
            return None
        return "the notes changed while the embedding model loaded could not be embedded: searched without them"

    def _failed(self, reason: str, message: str) -> None:
        self._error(f"reconcile ({reason}) failed: {message}")
        self.next_rescan = time.monotonic() + self.settings.retry_s

    def _error(self, message: str) -> None:
        log.error("%s", message)
        self.errors.add(message)

    def _refresh_config(self) -> bool:
        """Pick up an edited vaultmem.toml (a new ghost, types, search defaults, access
        rules). Its stat alone cannot prove it unchanged (an edit in the tick of its mtime
        keeps size and mtime): vault/racy.py hashes it again while that may be so."""
        seen, changed = racy.look_again(self._config_seen, self.root / CONFIG_NAME)
        self._config_seen = seen
        if not changed:
            return False
        try:
            config = load_config(self.root, self.env)
        except VaultmemError as exc:
            self._error(f"{CONFIG_NAME} not reloaded: {exc.message}")
            return False
        if index_settings(config) != index_settings(self.app.config):
            log.info("embedding or Chroma settings changed: reopening the indexes")
            self.app.close()
            self._app = self._open_app()
            self._load_model(self._app)
            self._start_warming()  # a new index object: its posting lists to decode again
        else:
            self.app.indexes.config = config  # views share it
        for warning in config.warnings:
            log.warning("%s: %s", CONFIG_NAME, warning)
        return True

    def _sync(self, waiters: list[Pending]) -> None:
        ok = self._reconcile("sync")
        reply = {"ok": True} if ok else {"ok": False, "error": self.errors.to_list()[-1]["message"]}
        for pending in waiters:
            pending.finish(reply)

    def _on_change(self, kind: str) -> None:
        with self.cond:
            self.debounce.mark(time.monotonic())
            if kind == CONFIG:
                self._config_seen = None  # re-read it at the next reconcile
            self.cond.notify_all()
