"""Helpers for tools/bench: timed child processes with their own peak memory, stats,
number formatting and a description of the machine."""

from __future__ import annotations

import json
import math
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.index import lock


class NA(Exception):
    """A figure that could not be measured; the message becomes "n/a (message)"."""


@dataclass(slots=True)
class Run:
    argv: list[str]
    rc: int
    seconds: float
    stdout: str
    stderr: str
    maxrss_mb: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out

    def reason(self) -> str:
        """Why a run failed, short enough for a table cell."""
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
        lines = [ln.strip() for ln in self.stderr.splitlines() if ln.strip()]
        tail = lines[-1] if lines else self.stdout.strip()[-200:]
        if "No such command" in self.stderr:
            tail = "command not available yet"
        return f"exit {self.rc}: {tail[:160]}"

    def json(self) -> Any:
        if not self.ok:
            raise NA(self.reason())
        try:
            return json.loads(self.stdout)
        except ValueError as exc:
            raise NA(f"stdout is not one JSON document ({exc})") from None


def run(
    argv: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 600.0, cwd: Path | None = None
) -> Run:
    """Run a child to completion; wall-clock from spawn to exit, and the child's own peak RSS.

    os.wait4 gives the rusage of exactly this child (and its reaped descendants), unlike
    RUSAGE_CHILDREN, whose ru_maxrss is a high-water mark over every child so far."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(argv),
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # tells Popen the child is reaped
        out.seek(0)
        err.seek(0)
        return Run(
            argv=list(argv),
            rc=proc.returncode,
            seconds=seconds,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            maxrss_mb=usage.ru_maxrss / 1024.0,  # Linux reports kilobytes
            timed_out=fired.is_set(),
        )


# --- statistics and formatting ----------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def pct(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile: with ~20 samples, p90 is the 18th smallest."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(q / 100.0 * len(ordered)) - 1))
    return float(ordered[k])


def ms(seconds: float) -> str:
    value = seconds * 1000.0
    return f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms"


def secs(seconds: float) -> str:
    return f"{seconds:,.1f} s" if seconds >= 10 else f"{seconds:.2f} s"


def rate(count: float, seconds: float, unit: str) -> str:
    if seconds <= 0:
        return "n/a"
    value = count / seconds
    return f"{value:,.0f} {unit}/s" if value >= 10 else f"{value:.1f} {unit}/s"


def mb(value: float) -> str:
    return f"{value:,.0f} MB"


def lat(samples: Sequence[float]) -> str:
    """Median and p90 of latencies in seconds."""
    return f"p50 {ms(median(samples))} · p90 {ms(pct(samples, 90))}"


# --- /proc readings of a running process (the watcher) -------------------------------------


def proc_rss_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a live process, from /proc/PID/status."""
    cur = peak = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            cur = int(line.split()[1]) / 1024
        elif line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
    return cur, peak


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads), from /proc/PID/stat."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()  # the command name may hold spaces
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def pid_alive(pid: int) -> bool:
    """vaultmem's own liveness test, except that a zombie counts as gone: the bench reaps
    the processes it starts and waits for them to end."""
    if not lock.pid_alive(pid):
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
