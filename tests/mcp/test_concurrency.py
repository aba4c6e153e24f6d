"""One owner of the indexes (acceptance 4): five MCP servers (separate stdio processes) and
CLI agents (`vaultmem note create` / `capture` + `search` processes) write and search at
once. No watcher runs beforehand: the first of them to need one starts it (autostart), the
others find it. Nothing is lost, nothing is locked, and every write is found by the search
issued right after it returns (read-your-writes)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcp.conftest import structured
from tests.mcp.test_transports import VAULTMEM, _env
from vaultmem.daemon.client import ping

pytestmark = pytest.mark.slow
CLIENTS, WRITES = 5, 20
AGENTS, AGENT_WRITES = 2, 10
LOCKED = "database is locked"


def _autostart_env(**extra: str) -> dict[str, str]:
    env = _env(**extra)
    del env["VAULTMEM_NO_AUTOSTART"]
    return env


def _p50(values: list[float]) -> str:
    values = sorted(values)
    return f"p50 {values[len(values) // 2] * 1000:.0f} ms, max {values[-1] * 1000:.0f} ms"


def test_five_servers_and_cli_agents_write_and_search_at_once(vault: Path, tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    assert ping(str(vault)) is None  # nobody watches yet
    problems: list[str] = []
    written: list[str] = []  # paths, from MCP clients and CLI agents alike
    latencies: dict[str, list[float]] = {"mcp write": [], "mcp search": [], "cli write": [], "cli search": []}
    stderr_logs: list[Path] = []

    async def one_client(n: int) -> None:
        ghost = ("alice", "bob")[n % 2]
        params = StdioServerParameters(
            command=VAULTMEM, args=["mcp", "--vault", str(vault)], env=_autostart_env(VAULTMEM_GHOST=ghost)
        )
        errlog = tmp_path / f"server-{n}.err"
        stderr_logs.append(errlog)
        with errlog.open("w") as err:
            async with Client(stdio_client(params, errlog=err), mode="legacy") as client:
                for i in range(WRITES):
                    word = f"kw{n}x{i}q"
                    t0 = time.monotonic()
                    saved = await client.call_tool("memory_save", {"content": f"Client {n} write {i} marker {word}"})
                    latencies["mcp write"].append(time.monotonic() - t0)
                    if saved.is_error:
                        problems.append(saved.content[0].text)
                        continue
                    doc = structured(saved)
                    written.append(doc["path"])
                    t0 = time.monotonic()
                    found = await client.call_tool("memory_search", {"query": word, "options": {"mode": "bm25"}})
                    latencies["mcp search"].append(time.monotonic() - t0)
                    got = [r["summary"]["id"] for r in structured(found)["results"]]
                    if doc["id"] not in got:
                        problems.append(f"{word}: written as {doc['id']}, search after it found {got}")

    def vm(*args: str, ghost: str) -> dict[str, Any]:
        argv = [VAULTMEM, *args, "--vault", str(vault), "--ghost", ghost, "--json"]
        res = subprocess.run(argv, env=_autostart_env(), capture_output=True, text=True, timeout=120)
        if res.returncode != 0 or res.stderr.strip():
            problems.append(f"{args[:2]}: exit {res.returncode}: {res.stderr.strip()[-300:]}")
        return dict(json.loads(res.stdout)) if res.stdout.strip() else {}

    def one_agent(n: int) -> None:
        ghost = ("bob", "alice")[n % 2]
        for i in range(AGENT_WRITES):
            word = f"ag{n}x{i}z"
            t0 = time.monotonic()
            if i % 2:
                doc = vm("capture", "--scope", "private", f"agent {n} capture {i} marker {word}", ghost=ghost)
            else:
                doc = vm(
                    "note", "create", "--title", f"Agent {n} note {i}", "--type", "fact", "--scope", "private",
                    f"--body=Agent {n} write {i} marker {word}", ghost=ghost,
                )  # fmt: skip
            latencies["cli write"].append(time.monotonic() - t0)
            if "path" not in doc:
                continue
            written.append(doc["path"])
            t0 = time.monotonic()
            found = vm("search", word, "--mode", "bm25", ghost=ghost)
            latencies["cli search"].append(time.monotonic() - t0)
            paths = [r["summary"]["path"] for r in found.get("results", [])]
            if doc["path"] not in paths:
                problems.append(f"{word}: written to {doc['path']}, search after it found {paths}")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for n in range(CLIENTS):
                tg.start_soon(one_client, n)

    agents = [threading.Thread(target=one_agent, args=(n,)) for n in range(AGENTS)]
    start = time.monotonic()
    try:
        for agent in agents:
            agent.start()
        anyio.run(main)
        for agent in agents:
            agent.join(timeout=300)
        elapsed = time.monotonic() - start
        reply = ping(str(vault)) or {}
    finally:
        subprocess.run([VAULTMEM, "watch", "--stop", "--vault", str(vault)], env=_env(), capture_output=True)
    figures = ", ".join(f"{name} {_p50(values)}" for name, values in latencies.items() if values)
    print(f"{CLIENTS}x{WRITES} MCP + {AGENTS}x{AGENT_WRITES} CLI writes in {elapsed:.1f} s; {figures}")
    assert problems == []
    total = CLIENTS * WRITES + AGENTS * AGENT_WRITES
    assert len(set(written)) == total
    assert all((vault / path).is_file() for path in written)
    # one watcher answered everything (the others that autostart raced to start left quietly)
    assert reply.get("served", 0) >= total
    logs = {p.name: p.read_text() for p in [*(vault / ".vaultmem").glob("*.log"), *stderr_logs]}
    assert "watcher.log" in logs
    # the watchers that lost the race to start left quietly: no error in the log
    assert " ERROR " not in logs["watcher.log"], logs["watcher.log"]
    for name, text in logs.items():
        assert LOCKED not in text, name
        assert "Traceback" not in text, (name, text[-2000:])
