"""Rows of the MCP server: `initialize` with and without a watcher, and memory_search over
the official SDK's stdio client."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from typing import Any

from tools.bench.model import BIN, GHOST, Row, VaultInfo, short
from tools.bench.report import at_target_size
from tools.bench.util import (
    NA,
    lat,
)
from tools.bench.warm import WarmRows


class McpRows(WarmRows):
    def mcp(self, v: VaultInfo) -> None:
        area = f"MCP server ({v.label}, backend {v.backend})"
        names = ["`initialize` with no watcher running", "`initialize` with a watcher running", "memory_search p50"]
        self.add(area, names[0], "< 2 s", lambda: self.mcp_cold(v))
        try:
            self.no_watcher(v)
            pid, _, _ = self.start_watcher(v)
            self.wait_model_ready(v)
        except NA as exc:
            for name, target in zip(names[1:], ["< 1 s", ""], strict=True):
                self.rows.append(Row(area, name, f"n/a ({short(exc)})", target))
            return
        try:
            self.add(area, names[1], "< 1 s", lambda: self.mcp_initialize(v))
            self.add(area, names[2], "", lambda: self.mcp_searches(v))
        finally:
            self.stop_watcher(v.path, pid)

    def wait_model_ready(self, v: VaultInfo, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(NA):
                if (self.vm("status", vault=v.path, ghost=False, timeout=60).json().get("watcher") or {}).get(
                    "model"
                ) != "loading":
                    return
            time.sleep(0.2)
        raise NA(f"the watcher's model was not ready within {timeout:.0f} s")

    def mcp_process(self, v: VaultInfo, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], float, float]:
        """`vaultmem mcp` spoken to in raw JSON-RPC: (process, spawn time, seconds until the
        `initialize` answer). No client library in the way of the figure."""
        env = {**env, "VAULTMEM_GHOST": GHOST}
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [str(BIN / "vaultmem"), "mcp", "--vault", str(v.path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "vaultmem-bench", "version": "0"},
        }
        self.rpc_send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        self.rpc_reply(proc, 1)
        return proc, t0, time.perf_counter() - t0

    def rpc_send(self, proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def rpc_reply(self, proc: subprocess.Popen[bytes], ident: int) -> dict[str, Any]:
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline()
            if not line:
                raise NA(f"`vaultmem mcp` exited ({proc.poll()}) before answering")
            message = json.loads(line)
            if message.get("id") == ident:
                if "error" in message:
                    raise NA(f"JSON-RPC error: {message['error']}")
                return dict(message["result"])

    def end_mcp(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def mcp_cold(self, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        """Spawn → `initialize` with no watcher (the server starts one in the background),
        then the first memory_search, which waits for that watcher."""
        reps = 3 if self.quick else 5
        inits: list[float] = []
        firsts: list[float] = []
        modes: list[str] = []
        for i in range(reps):
            self.no_watcher(v)
            proc, t0, init_s = self.mcp_process(v, self.autostart_env())
            try:
                inits.append(init_s)
                self.rpc_send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
                call = {"name": "memory_search", "arguments": {"query": v.queries[i % len(v.queries)]}}
                self.rpc_send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
                result = self.rpc_reply(proc, 2)
                firsts.append(time.perf_counter() - t0)
                if result.get("isError"):
                    raise NA(f"memory_search failed: {result.get('content')}")
                modes.append(str((result.get("structuredContent") or {}).get("mode")))
            finally:
                self.end_mcp(proc)
                self.stop_started_watcher(v)
        ok = at_target_size(v, max(inits) < 2.0)
        notes = (
            f"{reps} runs, raw JSON-RPC over stdio, timed from spawn; the server starts a watcher in the background "
            f"and answers meanwhile. First memory_search answered {lat(firsts)} after spawn, in mode "
            f"{', '.join(sorted(set(modes)))} (a hybrid search waits for the model the watcher loads)"
        )
        return lat(inits), "", notes, ok

    def mcp_initialize(self, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        reps = 3 if self.quick else 5
        inits = []
        for _ in range(reps):
            proc, _, init_s = self.mcp_process(v, self.env)
            self.end_mcp(proc)
            inits.append(init_s)
        notes = f"{reps} runs, raw JSON-RPC over stdio, timed from spawn (the `mcp` SDK import is most of it)"
        return lat(inits), "", notes, at_target_size(v, max(inits) < 1.0)

    def mcp_searches(self, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        """One stdio session of the official client: memory_search for each query, timed
        from call to result (after one uncounted warm-up call)."""
        import anyio
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=str(BIN / "vaultmem"),
            args=["mcp", "--vault", str(v.path)],
            env={**self.env, "VAULTMEM_GHOST": GHOST},
        )
        times: list[float] = []
        modes: list[str] = []
        returned: list[int] = []
        listed: dict[str, int] = {}

        async def session() -> None:
            with open(os.devnull, "w") as devnull:
                async with Client(stdio_client(params, errlog=devnull), mode="legacy") as client:
                    tools = (await client.list_tools()).tools
                    text = json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools])
                    listed.update(tools=len(tools), tokens=len(text) // 4)
                    for i, q in enumerate([v.queries[0], *v.queries]):
                        t0 = time.perf_counter()
                        result = await client.call_tool("memory_search", {"query": q})
                        took = time.perf_counter() - t0
                        if result.is_error:
                            raise NA(f"memory_search failed: {result.content[0]}")
                        if i:
                            doc = result.structured_content or {}
                            times.append(took)
                            modes.append(str(doc.get("mode")))
                            returned.append(int(doc.get("returned", 0)))

        anyio.run(session)
        notes = (
            f"{len(times)} queries in one stdio session (the official `mcp` client), watcher running and warm; "
            f"mode {', '.join(sorted(set(modes)))}; mean results {sum(returned) / len(returned):.1f}. "
            f"tools/list: {listed['tools']} tools, {listed['tokens']:,} tokens (characters / 4)"
        )
        return lat(times), "", notes, None
