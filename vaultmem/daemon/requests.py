"""The watcher's requests: the socket's ops (`dispatch`, on connection threads), the two
lanes of jobs, and how the worker serves each job (a command line through the CLI, a typed
read through services/reads.py); `ping` and the status snapshot."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vaultmem.daemon.base import WatcherBase, WatcherStopping, log
from vaultmem.daemon.bridge import check_cli_request
from vaultmem.daemon.jobs import SLOW_WAIT_MAX_S, WORKER_STALL_S, CallJob, CliJob, Job
from vaultmem.daemon.server import BadRequest, Pending, error_reply
from vaultmem.errors import InvalidInput, UsageError, VaultmemError
from vaultmem.models import to_json
from vaultmem.services import reads
from vaultmem.services.app import App


class Requests(WatcherBase):
    def stalled(self) -> str | None:
        """Why the worker is not getting on with its queue (connection threads ask), or None."""
        quiet = time.monotonic() - self.worker_beat
        if quiet < WORKER_STALL_S or self.stopping:
            return None
        return f"the watcher (pid {os.getpid()}) has made no progress for {quiet:.0f} s"

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

    def _next_job(self, now: float) -> Job | None:
        """Quick requests first; a slow one when none waits, or once it has waited long."""
        if self.slow_jobs and (not self.jobs or now - self.slow_jobs[0].queued >= SLOW_WAIT_MAX_S):
            return self.slow_jobs.popleft()
        return self.jobs.popleft() if self.jobs else None

    def _serve(self, job: CliJob | CallJob) -> None:
        if self.lean:
            self._wake()
        if self._refresh_config() or (self.debounce.pending and not self._git_busy()):
            # An edit saved a moment ago is part of the answer; a pull git is still writing
            # is not (answered from the indexes as they are, reconciled once it is done).
            self._reconcile("request")
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
            # the reconcile under way ({stage, done, total}), shown by a client waiting on it
            "progress": self.progress,
        }

    def _model_state(self) -> str:
        """The embedding model: `loading` while hybrid and vector searches wait for it, else `ready`
        (also when the vault has no embeddings, or loading failed: a search then says why)."""
        app = self._app
        if self.lean:
            return "unloaded"  # until a request (daemon/warmup.py _wake)
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
