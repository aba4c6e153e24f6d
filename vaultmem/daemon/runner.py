"""The watcher: while it runs, the one process that opens a vault's indexes.

Life: take the index lock (role "watcher") for the whole run; open one warm App; serve
the socket; start the watchdog observer; catch up; then loop on one worker thread (the
main thread), which alone touches the App, doing in turn:

- sync requests of write commands: one reconcile answers every request that arrived
  before it started (ten writers at once cost a few reconciles, not ten);
- forwarded commands and typed reads (the MCP server's), FIFO, each after reconciling
  pending file events, if any;
- a reconcile when file events have settled (events.Debounce);
- a rescan every `rescan_s`, which heals events that never came (inotify limits, network
  mounts, changes made while events were unavailable).

A reconcile is the engine's own (index/engine.py): a stat walk, then only changed files,
crash-safe per row. SIGINT, SIGTERM and SIGHUP stop it cleanly: the reconcile under way
stops at its next batch boundary (the engine's markers make that safe), queued requests
are told "stopping" (clients then run the command themselves), the socket and pid file are
removed, the status file says "stopped", and the lock is released last. After a kill -9
the kernel drops the flock and the next watcher removes the dead one's socket.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from vaultmem.config import CONFIG_NAME
from vaultmem.daemon import paths
from vaultmem.daemon.base import (
    RESCAN_WITHOUT_EVENTS_S,
    AnotherWatcher,
    Settings,
    WatcherStopping,
    folder_identity,
    log,
)
from vaultmem.daemon.bridge import CommandRunner
from vaultmem.daemon.client import find_root, ping
from vaultmem.daemon.events import Debounce, make_handler, watched_event_classes
from vaultmem.daemon.jobs import Job
from vaultmem.daemon.loop import WorkerLoop
from vaultmem.daemon.memory import trimmer
from vaultmem.daemon.requests import Requests
from vaultmem.daemon.server import Pending, RequestServer, SocketUnavailable
from vaultmem.daemon.status import RecentErrors, StatusFile, now_iso
from vaultmem.daemon.warmup import WarmUp
from vaultmem.errors import IndexBusy
from vaultmem.index.lock import IndexLock
from vaultmem.paths import StatePaths
from vaultmem.services.app import App
from vaultmem.services.freshness import KeptByWatcher
from vaultmem.shown import clean
from vaultmem.vault import racy
from vaultmem.vault.git import index_lock_path
from vaultmem.vault.nesting import kept_by
from vaultmem.vault.racy import SeenFile

__all__ = ["AnotherWatcher", "Settings", "Watcher", "WatcherStopping", "configure_logging"]


class Watcher(Requests, WorkerLoop, WarmUp):
    """The watcher: its life here (lock, socket, observer, signals, home checks); its
    requests (requests.py), worker loop (loop.py) and warm-up (warmup.py) in their own
    modules."""

    def __init__(
        self, root: Path, load_commands: Callable[[], CommandRunner], settings: Settings | None = None
    ) -> None:
        """`load_commands` builds what runs forwarded command lines (the CLI's own app: the
        daemon never imports the CLI); called once, while warming up, not before the
        socket answers."""
        self.root = root.resolve()
        # The folder it started on: a vault renamed, deleted or replaced while it runs is
        # no longer this watcher's (see _home_problem and _serves).
        self.root_id = folder_identity(str(self.root))
        self.settings = settings or Settings()
        self.rescan_s = self.settings.rescan_s
        self.files = StatePaths(self.root)
        self.env = dict(os.environ)  # requests swap os.environ for a moment; config uses this
        socket_path = paths.bind_path(str(self.root))
        if socket_path is None:
            raise SocketUnavailable(
                f"no private place for the watcher's socket: the vault path is too long for "
                f"{paths.state_file(str(self.root), paths.WATCHER_SOCKET)!r} and neither $XDG_RUNTIME_DIR nor "
                f"/tmp/vaultmem-{os.getuid()} is a folder only you may enter"
            )
        self.socket_path = socket_path
        self.cond = threading.Condition()  # an RLock inside: the signal handler may re-enter
        self.debounce = Debounce(self.settings.quiet_s, self.settings.max_latency_s)
        self.jobs: deque[Job] = deque()
        self.slow_jobs: deque[Job] = deque()
        self.worker_beat = time.monotonic()
        self.waiters: list[Pending] = []
        self.stopping = False
        self.state = "starting"
        self.started = now_iso()
        self.last_reconcile: dict[str, Any] | None = None
        self.reconciles = 0
        self.served = 0
        self.errors = RecentErrors()
        self.next_rescan = 0.0
        self.last_request = time.monotonic() - self.settings.idle_since_s
        self.lean = self.settings.lean
        self.progress: dict[str, Any] | None = None
        self.unloading = None
        self.last_change = None
        self.git_lock = index_lock_path(self.root)
        self.events = "inotify"
        self._app: App | None = None
        self._config_seen: SeenFile | None = None
        self._load_commands = load_commands
        self._run_command: CommandRunner | None = None
        self._observer: Any = None
        self._server: RequestServer | None = None
        self.status = StatusFile(self.files.watcher_status, self.snapshot)
        self._trim = trimmer()
        # Whether the posting lists of the start's segments, and the notes' filter metadata,
        # are still to read ahead (_warm_more).
        self.cold_segments = False
        self.postings_decoded = False
        self._warming_since: float | None = None  # when it began

    def run(self) -> None:
        """Watch until stopped. IndexBusy (exit 6) when another watcher or indexer holds the vault."""
        self._refuse_if_another()
        self.files.make()
        lock = self._acquire_lock()
        try:
            self._run_locked()
        finally:
            lock.release()
            log.info("stopped (pid %d)", os.getpid())

    def _refuse_if_another(self) -> None:
        other = ping(str(self.root), timeout_s=0.5)
        if other is not None:
            pid = other.get("pid")
            raise AnotherWatcher(f"a watcher already runs for {self.root} (pid {pid})", pid=pid)

    def _acquire_lock(self) -> IndexLock:
        """The index lock, waited for up to lock_wait_s; a watcher that starts answering
        meanwhile (it won a race to start) ends the wait at once (AnotherWatcher)."""
        deadline = time.monotonic() + self.settings.lock_wait_s
        while True:
            try:
                return IndexLock(self.files.lock, "watcher", min(0.25, max(0.0, deadline - time.monotonic()))).acquire()
            except IndexBusy as exc:
                self._refuse_if_another()
                if time.monotonic() >= deadline:
                    raise IndexBusy(
                        f"{exc.message.rsplit('; waited', 1)[0]}; waited {self.settings.lock_wait_s:.0f} s"
                    ) from None

    def request_stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()

    def _run_locked(self) -> None:
        restore_signals = self._install_signals()
        server: RequestServer | None = None
        pid_file = self.files.watcher_pid
        try:
            pid_file.write_text(f"{os.getpid()}\n", encoding="utf-8")
            self.files.secure(deep=True)
            self._app = self._open_app()
            self.status.write()
            server = RequestServer(self.socket_path, self.dispatch, self.stalled)
            server.start()
            self._server = server
            self.status.start_heartbeat(self.settings.heartbeat_s, self._check_home)
            log.info("watching %s (pid %d, socket %s)", self.root, os.getpid(), self.socket_path)
            if self.settings.events:
                self._start_observer()
            else:
                self.events = "off"
            with contextlib.suppress(WatcherStopping):
                self.state = "catching_up"
                self.status.write()
                if not self.lean:
                    self._load_model(self.app)  # meanwhile: catch up, warm up, serve
                self._reconcile("start")
                self._warm_up()
                self.state = "watching"
                self.status.write()
                self._loop()
        finally:
            self.state = "stopping"
            self._refuse_queued()
            if server is not None:
                server.close()
            if self._observer is not None:
                # watchdog 7 logs "queue_events() called when the thread is inactive" as an
                # error when an emitter is stopped mid-read; it is a shutdown race, not a fault.
                logging.getLogger("watchdog.observers.inotify").setLevel(logging.CRITICAL)
                self._observer.stop()
                self._observer.join(timeout=5)
            self.status.stop_heartbeat()
            if self._app is not None:
                self._app.close()
            with contextlib.suppress(OSError):
                pid_file.unlink()
            self.state = "stopped"
            with contextlib.suppress(OSError):
                self.status.write()
            restore_signals()

    def _open_app(self) -> App:
        # The watcher's own App acts for nobody in particular (its reconciles, autocommit):
        # not for the ghost or person of whichever shell started it.
        env = {k: v for k, v in self.env.items() if k not in ("VAULTMEM_GHOST", "VAULTMEM_PERSON")}
        # Looked at before App.open reads it: an edit made in between is then seen as one.
        seen = racy.look(self.root / CONFIG_NAME)
        app = App.open(
            self.root,
            None,
            env=env,
            notice=self._notice,
            progress=self._check_stop,
            freshness=KeptByWatcher(self._embed_deferred),
        )
        self._config_seen = seen
        return app

    def _install_signals(self) -> Callable[[], None]:
        if threading.current_thread() is not threading.main_thread():
            return lambda: None  # embedded in a test thread: the caller stops it
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}

        def restore() -> None:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

        return restore

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        log.info("%s received: stopping", signal.Signals(signum).name)
        self.request_stop()

    def _check_home(self) -> None:
        """.vaultmem/ is safe to delete; the watcher must then go, not keep writing indexes
        nobody can see while a new writer (which finds no lock and no socket) starts."""
        problem = self._home_problem()
        if problem is not None and not self.stopping:
            self._error(f"{problem}: stopping")
            self.request_stop()

    def _home_problem(self) -> str | None:
        if folder_identity(str(self.root)) != self.root_id:
            return f"the vault folder {self.root} was moved, deleted or replaced"
        if self._server is not None and not self._server.still_bound():
            return f"the socket {self.socket_path} was removed or replaced"
        if not os.path.exists(self.socket_path) or not self.files.lock.exists():
            return "the socket or the index lock was removed (.vaultmem/ deleted?)"
        return None

    def _serves(self, argv: list[str], env: dict[str, str], cwd: str) -> bool:
        """Whether the vault a command line names (as the client finds it: --vault,
        $VAULTMEM_VAULT, else the folders above `cwd`) is this watcher's, by path and by
        inode: a moved vault, or a socket reached through another vault's path (a symlink),
        must never be answered from this one."""
        found = find_root(argv, env, cwd)
        if found is None or Path(found) != self.root or folder_identity(found) != self.root_id:
            return False
        return kept_by(self.root) is None  # made a vault where another keeps it: not one (vault/nesting.py)

    def _check_stop(self, label: str, done: int, total: int) -> None:
        self.worker_beat = time.monotonic()
        self.progress = {"stage": label, "done": done, "total": total}  # what a waiting client shows
        # The engine calls this between batches: stopping here leaves its markers consistent.
        if self.stopping:
            raise WatcherStopping("the watcher is stopping; run the command again")
        if label == "embedding":
            self._trim()  # a long catch-up would otherwise grow by what each batch frees

    def _notice(self, message: str) -> None:
        log.warning("%s", message)

    def _start_observer(self) -> None:
        from watchdog.observers import Observer

        observer = Observer()
        try:
            observer.schedule(
                make_handler(str(self.root), self._on_change),
                str(self.root),
                recursive=True,
                event_filter=watched_event_classes(),
            )
            observer.start()
        except OSError as exc:
            # Typically the inotify watch limit (ENOSPC). Rescans still find every change.
            self.rescan_s = min(self.rescan_s, RESCAN_WITHOUT_EVENTS_S)
            self.events = "unavailable"
            self._error(f"file events unavailable ({exc}); rescanning every {self.rescan_s:.0f} s instead")
            return
        self._observer = observer


class _Shown(logging.Formatter):
    """Log lines with note text in them (paths, keys of vaultmem.toml) as data: the log is
    read in a terminal (`watch` in the foreground, `tail -f watcher.log`)."""

    def format(self, record: logging.LogRecord) -> str:
        return clean(super().format(record))


def configure_logging(vault: Path, to_stderr: bool) -> None:
    """The watcher's log: .vaultmem/watcher.log, and stderr when it runs in the foreground."""
    import sys

    files = StatePaths(vault)
    files.make()
    formatter = _Shown("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handler = logging.FileHandler(files.watcher_log, encoding="utf-8")
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.addHandler(handler)  # other libraries' warnings and errors land here too
    root.setLevel(logging.WARNING)
    log.setLevel(logging.INFO)
    if to_stderr:
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(_Shown("vaultmem watch: %(message)s"))
        log.addHandler(console)
