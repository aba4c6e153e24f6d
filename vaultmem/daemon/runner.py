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
import importlib
import logging
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from vaultmem.config import CONFIG_NAME, VaultConfig, load_config
from vaultmem.daemon import paths
from vaultmem.daemon.bridge import CommandRunner, check_cli_request
from vaultmem.daemon.client import find_root, forwardable, ping
from vaultmem.daemon.events import CONFIG, Debounce, make_handler, watched_event_classes
from vaultmem.daemon.memory import trimmer
from vaultmem.daemon.server import BadRequest, Pending, RequestServer, SocketUnavailable, error_reply
from vaultmem.daemon.status import RecentErrors, StatusFile, now_iso
from vaultmem.errors import IndexBusy, InvalidInput, UsageError, VaultmemError
from vaultmem.index.lock import IndexLock
from vaultmem.models import to_json
from vaultmem.paths import StatePaths
from vaultmem.services import reads
from vaultmem.services.app import App
from vaultmem.services.freshness import KeptByWatcher
from vaultmem.services.indexing import run_index

SIGNAL_POLL_S = 1.0  # how soon the main loop notices a signal (see _next_action)
log = logging.getLogger("vaultmem.watcher")

# Without file events (the observer could not start) the rescan is all there is.
RESCAN_WITHOUT_EVENTS_S = 10.0
# Modules the first request would otherwise import; loaded while nobody waits.
WARM_MODULES = (
    "vaultmem.services.search",
    "vaultmem.services.notes",
    "vaultmem.services.indexing",
    "vaultmem.services.query",
    "vaultmem.services.reference",
    "vaultmem.search.hybrid",
)


@dataclass(frozen=True, slots=True)
class Settings:
    rescan_s: float = 60.0
    quiet_s: float = 0.25
    max_latency_s: float = 1.0
    heartbeat_s: float = 5.0
    lock_wait_s: float = 15.0
    retry_s: float = 5.0
    # An autostarted watcher (cli/autostart.py) exits after this long without requests; None: never.
    idle_exit_s: float | None = None
    # False: no file events; changes are found by the rescans (and requests' syncs) alone.
    events: bool = True


class WatcherStopping(IndexBusy):
    """Raised at a batch boundary of a reconcile once a stop was asked for."""


class AnotherWatcher(IndexBusy):
    """Another watcher answers for the vault. Normal for one started on demand: several
    processes may race to start one (cli/autostart.py); the first one wins."""


@dataclass(slots=True)
class CliJob:
    argv: list[str]
    env: dict[str, str]
    tty: bool
    cwd: str
    pending: Pending = field(default_factory=Pending)
    queued: float = field(default_factory=time.monotonic)

    @property
    def slow(self) -> bool:
        return forwardable(self.argv) in SLOW_COMMANDS


@dataclass(slots=True)
class CallJob:
    """A read use case with its typed request (services/reads.py), run for `ghost`."""

    ghost: str | None
    request: Any
    pending: Pending = field(default_factory=Pending)
    queued: float = field(default_factory=time.monotonic)

    @property
    def slow(self) -> bool:
        return reads.name_of(self.request) in SLOW_COMMANDS


Job = CliJob | CallJob
# Requests that may take seconds (a scan of every file, a 2 s regex, a topic's files, a
# reconcile asked for): they wait in a lane of their own, so that searches and gets queued
# behind them wait at most for the one running — not for all of them.
SLOW_COMMANDS = ("query", "reference", "index")
# A slow request is taken before quick ones once it has waited this long (no starvation).
SLOW_WAIT_MAX_S = 5.0
# The worker gives a sign of life at every step it takes (a request, a batch of a
# reconcile, an idle second); none for this long while it has work means it is wedged:
# requests are then answered `unresponsive` and their clients answer by themselves.
WORKER_STALL_S = 30.0


def _config_signature(root: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(root / CONFIG_NAME)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _index_settings(config: VaultConfig) -> tuple[object, ...]:
    """What the open indexes and the loaded model depend on."""
    return (config.embedding_backend, config.embedding_model, config.chroma_mode, config.chroma_url)


def _identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the folder at `path`, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class Watcher:
    def __init__(
        self, root: Path, load_commands: Callable[[], CommandRunner], settings: Settings | None = None
    ) -> None:
        """`load_commands` builds what runs forwarded command lines (the CLI's own app: the
        daemon never imports the CLI); called once, while warming up, not before the
        socket answers."""
        self.root = root.resolve()
        # The folder it started on: a vault renamed, deleted or replaced while it runs is
        # no longer this watcher's (see _home_problem and _serves).
        self.root_id = _identity(str(self.root))
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
        self.last_request = time.monotonic()
        self.events = "inotify"
        self._app: App | None = None
        self._config_sig: tuple[int, int] | None = None
        self._load_commands = load_commands
        self._run_command: CommandRunner | None = None
        self._observer: Any = None
        self._server: RequestServer | None = None
        self.status = StatusFile(self.files.watcher_status, self.snapshot)
        self._trim = trimmer()
        # Whether the posting lists of the start's segments are still to decode (_warm_more).
        self.cold_segments = False
        self._warming_since: float | None = None  # when it began

    @property
    def app(self) -> App:
        assert self._app is not None, "the App opens when the watcher starts"
        return self._app

    # --- life -------------------------------------------------------------------------

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
        app = App.open(
            self.root, None, env=self.env, notice=self._notice, progress=self._check_stop, freshness=KeptByWatcher()
        )
        self._config_sig = _config_signature(self.root)
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
        if _identity(str(self.root)) != self.root_id:
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
        return found is not None and Path(found) == self.root and _identity(found) == self.root_id

    def stalled(self) -> str | None:
        """Why the worker is not getting on with its queue (connection threads ask), or None."""
        quiet = time.monotonic() - self.worker_beat
        if quiet < WORKER_STALL_S or self.stopping:
            return None
        return f"the watcher (pid {os.getpid()}) has made no progress for {quiet:.0f} s"

    def _check_stop(self, label: str, done: int, total: int) -> None:
        self.worker_beat = time.monotonic()
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

    def _warm_up(self) -> None:
        """Load now what the first request would otherwise load while a client waits. The
        vector side (the embedding model, Chroma) loads on a thread of its own, started
        before the catch-up (_load_model): requests are served meanwhile, a search with
        BM25 + graph only (it says so), and the vectors of what changed wait for the
        reconcile that follows the loading."""
        self._run_command = self._load_commands()
        for name in WARM_MODULES:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
        self._start_warming()
        self._warm_more()  # until the first request; the rest when idle

    def _start_warming(self) -> None:
        self.cold_segments = True
        self._warming_since = time.monotonic()

    def _warm_more(self) -> None:
        """Decode the posting lists of the index as it was at the start (~2 s at 50k notes)
        while nothing else waits (a search meanwhile decodes what it needs itself).
        Segments written later (one per commit, a merged one now and then) are read on
        demand and kept within the cache's budget: decoding each merged segment whole
        again made the watcher grow 24% over 2,000 edits at 10k notes (issue 14: 15%)."""
        try:
            fulltext = self.app.indexes.fulltext()
            self.cold_segments = not fulltext.warm(keep_going=self._idle)
            if not self.cold_segments:
                seconds = time.monotonic() - (self._warming_since or time.monotonic())
                log.info("posting lists decoded: %d held (%.2f s)", fulltext.postings_held, seconds)
                self._trim(True)  # the decoding's temporary arrays
                with contextlib.suppress(OSError):
                    self.status.write()
        except Exception as exc:  # Whoosh's own types; searches read on demand, as before
            self.cold_segments = False
            log.warning("decoding posting lists ahead failed: %s: %s", type(exc).__name__, exc)

    def _idle(self) -> bool:
        # Hand the GIL over first: the request server's thread needs it for every step of
        # taking a request in, and would otherwise wait the switch interval (5 ms) each time.
        time.sleep(0)
        return not (
            self.jobs or self.slow_jobs or self.waiters or self.stopping or self.debounce.due_in(time.monotonic()) == 0
        )

    def _load_model(self, app: App) -> None:
        fingerprint = app.db.get_meta("vector_fingerprint")
        if not app.indexes.embedding_choice().enabled or fingerprint is None:
            # No vectors yet: the first reconcile loads the model and builds them, and a
            # search waits for it (a hybrid search then is what the vault will answer).
            return
        started = time.monotonic()

        def done(error: BaseException | None) -> None:
            if error is not None:
                # Model and Chroma libraries raise their own types; a request will meet the
                # same problem and report it to its caller, so log it and serve on.
                self._error(f"warming up the vector index failed: {type(error).__name__}: {error}")
                return
            log.info("embedding model ready in %.2f s", time.monotonic() - started)
            with self.cond:
                # Embed what was indexed without vectors meanwhile (run_index defer_vectors).
                self.next_rescan = 0.0
                self.cond.notify_all()

        app.indexes.load_model_in_background(fingerprint, done)

    # --- the worker loop ----------------------------------------------------------------

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
                if due == 0:
                    return "events", None
                if now >= self.next_rescan:
                    return "rescan", None
                if self.cold_segments and due is None:
                    return "warm", None
                if self._idle_too_long(now):
                    log.info("idle for %.0f s: exiting (started on demand)", now - self.last_request)
                    return None
                wait = self.next_rescan - now
                # At most a second: Python runs a signal handler only when the main thread
                # runs Python code, and a SIGTERM the kernel hands to another thread does not
                # wake this wait; without the bound it would wait for the next rescan.
                self.cond.wait(min(SIGNAL_POLL_S, wait if due is None else min(due, wait)))
            return None

    def _next_job(self, now: float) -> Job | None:
        """Quick requests first; a slow one when none waits, or once it has waited long."""
        if self.slow_jobs and (not self.jobs or now - self.slow_jobs[0].queued >= SLOW_WAIT_MAX_S):
            return self.slow_jobs.popleft()
        return self.jobs.popleft() if self.jobs else None

    def _idle_too_long(self, now: float) -> bool:
        limit = self.settings.idle_exit_s
        return limit is not None and now - self.last_request >= limit

    def _reconcile(self, reason: str) -> bool:
        with self.cond:
            self.debounce.clear()  # the walk below sees every change made before this point
        self._refresh_config()
        started = time.monotonic()
        try:
            # The very reconcile `vaultmem index` runs (the App's lock is the one we hold).
            report = run_index(self.app, defer_vectors=True)
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
        if any(counts.values()) or reason == "start":
            log.info(
                "reconciled (%s): %d added, %d updated, %d deleted, %d moved in %.3f s",
                reason, *counts.values(), summary["seconds"],
            )  # fmt: skip
            with contextlib.suppress(OSError):
                self.status.write()
        return True

    def _failed(self, reason: str, message: str) -> None:
        self._error(f"reconcile ({reason}) failed: {message}")
        self.next_rescan = time.monotonic() + self.settings.retry_s

    def _error(self, message: str) -> None:
        log.error("%s", message)
        self.errors.add(message)

    def _refresh_config(self) -> bool:
        """Pick up an edited vaultmem.toml (a new ghost, types, search defaults)."""
        signature = _config_signature(self.root)
        if signature == self._config_sig:
            return False
        self._config_sig = signature
        try:
            config = load_config(self.root, self.env)
        except VaultmemError as exc:
            self._error(f"{CONFIG_NAME} not reloaded: {exc.message}")
            return False
        if _index_settings(config) != _index_settings(self.app.config):
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

    def _serve(self, job: CliJob | CallJob) -> None:
        if self._refresh_config() or self.debounce.pending:
            self._reconcile("request")  # an edit saved a moment ago is part of the answer
        if isinstance(job, CallJob):
            self.served += 1
            job.pending.finish(self._call(job))
            return
        try:
            assert self._run_command is not None, "loaded by _warm_up, before the loop serves"
            reply = self._run_command(job.argv, job.env, job.tty, self._provider(job.cwd))
        except Exception as exc:
            # run_cli's VaultmemGroup already turns command errors into exit codes; this is
            # the last guard, so one request can never take the watcher down.
            log.exception("request %s failed", job.argv[:1])
            reply = {"stdout": "", "stderr": f"vaultmem: error: internal error in the watcher: {exc}\n", "exit_code": 1}
        if self.stopping and reply.get("exit_code") == WatcherStopping.exit_code:
            reply = error_reply("stopping", "the watcher is stopping")  # the client runs it itself
        self.served += 1
        job.pending.finish(reply)

    def _call(self, job: CallJob) -> dict[str, Any]:
        """A typed read for a front end (the MCP server): its result as JSON data and what
        it noticed, or its typed error. The ghost is exactly the one asked for: no
        environment variable of this process stands in for a missing one."""
        warnings: list[str] = []
        try:
            view = self.app.view(job.ghost, env={}, notice=warnings.append, progress=self._check_stop)
            result = reads.run(view, job.request)
        except WatcherStopping:
            raise
        except VaultmemError as exc:
            return {"error": exc.to_dict()}
        except Exception as exc:
            # Whoosh, Chroma and SQLite raise their own types: logged and answered, and the
            # watcher serves on.
            log.exception("read %s failed", type(job.request).__name__)
            return error_reply("internal", f"{type(exc).__name__}: {exc}")
        return {"result": to_json(result), "warnings": warnings}

    def _provider(self, cwd: str) -> Callable[..., App]:
        def provide(vault: Any, ghost: str | None, notice: Any, progress: Any = None) -> App:
            if vault:
                asked = Path(cwd, os.path.expanduser(str(vault))).resolve()
                if asked != self.root:
                    raise UsageError(f"this watcher serves {self.root}, not {asked}")
            return self.app.view(ghost, notice=notice, progress=self._check_stop)

        return provide

    # --- requests (connection threads) ----------------------------------------------------

    def dispatch(self, request: dict[str, Any]) -> dict[str, Any] | Pending:
        op = request["op"]
        if op == "ping":
            return self._ping()
        if op == "cli":
            argv, env, tty, cwd = check_cli_request(request)
            if not self._serves(argv, env, cwd):
                self._check_home()  # a moved vault: stop now, not at the next heartbeat
                # Not an answer: the client (Python or the launcher) runs the command itself.
                return error_reply("not_this_vault", f"this watcher serves {self.root}")
            job: CliJob | CallJob = CliJob(argv, env, tty, cwd)
            pending = job.pending
        elif op == "call":
            root = request.get("root")
            if not isinstance(root, str) or not self._serves([], {"VAULTMEM_VAULT": root}, "/"):
                return error_reply("not_this_vault", f"this watcher serves {self.root}")
            job = CallJob(_ghost_of(request), _read_of(request))
            pending = job.pending
        elif op == "sync":
            changed = request.get("paths", [])
            if not isinstance(changed, list) or not all(isinstance(p, str) for p in changed):
                raise BadRequest('"paths" must be a list of strings')
            root = request.get("root")
            if root is not None and (not isinstance(root, str) or not self._serves([], {"VAULTMEM_VAULT": root}, "/")):
                return error_reply("not_this_vault", f"this watcher serves {self.root}")
            pending = Pending()
        else:
            raise BadRequest(f"unknown op {op!r}; the watcher knows ping, cli, call and sync")
        with self.cond:
            if self.stopping:
                return error_reply("stopping", "the watcher is stopping")
            self.last_request = time.monotonic()
            if op in ("cli", "call"):
                (self.slow_jobs if job.slow else self.jobs).append(job)
            else:
                self.waiters.append(pending)
            self.cond.notify_all()
        return pending

    def _refuse_queued(self) -> None:
        with self.cond:
            self.stopping = True
            jobs = [*self.jobs, *self.slow_jobs]
            self.jobs, self.slow_jobs = deque(), deque()
            waiters, self.waiters = self.waiters, []
        for job in jobs:
            job.pending.finish(error_reply("stopping", "the watcher is stopping"))
        for pending in waiters:
            pending.finish(error_reply("stopping", "the watcher is stopping"))

    def _on_change(self, kind: str) -> None:
        with self.cond:
            self.debounce.mark(time.monotonic())
            if kind == CONFIG:
                self._config_sig = None  # re-read it at the next reconcile
            self.cond.notify_all()

    def _ping(self) -> dict[str, Any]:
        with self.cond:
            queue = len(self.jobs) + len(self.slow_jobs) + len(self.waiters)
        return {
            "ok": True,
            "pid": os.getpid(),
            "vault": str(self.root),
            "socket": self.socket_path,
            "state": self.state,
            "model": self._model_state(),
            # "decoding" while the posting lists are decoded ahead (_warm_more), then "ready"
            "postings": "decoding" if self.cold_segments else "ready",
            "served": self.served,
            "reconciles": self.reconciles,
            "queue": queue,
        }

    def _model_state(self) -> str:
        """The embedding model: `loading` while searches run BM25 + graph only, else `ready`
        (also when the vault has no embeddings, or loading failed: a search then says why)."""
        app = self._app
        return "loading" if app is not None and app.indexes.model_loading() else "ready"

    def snapshot(self) -> dict[str, Any]:
        with self.cond:
            queue = len(self.jobs) + len(self.slow_jobs) + len(self.waiters)
            pending_events = self.debounce.count
        return {
            "pid": os.getpid(),
            "vault": str(self.root),
            "socket": self.socket_path,
            "log": str(self.files.watcher_log),
            "started": self.started,
            "state": self.state,
            "model": self._model_state(),
            # "decoding" while the posting lists are decoded ahead (_warm_more), then "ready"
            "postings": "decoding" if self.cold_segments else "ready",
            "events": self.events,
            "rescan_interval": self.rescan_s,
            "idle_exit_s": self.settings.idle_exit_s,
            "idle_s": round(time.monotonic() - self.last_request, 1),
            "last_reconcile": self.last_reconcile,
            "reconciles": self.reconciles,
            "served": self.served,
            "queue": queue,
            "pending_events": pending_events,
            "recent_errors": self.errors.to_list(),
        }


def _ghost_of(request: dict[str, Any]) -> str | None:
    ghost = request.get("ghost")
    if ghost is not None and not isinstance(ghost, str):
        raise BadRequest('"ghost" must be a string or null')
    return ghost


def _read_of(request: dict[str, Any]) -> Any:
    name = request.get("use_case")
    if not isinstance(name, str):
        raise BadRequest('"use_case" must be a string')
    try:
        return reads.decode(name, request.get("request"))
    except InvalidInput as exc:
        raise BadRequest(exc.message) from None


def configure_logging(vault: Path, to_stderr: bool) -> None:
    """The watcher's log: .vaultmem/watcher.log, and stderr when it runs in the foreground."""
    import sys

    files = StatePaths(vault)
    files.make()
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handler = logging.FileHandler(files.watcher_log, encoding="utf-8")
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.addHandler(handler)  # other libraries' warnings and errors land here too
    root.setLevel(logging.WARNING)
    log.setLevel(logging.INFO)
    if to_stderr:
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(logging.Formatter("vaultmem watch: %(message)s"))
        log.addHandler(console)
