"""How many processes a fresh lexical build uses, and the watch over their job queue."""

from __future__ import annotations

import queue
from dataclasses import dataclass

import pytest

from vaultmem.index import workers


@pytest.mark.parametrize(
    ("docs", "cores", "expected"),
    [
        (0, 8, 1),
        (workers.PARALLEL_MIN_DOCS - 1, 8, 1),
        (workers.PARALLEL_MIN_DOCS, 1, 1),
        (workers.PARALLEL_MIN_DOCS, 2, 2),
        (50_000, 3, 3),
        (50_000, 64, workers.PARALLEL_MAX_WORKERS),
    ],
)
def test_build_workers(monkeypatch: pytest.MonkeyPatch, docs: int, cores: int, expected: int) -> None:
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert workers.build_workers(docs) == expected


@dataclass
class _Task:
    alive: bool
    exitcode: int | None = None

    def is_alive(self) -> bool:
        return self.alive


def test_a_job_waits_while_the_workers_live_and_fails_when_one_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "_POLL_S", 0.01)
    jobs: queue.Queue[object] = queue.Queue(1)
    tasks = [_Task(True), _Task(True)]
    watched = workers._Watched(jobs, tasks)
    watched.put("first")
    assert jobs.get_nowait() == "first"
    watched.put("second")  # the queue is full now
    tasks[1] = _Task(False, exitcode=-9)  # killed while a job waits for room
    with pytest.raises(workers.WorkerLost, match="exit code -9"):
        watched.put("third")
    assert watched.qsize() == 1  # the rest of the queue's interface is the queue's
