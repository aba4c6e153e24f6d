"""The requests a watcher queues for its worker: a forwarded command line (`CliJob`) or a
typed read (`CallJob`), each in the quick lane or, when it may take seconds, the slow one."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from vaultmem.daemon.client import forwardable
from vaultmem.daemon.server import Pending
from vaultmem.services import reads


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
# reconcile asked for, a review of many changes): they wait in a lane of their own, so that searches and gets queued
# behind them wait at most for the one running — not for all of them.
SLOW_COMMANDS = ("query", "reference", "index", "review")
# A slow request is taken before quick ones once it has waited this long (no starvation).
SLOW_WAIT_MAX_S = 5.0
# The worker gives a sign of life at every step it takes (a request, a batch of a
# reconcile, an idle second); none for this long while it has work means it is wedged:
# requests are then answered `unresponsive` and their clients answer by themselves.
WORKER_STALL_S = 30.0
