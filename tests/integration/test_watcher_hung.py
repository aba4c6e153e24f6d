"""Issue 22, items 8 and 9.

8. A hung watcher — stopped (SIGSTOP), or alive with its worker wedged — no longer costs
   every command a minute: a command that gets no receipt within the first-byte bound
   (~2 s, $VAULTMEM_WATCHER_TIMEOUT), or is told the worker is stalled, answers by itself
   from the indexes as they are and says so; `status` reports the watcher unresponsive.
9. Slow requests (query, reference, index) wait in a lane of their own: a search queued
   behind several of them is served after the one running, not after all of them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from vaultmem.daemon.client import exchange, ping
from vaultmem.daemon.paths import connect_path

pytestmark = pytest.mark.slow  # real watcher processes, stopped and resumed

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")


def _wait(check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    env.update(VAULTMEM_NO_AUTOSTART="1", VAULTMEM_CACHE_DIR=os.environ["VAULTMEM_CACHE_DIR"], **extra)
    return env


@pytest.fixture
def stopped_watcher(vault: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real watcher process for `vault`, stopped with SIGSTOP once it serves."""
    Cli(vault).ok("note", "create", "--title", "Kelp", "--type", "fact", "--scope", "shared", "--body", "kelp forest")
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultmem.cli.serve", "--vault", str(vault)],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait(lambda: (ping(str(vault)) or {}).get("state") == "watching")
        os.kill(proc.pid, signal.SIGSTOP)
        yield proc
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
        proc.wait(timeout=30)


def test_a_stopped_watcher_costs_a_command_the_first_byte_bound_only(
    vault: Path, stopped_watcher: subprocess.Popen[bytes]
) -> None:
    env = _env(VAULTMEM_WATCHER_TIMEOUT="1")
    for args in (["search", "kelp"], ["get", "Kelp"], ["query", "kelp"]):
        # The old client waited out 20 s stalls, twice, per command: 60-80 s. The bound here
        # is generous for a busy machine, and far below that.
        done = subprocess.run(
            [VAULTMEM, "--vault", str(vault), *args, "--json"], env=env, capture_output=True, text=True, timeout=40
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert "did not answer" in done.stderr, done.stderr
        assert "Kelp" in done.stdout
    status = subprocess.run(
        [VAULTMEM, "--vault", str(vault), "status", "--json"], env=env, capture_output=True, text=True, timeout=40
    )
    watcher = json.loads(status.stdout)["watcher"]
    assert watcher["state"] == "unresponsive" and watcher["pid"] == stopped_watcher.pid
    # and once it runs again, commands go to it as before
    os.kill(stopped_watcher.pid, signal.SIGCONT)
    done = subprocess.run(
        [VAULTMEM, "--vault", str(vault), "search", "kelp", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=40,
    )
    assert done.returncode == 0 and "did not answer" not in done.stderr


def test_an_mcp_server_answers_beside_a_stopped_watcher(vault: Path, stopped_watcher: subprocess.Popen[bytes]) -> None:
    from tests.mcp.conftest import in_memory, structured

    os.environ["VAULTMEM_WATCHER_TIMEOUT"] = "1"
    try:
        docs: list[Any] = []

        async def body(client: Any) -> None:
            docs.append(await client.call_tool("memory_search", {"query": "kelp"}))

        in_memory(vault, "alice", body)
    finally:
        del os.environ["VAULTMEM_WATCHER_TIMEOUT"]
    found = structured(docs[0])
    assert [r["summary"]["title"] for r in found["results"]] == ["Kelp"]
    assert "did not answer" in docs[0].content[0].text and found["mode"] == "bm25"


@pytest.fixture
def threaded_watcher(vault: Path) -> Iterator[Any]:
    from vaultmem.cli.serve import command_runner
    from vaultmem.daemon.runner import Settings, Watcher

    Cli(vault).ok("note", "create", "--title", "Kelp", "--type", "fact", "--scope", "shared", "--body", "kelp forest")
    watcher = Watcher(vault, command_runner, Settings(rescan_s=60.0))
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        _wait(lambda: (ping(str(vault)) or {}).get("state") == "watching")
        yield watcher
    finally:
        watcher.request_stop()
        thread.join(timeout=30)


def _call(vault: Path, name: str, request: dict[str, Any]) -> tuple[Any, str]:
    message = {"op": "call", "use_case": name, "ghost": None, "root": str(vault), "request": request}
    return exchange(str(connect_path(str(vault))), message)


def test_a_wedged_worker_is_reported_and_requests_are_refused_at_once(
    vault: Path, threaded_watcher: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.daemon import requests as watcher_requests
    from vaultmem.services import reads

    gate = threading.Event()
    real_run = reads.run

    def wedged(app: Any, request: Any) -> Any:
        if type(request).__name__ == "QueryRequest":
            assert gate.wait(120)  # the worker is stuck here until the test lets it go
        return real_run(app, request)

    monkeypatch.setattr(reads, "run", wedged)
    monkeypatch.setattr(watcher_requests, "WORKER_STALL_S", 1.0)
    threading.Thread(target=_call, args=(vault, "query", {"query": "kelp"}), daemon=True).start()
    try:
        _wait(lambda: threaded_watcher.stalled() is not None, timeout=30)
        reply, why = _call(vault, "get", {"ref": "Kelp"})
        assert reply is not None and reply["error"]["code"] == "unresponsive", (reply, why)
        assert "no progress" in reply["error"]["message"]
    finally:
        gate.set()
    _wait(lambda: threaded_watcher.stalled() is None)
    reply, _ = _call(vault, "get", {"ref": "Kelp"})
    assert reply is not None and reply["result"]["note"]["title"] == "Kelp"


def test_quick_requests_are_served_before_queued_slow_ones(
    vault: Path, threaded_watcher: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.services import reads

    gate, running = threading.Event(), threading.Event()
    order: list[str] = []
    real_run = reads.run

    def recorded(app: Any, request: Any) -> Any:
        name = type(request).__name__
        if name == "QueryRequest" and not order:
            running.set()
            assert gate.wait(120)  # the first slow request holds the worker while others queue
        order.append(name)
        return real_run(app, request)

    monkeypatch.setattr(reads, "run", recorded)
    threads = [threading.Thread(target=_call, args=(vault, "query", {"query": f"kelp {i}"})) for i in range(4)]
    threads[0].start()
    assert running.wait(60)  # the first query holds the worker
    for t in threads[1:]:
        t.start()
    _wait(lambda: len(threaded_watcher.slow_jobs) == 3)
    search = threading.Thread(target=_call, args=(vault, "search", {"query": "kelp", "mode": "bm25"}))
    search.start()
    _wait(lambda: len(threaded_watcher.jobs) == 1)
    gate.set()
    for t in [*threads, search]:
        t.join(timeout=60)
    assert order[:2] == ["QueryRequest", "SearchRequest"], order  # after the running one only
    assert order.count("QueryRequest") == 4
