"""Rows of `vaultmem mcp --http` as a team service: 50 MCP clients at once (the official
SDK's streamable HTTP client), each with its own session and bearer token, ghosts alice,
bob and carol, searching and saving; latencies, throughput, and every written id read back.

The load runs on a copy of the indexed vault (its index included), so the writes never
reach the working copy other rows search. The watcher runs and is warm first, as on a
server that has been up for a while; the clients run in this process, on the same cores
as the server and the watcher."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field, replace
from typing import Any

from tools.bench.mcp import McpRows
from tools.bench.model import BIN, Row, VaultInfo, short
from tools.bench.util import NA, ms, pct, proc_cpu_seconds, rate

CLIENTS = 50
GHOSTS = ("alice", "bob", "carol")


@dataclass(slots=True)
class Load:
    searches: list[float] = field(default_factory=list)
    writes: list[float] = field(default_factory=list)
    written: dict[str, tuple[int, str]] = field(default_factory=dict)  # id -> (client, marker)
    failed: list[str] = field(default_factory=list)  # calls that returned an error
    lost: list[str] = field(default_factory=list)  # written ids not read back as written
    seconds: float = 0.0
    modes: set[str] = field(default_factory=set)
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds of each process over the load


def cpu_now(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of the server and the watcher, and of the clients (this process)."""
    out = {name: proc_cpu_seconds(pid) for name, pid in pids.items()}
    out["clients"] = time.process_time()
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def p50_p99(samples: list[float]) -> str:
    return f"p50 {ms(pct(samples, 50))} · p99 {ms(pct(samples, 99))}"


class McpHttpRows(McpRows):
    def mcp_http(self, v: VaultInfo) -> None:
        area = f"MCP server over HTTP, {CLIENTS} agents ({v.label}, backend {v.backend})"
        names = ["memory_search under load", "memory_save under load", "throughput", "lost writes"]
        try:
            copy = self.http_vault(v)
        except NA as exc:
            for name in names:
                self.rows.append(Row(area, name, f"n/a ({short(exc)})"))
            return
        load: dict[str, Load | NA] = {}

        def measured() -> Load:
            if not load:
                try:
                    load["run"] = self.http_load(copy)
                except NA as exc:
                    load["run"] = exc
            result = load["run"]
            if isinstance(result, NA):
                raise result
            return result

        def searches() -> tuple[str, str, str, bool | None]:
            r = measured()
            notes = (
                f"{len(r.searches)} memory_search calls (Cranfield queries, mode {', '.join(sorted(r.modes))}), "
                f"each timed from call to result, while the other clients search and write"
            )
            return p50_p99(r.searches), "", notes, None

        def writes() -> tuple[str, str, str, bool | None]:
            r = measured()
            notes = (
                f"{len(r.writes)} memory_save calls (private and shared notes), each returning once the watcher "
                "has indexed the note (a search right after finds it)"
            )
            return p50_p99(r.writes), "", notes, None

        def throughput() -> tuple[str, str, str, bool | None]:
            r = measured()
            calls = len(r.searches) + len(r.writes)
            spent = ", ".join(f"{name} {sec:.0f} s" for name, sec in r.cpu.items())
            notes = (
                f"{calls} calls ({len(r.searches)} searches, {len(r.writes)} saves) by {CLIENTS} clients in "
                f"{r.seconds:.1f} s, sessions already open; the clients, the server and the watcher share the "
                f"machine's cores (CPU time over the load: {spent})"
            )
            return rate(calls, r.seconds, "calls"), "", notes, None

        def lost() -> tuple[str, str, str, bool | None]:
            r = measured()
            notes = (
                f"every id memory_save returned ({len(r.written)}) read back by its writer with memory_get after "
                f"the load, its text checked; failed calls: {len(r.failed)}"
                + (f" ({'; '.join(r.failed[:3])})" if r.failed else "")
                + (f"; not read back: {', '.join(r.lost[:5])}" if r.lost else "")
            )
            return f"{len(r.lost)} of {len(r.written)}", "", notes, not r.lost and not r.failed

        try:
            self.add(area, names[0], "", searches)
            self.add(area, names[1], "", writes)
            self.add(area, names[2], "", throughput)
            self.add(area, names[3], "0", lost)
        finally:
            self.stop_stray_watcher(copy.path)
            shutil.rmtree(copy.path, ignore_errors=True)

    def http_vault(self, v: VaultInfo) -> VaultInfo:
        """A copy of the indexed vault, index included, with a token per client."""
        from vaultmem.services.tokens import add_token

        self.require("mcp")
        if not v.indexed:
            raise NA("index failed")
        self.stop_stray_watcher(v.path)
        dst = v.path.with_name(v.path.name + "-http")
        self.stop_stray_watcher(dst)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(v.path, dst, symlinks=True)
        for stale in ("watcher.json", "watcher.sock", "watcher.pid"):
            with contextlib.suppress(FileNotFoundError):
                (dst / ".vaultmem" / stale).unlink()
        copy = replace(v, path=dst)
        if not self.index_fresh(dst):
            self.log(f"the copy {dst} is not fresh: indexing it")
            if not self.vm("index", vault=dst, ghost=False, timeout=self.args.index_timeout).ok:
                raise NA("the vault's copy could not be indexed")
        tokens = [add_token(dst, GHOSTS[n % len(GHOSTS)]).token for n in range(CLIENTS)]
        (dst / ".bench-tokens.json").write_text(json.dumps(tokens), encoding="utf-8")
        return copy

    def http_load(self, v: VaultInfo) -> Load:
        import httpx

        tokens = json.loads((v.path / ".bench-tokens.json").read_text(encoding="utf-8"))
        pid, _, _ = self.start_watcher(v)
        port = _free_port()
        log = self.work / "mcp-http-server.log"
        with log.open("w") as err:
            server = subprocess.Popen(
                [str(BIN / "vaultmem"), "mcp", "--http", "--port", str(port), "--vault", str(v.path)],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        try:
            deadline = time.monotonic() + 120
            health: dict[str, Any] = {}
            while health.get("status") != "ok":
                if server.poll() is not None or time.monotonic() > deadline:
                    raise NA(f"the server did not come up (health {health or 'unanswered'}; see {log})")
                with contextlib.suppress(httpx.HTTPError, ValueError):
                    health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).json()
                time.sleep(0.2)
            return self.http_clients(v, f"http://127.0.0.1:{port}/mcp", tokens, {"server": server.pid, "watcher": pid})
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            self.stop_watcher(v.path, pid)

    def http_clients(self, v: VaultInfo, url: str, tokens: list[str], pids: dict[str, int]) -> Load:
        """The clients: sessions opened first; then each client's searches and saves
        interleaved, all clients at once; then each reads back what it saved."""
        import anyio
        import httpx2  # the SDK's HTTP client
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        searches, writes = (4, 1) if self.quick else (8, 2)
        load = Load()
        opened, finished = anyio.Event(), anyio.Event()
        counts = {"opened": 0, "finished": 0}
        started: list[float] = []
        before: dict[str, float] = {}

        async def arrive(key: str, event: anyio.Event) -> None:
            counts[key] += 1
            if counts[key] == len(tokens):
                event.set()
            await event.wait()

        async def agent(n: int) -> None:
            http = httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {tokens[n]}"}, timeout=httpx2.Timeout(300.0, read=600.0)
            )
            async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                await arrive("opened", opened)
                if not started:
                    started.append(time.perf_counter())
                    before.update(cpu_now(pids))
                plan = (["search"] * (searches // writes) + ["save"]) * writes
                plan = plan[n % len(plan) :] + plan[: n % len(plan)]  # the clients' saves not in lockstep
                for i, op in enumerate(plan):
                    t0 = time.perf_counter()
                    if op == "search":
                        query = v.queries[(n * len(plan) + i) % len(v.queries)]
                        result = await client.call_tool("memory_search", {"query": query})
                        load.searches.append(time.perf_counter() - t0)
                    else:
                        marker = f"bench agent {n} save {i} mark{n}x{i}q"
                        scope = "shared" if (n + i) % 4 == 0 else "private"
                        result = await client.call_tool("memory_save", {"content": marker, "scope": scope})
                        load.writes.append(time.perf_counter() - t0)
                    if result.is_error:
                        load.failed.append(f"{op}: {str(getattr(result.content[0], 'text', ''))[:120]}")
                        continue
                    doc = result.structured_content or {}
                    if op == "search":
                        load.modes.add(str(doc.get("mode")))
                    else:
                        load.written[str(doc.get("id"))] = (n, marker)
                await arrive("finished", finished)
                if not load.cpu:
                    load.seconds = time.perf_counter() - started[0]
                    load.cpu = {k: t - before[k] for k, t in cpu_now(pids).items()}
                for note_id, (writer, marker) in list(load.written.items()):
                    if writer != n:
                        continue
                    got = await client.call_tool("memory_get", {"note_id_or_title": note_id})
                    doc = got.structured_content or {}
                    if (
                        got.is_error
                        or (doc.get("note") or {}).get("id") != note_id
                        or marker not in doc.get("body", "")
                    ):
                        load.lost.append(note_id)

        async def main() -> None:
            async with anyio.create_task_group() as tg:
                for n in range(len(tokens)):
                    tg.start_soon(agent, n)

        try:
            anyio.run(main)
        except Exception as exc:  # a client that failed: the figure is n/a, with why
            first = exc.exceptions[0] if isinstance(exc, ExceptionGroup) else exc
            raise NA(f"a client failed: {type(first).__name__}: {short(first)}") from None
        if not load.searches or not load.writes:
            raise NA("no call completed")
        return load
