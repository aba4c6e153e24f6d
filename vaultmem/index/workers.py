"""Index builds spread over the machine's cores: a fresh lexical build (FullTextIndex.apply)
and the reading of many changed files (rows.py).

A BM25 + graph build of 10k notes in one process spends about 40% reading and parsing the
files and 60% in Whoosh sorting and writing postings, on one core. A build from nothing (a
first index, `index --full`, a clone, a checkout that changed most files) of at least
PARALLEL_MIN_DOCS notes does both in worker processes instead: the files in batches
(in_processes), the documents through whoosh's MpWriter, each worker writing a segment of
its own (the index then holds a few segments, scored as one). Below that, starting the
workers (~0.5 s each: they import their modules afresh) costs more than it saves.

MpWriter as shipped trusts its workers: one that dies leaves the writer waiting on a full
job queue forever, and a worker started from a script without a `__main__` guard runs that
script again. ParallelWriter checks the workers are alive while it waits and starts them
with no main script to re-run; a lost worker's notes are caught by the caller's count.
"""

from __future__ import annotations

import os
import queue
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

PARALLEL_MIN_DOCS = 2_000
PARALLEL_MAX_WORKERS = 4
_POLL_S = 0.5  # how often a writer waiting to hand out a job checks its workers


class ParallelBuildFailed(RuntimeError):
    """A fresh build in worker processes failed or lost notes; the index is empty again."""


class Counted:
    """An iterable passed through, counting what went by."""

    def __init__(self, items: Iterable[Any]) -> None:
        self._items = items
        self.count = 0

    def __iter__(self) -> Iterator[Any]:
        for item in self._items:
            self.count += 1
            yield item


class WorkerLost(RuntimeError):
    """A worker process of a parallel build ended before its work was done."""


def build_workers(docs: int) -> int:
    """Processes for a build (or a reading) of `docs` notes: 1 below PARALLEL_MIN_DOCS."""
    if docs < PARALLEL_MIN_DOCS:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, PARALLEL_MAX_WORKERS))


def parallel_writer(ix: Any, workers: int, limitmb: int) -> Any:
    """A whoosh writer whose documents go to `workers` spawned processes. Spawned, never
    forked: the watcher has threads, and a fork copies the locks they hold."""
    from whoosh.multiproc import MpWriter

    class ParallelWriter(MpWriter):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.jobqueue = _Watched(self.jobqueue, self.tasks)

        def _new_task(self) -> Any:
            # The worker gets the queue itself, not the watch over it (which holds the workers).
            watched = self.jobqueue
            self.jobqueue = watched.jobs
            try:
                with _no_main_script():
                    return super()._new_task()
            finally:
                self.jobqueue = watched

    return ParallelWriter(ix, procs=workers, multisegment=True, start_method="spawn", limitmb=limitmb)


@contextmanager
def _no_main_script() -> Iterator[None]:
    """Start processes that do not run the parent's main script: spawn runs it again in each
    (as `__mp_main__`) unless it knows none, and a caller's script without a `__main__`
    guard would run twice."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def in_processes(fn: Callable[[Any], Any], jobs: list[Any], workers: int) -> Iterator[tuple[Any, Any]]:
    """(job, fn(job) or the exception it raised) for each job in order, computed in `workers`
    spawned processes. `fn` must be a module-level function; a job whose worker died comes
    back as the pool's BrokenProcessPool, for the caller to compute itself."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        with _no_main_script():  # processes start as jobs are submitted
            futures = [pool.submit(fn, job) for job in jobs]
        for job, future in zip(jobs, futures, strict=True):
            try:
                yield job, future.result()
            except Exception as exc:
                yield job, exc


class _Watched:
    """A job queue whose put waits only while every worker is alive."""

    def __init__(self, jobs: Any, tasks: list[Any]) -> None:
        self.jobs = jobs
        self._tasks = tasks  # the writer's own list: workers join it as they start

    def put(self, item: Any) -> None:
        while True:
            try:
                self.jobs.put(item, timeout=_POLL_S)
                return
            except queue.Full:
                dead = [t for t in self._tasks if not t.is_alive()]
                if dead:
                    raise WorkerLost(f"a lexical index worker ended (exit code {dead[0].exitcode})") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.jobs, name)


def stop_workers(writer: Any) -> None:
    """End a failed parallel writer's workers: left waiting for work, they would keep this
    process from exiting (it joins its children)."""
    for task in getattr(writer, "tasks", ()):
        if task.is_alive():
            task.terminate()
            task.join(5)
