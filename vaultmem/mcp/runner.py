"""Runs a tool's use case (tools.py `Read` or `Write`) for the ghost the transport decided,
and returns its result as JSON data.

When a watcher runs for the vault, reads (search, get, query, reference) go to it over its
socket as typed requests (services/reads.py, the `call` op): the watcher stays the one
process that opens the indexes, however many MCP servers run. Writes run here, as the CLI
runs them (atomic file writes, then a bounded wait until the watcher has indexed them), so
a search issued after a write returns finds it. A watcher this server has just started
(cli/autostart.py) is waited for, a few seconds at most, rather than opening the indexes
here beside it; until its embedding model is loaded it answers searches with BM25 + graph
and says so. Without a watcher (autostart off, or it could not start) everything runs
here, as a cold CLI command would.

Each call here opens its own App (and closes it): the vault's config is read afresh, as a
CLI command reads it, and no index stays open in this process between calls — only the
warm views (index/views.py), which check themselves against the state db before use. Calls
run here one at a time; reads the watcher answers run side by side.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultmem.daemon.client import exchange, synced_after_write
from vaultmem.daemon.paths import connect_path
from vaultmem.errors import VaultmemError, error_from
from vaultmem.index.views import WarmViews
from vaultmem.mcp.tools import Plan, Read
from vaultmem.models import Result, to_json
from vaultmem.services import reads
from vaultmem.services.app import App
from vaultmem.services.freshness import AsTheyAre, Freshness


@dataclass(frozen=True, slots=True)
class Answer:
    data: dict[str, Any]  # the result as the CLI's `--json` document
    warnings: list[str] = field(default_factory=list)  # what the use case noticed
    via: str = "process"  # "watcher" or "process"


# How long a call waits for the socket of a watcher this server started: it takes the index
# lock after its imports (~1 s), or waits up to its lock_wait_s (15 s) for an indexer.
WATCHER_START_WAIT_S = 20.0
# Errors that mean "this watcher will not answer it": run the read here instead.
NOT_ANSWERED = ("stopping", "not_this_vault", "invalid_request")
# Who is asking is the transport's business: never the environment's.
IDENTITY_ENV = ("VAULTMEM_GHOST", "VAULTMEM_VAULT", "VAULTMEM_PERSON")


class Runner:
    def __init__(
        self, root: Path, starting: subprocess.Popen[bytes] | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        self.root = root
        self._env = {k: v for k, v in (os.environ if env is None else env).items() if k not in IDENTITY_ENV}
        self._lock = threading.Lock()
        # Warm views (the names' Resolver, the link graph, readers' links, query vectors) kept
        # across the Apps this server opens, one a call: each is checked against the db first.
        self._views = WarmViews()
        # A watcher started by this server and not yet answering (cli/autostart.py).
        self._starting = starting
        self._starting_until = time.monotonic() + WATCHER_START_WAIT_S

    def call(self, plan: Plan, ghost: str | None, model: str | None = None) -> Answer:
        """The use case's result; its typed error (VaultmemError) when it fails. `model`:
        who writes, for the write journal ($VAULTMEM_MODEL of the server, else the host's
        name from the session)."""
        if isinstance(plan, Read):
            answer = self._forward(plan.request, ghost)
            if isinstance(answer, Answer):
                return answer
            request = plan.request
            # A watcher that does not answer still holds the indexes: read them as they are.
            freshness = AsTheyAre(answer) if answer is not None else None
            return self._here(ghost, lambda app: reads.run(app, request), freshness)
        return self._here(ghost, plan.run, model=self._env.get("VAULTMEM_MODEL") or model)

    def _here(
        self,
        ghost: str | None,
        use_case: Callable[[App], Result],
        freshness: Freshness | None = None,
        model: str | None = None,
    ) -> Answer:
        notices: list[str] = []
        if isinstance(freshness, AsTheyAre):
            notices.append(f"warning: the watcher did not answer ({freshness.unanswered}): answered without it")
        with self._lock:
            app = App.open(
                self.root, ghost, env=self._env, notice=notices.append, freshness=freshness, views=self._views
            )
            try:
                app.after_write = synced_after_write(str(self.root), notices.append)
                app.model = model
                result = use_case(app)
            finally:
                app.close()
        return Answer(to_json(result), notices, "process")

    def _socket(self) -> str | None:
        """The watcher's socket; waits for the one of a watcher this server is starting."""
        path = connect_path(str(self.root))
        if path is None:
            return None
        proc = self._starting
        if proc is not None:
            while not os.path.exists(path) and proc.poll() is None and time.monotonic() < self._starting_until:
                time.sleep(0.05)
            self._starting = None  # up, gone (another watcher won the race, or none could start) or late
        return path if os.path.exists(path) else None

    def _forward(self, request: Any, ghost: str | None) -> Answer | str | None:
        """The watcher's answer to a typed read; None when no watcher answers it, or why a
        watcher that is there did not (it is hung: unresponsive)."""
        path = self._socket()
        if path is None:
            return None
        message = {
            "op": "call",
            "use_case": reads.name_of(request),
            "ghost": ghost,
            "root": str(self.root),
            "request": reads.encode(request),
        }
        reply, why = exchange(path, message)
        if reply is None:
            # No watcher after all, or it went away mid-answer: run it here. One that did
            # not even take the request is hung, and keeps its indexes: read them as they are.
            return "no answer within the first-byte bound" if why == "unresponsive" else None
        error = reply.get("error")
        if isinstance(error, dict):
            if error.get("code") == "unresponsive":
                return str(error.get("message"))
            if error.get("code") in NOT_ANSWERED:
                return None
            raise error_from(error)
        data, warnings = reply.get("result"), reply.get("warnings")
        if not isinstance(data, dict):
            raise VaultmemError("the watcher's answer holds no result")
        return Answer(data, [str(w) for w in warnings] if isinstance(warnings, list) else [], "watcher")
