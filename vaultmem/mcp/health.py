"""`GET /health` of `vaultmem mcp --http`: whether the server can serve, for a load
balancer's or a service manager's probe.

It needs no token, so it tells nothing about notes: no count, title, path or ghost, not
the vault's location either — only the server's own state, in a few fixed words. 503 when
no call could be served (the token file or vaultmem.toml cannot be read: every request
would be refused or fail); 200 otherwise, `starting` while the watcher starts or loads its
model (searches are answered meanwhile, with BM25 + graph), `degraded` when no watcher
answers (every call opens the indexes in the server process: slower, still correct).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vaultmem.config import load_config
from vaultmem.daemon.client import ping
from vaultmem.daemon.paths import connect_path
from vaultmem.errors import VaultmemError
from vaultmem.services.tokens import TokenBook

PING_S = 2.0  # a watcher that does not answer a ping within this is unresponsive
CACHE_S = 1.0  # probes in a burst share one look: a probe costs a ping, not more


@dataclass(frozen=True, slots=True)
class Health:
    status: str  # ok | starting | degraded | unavailable
    watcher: str  # running | starting | unresponsive | none
    model: str  # ready | loading | unloaded (idle) | off (no watcher holds one: each call loads its own)
    tokens: str  # ok | unreadable
    vault: str  # ok | unreadable (vaultmem.toml)

    @property
    def http_status(self) -> int:
        return 503 if self.status == "unavailable" else 200

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def look(root: Path, starting: subprocess.Popen[bytes] | None, book: TokenBook) -> Health:
    """The server's state now (blocking: a ping of the watcher's socket, two file reads)."""
    tokens = "unreadable" if book.check() else "ok"
    try:
        load_config(root)
        vault = "ok"
    except VaultmemError:
        vault = "unreadable"
    reply = ping(str(root), timeout_s=PING_S)
    if reply is not None:
        # "unloaded": an idle watcher gave the model's memory back; the next call loads it
        state = reply.get("model")
        watcher, model = "running", state if state in ("loading", "unloaded") else "ready"
    else:
        path = connect_path(str(root))
        model = "off"
        if starting is not None and starting.poll() is None:
            watcher = "starting"  # started by this server, not answering yet
        elif path is not None and os.path.exists(path):
            watcher = "unresponsive"
        else:
            watcher = "none"
    if "unreadable" in (tokens, vault):
        status = "unavailable"
    elif watcher == "starting" or model == "loading":
        status = "starting"
    elif watcher != "running":
        status = "degraded"
    else:
        status = "ok"
    return Health(status, watcher, model, tokens, vault)


class HealthEndpoint:
    """The route's handler. Looks run in a thread of their own, one at a time, and are
    shared for CACHE_S: a flood of probes holds neither the tool calls' threads nor the
    watcher."""

    def __init__(self, root: Path, starting: subprocess.Popen[bytes] | None, book: TokenBook) -> None:
        self.root = root
        self.starting = starting
        self.book = book
        self._lock = threading.Lock()
        self._last: tuple[float, Health] | None = None
        self._limiter: Any = None

    def now(self) -> Health:
        with self._lock:
            if self._last is not None and time.monotonic() - self._last[0] < CACHE_S:
                return self._last[1]
            health = look(self.root, self.starting, self.book)
            self._last = (time.monotonic(), health)
            return health

    async def answer(self, request: Any) -> Any:
        import anyio
        from starlette.responses import JSONResponse

        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
        health = await anyio.to_thread.run_sync(self.now, limiter=self._limiter)
        return JSONResponse(health.to_dict(), status_code=health.http_status, headers={"cache-control": "no-store"})
