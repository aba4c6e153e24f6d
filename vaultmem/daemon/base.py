"""What the parts of the watcher (runner.py, requests.py, loop.py, warmup.py) share: its
settings, its state (declared here, set up by Watcher.__init__), the errors that stop it, and
the steps one part asks of another."""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.config import VaultConfig
from vaultmem.daemon.bridge import CommandRunner
from vaultmem.daemon.events import Debounce
from vaultmem.daemon.jobs import Job
from vaultmem.daemon.server import Pending, RequestServer
from vaultmem.daemon.status import RecentErrors, StatusFile
from vaultmem.errors import IndexBusy
from vaultmem.paths import StatePaths
from vaultmem.services.app import App
from vaultmem.vault.racy import SeenFile

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
    # An autostarted watcher idle this long with the model loaded starts afresh without it
    # (cli/serve.py execs itself `--lean`); None: never.
    unload_after_s: float | None = None
    # Start without loading the model or decoding posting lists: the first request does.
    lean: bool = False
    idle_since_s: float = 0.0  # how long it was already idle before this start (a lean restart)


class WatcherStopping(IndexBusy):
    """Raised at a batch boundary of a reconcile once a stop was asked for."""


class AnotherWatcher(IndexBusy):
    """Another watcher answers for the vault. Normal for one started on demand: several
    processes may race to start one (cli/autostart.py); the first one wins."""


def index_settings(config: VaultConfig) -> tuple[object, ...]:
    """What the open indexes and the loaded model depend on."""
    return (config.embedding_backend, config.embedding_model, config.chroma_mode, config.chroma_url)


def folder_identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the folder at `path`, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class WatcherBase:
    """The watcher's state, and the steps its parts ask of one another."""

    root: Path
    root_id: tuple[int, int] | None
    settings: Settings
    rescan_s: float
    files: StatePaths
    env: dict[str, str]
    socket_path: str
    cond: threading.Condition
    debounce: Debounce
    jobs: deque[Job]
    slow_jobs: deque[Job]
    worker_beat: float
    waiters: list[Pending]
    stopping: bool
    state: str
    started: str
    last_reconcile: dict[str, Any] | None
    reconciles: int
    served: int
    errors: RecentErrors
    next_rescan: float
    last_request: float
    progress: dict[str, Any] | None  # the reconcile under way: {stage, done, total}; None between
    lean: bool  # started lean, and no request has woken it yet
    unloading: float | None  # set when it stops to start afresh lean: seconds idle by then
    git_lock: Path | None  # git's index lock of the repository holding the vault (loop.py _git_busy)
    last_change: float | None  # when a reconcile last changed notes, while they wait for autocommit
    events: str
    status: StatusFile
    cold_segments: bool
    postings_decoded: bool  # the start's posting lists (_warm_more); then the note lookup
    _app: App | None
    # vaultmem.toml as the App's config was read from it (vault/racy.py); None: read it again
    _config_seen: SeenFile | None
    _load_commands: Callable[[], CommandRunner]
    _run_command: CommandRunner | None
    _observer: Any
    _server: RequestServer | None
    _trim: Any
    _warming_since: float | None

    @property
    def app(self) -> App:
        assert self._app is not None, "the App opens when the watcher starts"
        return self._app

    def request_stop(self) -> None:
        raise NotImplementedError

    def _check_home(self) -> None:
        raise NotImplementedError

    def _serves(self, argv: list[str], env: dict[str, str], cwd: str) -> bool:
        raise NotImplementedError

    def _check_stop(self, label: str, done: int, total: int) -> None:
        raise NotImplementedError

    def _open_app(self) -> App:
        raise NotImplementedError

    def _reconcile(self, reason: str) -> bool:
        raise NotImplementedError

    def _git_busy(self) -> bool:
        raise NotImplementedError

    def _refresh_config(self) -> bool:
        raise NotImplementedError

    def _error(self, message: str) -> None:
        raise NotImplementedError

    def _load_model(self, app: App) -> None:
        raise NotImplementedError

    def _start_warming(self) -> None:
        raise NotImplementedError

    def _warm_more(self) -> None:
        raise NotImplementedError

    def _wake(self) -> None:
        raise NotImplementedError

    def _idle(self) -> bool:
        raise NotImplementedError

    def _next_job(self, now: float) -> Job | None:
        raise NotImplementedError

    def _serve(self, job: Job) -> None:
        raise NotImplementedError

    def _model_state(self) -> str:
        raise NotImplementedError

    def snapshot(self) -> dict[str, Any]:
        raise NotImplementedError
