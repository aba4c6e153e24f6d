"""Issue 27, item 3: `vaultmem mcp --http` as a team service behind a reverse proxy.

A real server process (`--allow-host`/`--allow-origin` naming the public address) and, in
front of it, a small real reverse proxy (uvicorn + httpx, in a thread) that forwards every
request with the public `Host`, as nginx's `proxy_set_header Host $host` or Caddy does;
clients send the `https://` Origin of the public site. Through it: the health endpoint,
token checks, an unknown public name refused, and ten agents of three ghosts (each its own
token and session, the official `mcp` client) writing and searching at once — nothing
lost, each ghost seeing its own private notes and the shared ones, never another's."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import Cli
from tests.mcp.conftest import error_of, structured
from tests.mcp.test_transports import VAULTMEM, _env, _free_port, serve_on_a_free_port

PUBLIC = "memory.example.test"
ORIGIN = f"https://{PUBLIC}"
GHOSTS = ("alice", "bob", "carol")
CLIENTS, WRITES = 10, 4
HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"proxy-connection"}


def proxy_app(upstream: str, public_host: str) -> Any:
    """An ASGI reverse proxy: the request as it came, with `Host: public_host`; the answer
    streamed back chunk by chunk (server-sent events included)."""
    import httpx

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k, v) for k, v in scope["headers"] if k not in HOP_BY_HOP and k != b"host"]
        headers += [(b"host", public_host.encode()), (b"x-forwarded-proto", b"https")]
        url = (
            upstream
            + scope["raw_path"].decode()
            + (f"?{scope['query_string'].decode()}" if scope["query_string"] else "")
        )
        async with httpx.AsyncClient(timeout=httpx.Timeout(120.0, read=None)) as client:
            request = client.build_request(scope["method"], url, headers=headers, content=body)
            response = await client.send(request, stream=True)
            try:
                kept = [(k, v) for k, v in response.headers.raw if k.lower() not in HOP_BY_HOP]
                await send({"type": "http.response.start", "status": response.status_code, "headers": kept})
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
            finally:
                await response.aclose()

    return app


class Proxy:
    def __init__(self, upstream_port: int, public_host: str) -> None:
        import uvicorn

        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            proxy_app(f"http://127.0.0.1:{upstream_port}", public_host),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the proxy did not start"
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@pytest.fixture
def service(vault: Path, cli: Cli, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The server (a watcher autostarted beside it), a proxy for the public name and one
    for a name the server was not told about."""
    cli.ok("ghost", "add", "carol")
    env = _env()
    del env["VAULTMEM_NO_AUTOSTART"]  # a team service runs with its watcher
    log = tmp_path / "server.log"
    port, proc = serve_on_a_free_port(
        lambda port: [VAULTMEM, "mcp", "--http", "--port", str(port), "--vault", str(vault),
                      "--allow-host", PUBLIC, "--allow-origin", ORIGIN],
        env, log, timeout=60,
    )  # fmt: skip
    proxies: list[Proxy] = []
    try:
        proxies += [Proxy(port, PUBLIC), Proxy(port, "other.example.test")]
        yield {"port": port, "public": proxies[0].url, "other": proxies[1].url, "proc": proc, "log": log}
    finally:
        for proxy in proxies:
            proxy.stop()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        subprocess.run(
            [VAULTMEM, "watch", "--stop", "--vault", str(vault)], env=_env(), capture_output=True, timeout=60
        )


def _health(base: str) -> tuple[int, dict[str, Any]]:
    import httpx

    got = httpx.get(f"{base}/health", headers={"Origin": ORIGIN}, timeout=30)
    return got.status_code, got.json()


def test_health_and_names_through_the_proxy(service: dict[str, Any], cli: Cli) -> None:
    import httpx

    token = cli.ok("token", "add", "alice")["token"]
    deadline = time.monotonic() + 120
    states = []
    while True:  # the watcher this server started comes up: "starting", then "ok"
        code, doc = _health(service["public"])
        assert code == 200, doc
        states.append(doc["status"])
        if doc["status"] == "ok" or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert doc == {"status": "ok", "watcher": "running", "model": "ready", "tokens": "ok", "vault": "ok"}, states
    init = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }  # fmt: skip
    accept = {"Accept": "application/json, text/event-stream", "Origin": ORIGIN}
    good = {**accept, "Authorization": f"Bearer {token}"}
    public = f"{service['public']}/mcp"
    assert httpx.post(public, json=init, headers=good, timeout=30).status_code == 200
    assert httpx.post(public, json=init, headers=accept, timeout=30).status_code == 401  # no token
    evil = {**good, "Origin": "https://evil.example"}
    assert httpx.post(public, json=init, headers=evil, timeout=30).status_code == 403
    # a public name the server was not given: refused, token or not, health too
    assert httpx.post(f"{service['other']}/mcp", json=init, headers=good, timeout=30).status_code == 421
    assert _health(service["other"])[0] == 421
    # straight to the server under a rebinding name
    direct = f"http://127.0.0.1:{service['port']}"
    rebound = {**good, "Host": f"evil.example:{service['port']}"}
    assert httpx.post(f"{direct}/mcp", json=init, headers=rebound, timeout=30).status_code == 421
    assert httpx.post(f"{direct}/mcp", json=init, headers=good, timeout=30).status_code == 200  # loopback still is


@pytest.mark.slow  # ~30 s
def test_ten_agents_of_three_ghosts_through_the_proxy(service: dict[str, Any], cli: Cli) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    tokens = [cli.ok("token", "add", GHOSTS[n % len(GHOSTS)])["token"] for n in range(CLIENTS)]
    url = f"{service['public']}/mcp"
    private: dict[str, dict[str, str]] = {g: {} for g in GHOSTS}  # ghost -> id -> marker
    shared: dict[str, str] = {}
    problems: list[str] = []
    written = {"count": 0}
    all_written = anyio.Event()

    async def agent(n: int) -> None:
        import httpx2  # type: ignore[import-not-found]

        ghost = GHOSTS[n % len(GHOSTS)]
        headers = {"Authorization": f"Bearer {tokens[n]}", "Origin": ORIGIN}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120.0, read=300.0))
        async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:

            async def search(query: str, limit: int = 10) -> dict[str, str]:
                """id -> path of what the search returns."""
                options = {"mode": "bm25", "max_results": limit}
                found = structured(await client.call_tool("memory_search", {"query": query, "options": options}))
                return {r["summary"]["id"]: r["summary"]["path"] for r in found["results"]}

            for i in range(WRITES + 1):
                marker = f"mk{n}x{i}q"
                scope = "shared" if i == WRITES else "private"
                saved = structured(
                    await client.call_tool("memory_save", {"content": f"teamwork note {marker}", "scope": scope})
                )
                assert saved["path"].startswith("shared/" if scope == "shared" else f"private/{ghost}/"), saved
                (shared if scope == "shared" else private[ghost])[saved["id"]] = marker
                if saved["id"] not in await search(marker):  # read-your-writes, under load
                    problems.append(f"{ghost}: {marker} written as {saved['id']}, not found right after")
            written["count"] += 1
            if written["count"] == CLIENTS:
                all_written.set()
            await all_written.wait()

            mine = set(private[ghost])
            others = {i: m for g in GHOSTS if g != ghost for i, m in private[g].items()}
            seen = await search("teamwork", limit=200)
            if set(seen) & set(others):
                problems.append(f"{ghost} sees notes of others: {sorted(set(seen) & set(others))}")
            foreign = [p for p in seen.values() if p.split("/")[0] in ("private", "diary", "inbox")]
            if any(p.split("/")[1] not in (ghost, "shared") for p in foreign):
                problems.append(f"{ghost} sees paths of others: {foreign}")
            for note_id in [*mine, *shared]:
                got = structured(await client.call_tool("memory_get", {"note_id_or_title": note_id}))
                if got["note"]["id"] != note_id:
                    problems.append(f"{ghost}: get {note_id} gave {got['note']['id']}")
            for note_id, marker in list(others.items())[:6]:
                if await search(marker):
                    problems.append(f"{ghost} finds another ghost's {marker}")
                failed = error_of(await client.call_tool("memory_get", {"note_id_or_title": note_id}))
                if failed["code"] != "not_found":
                    problems.append(f"{ghost} got another ghost's {note_id}: {failed}")

    async def main() -> None:
        with anyio.fail_after(280):
            async with anyio.create_task_group() as tg:
                for n in range(CLIENTS):
                    tg.start_soon(agent, n)

    anyio.run(main)
    assert problems == []
    ids = [*shared, *(i for g in GHOSTS for i in private[g])]
    assert len(ids) == len(set(ids)) == CLIENTS * (WRITES + 1)  # nothing lost, nothing merged
    assert [len(private[g]) for g in GHOSTS] == [WRITES * len(range(k, CLIENTS, len(GHOSTS))) for k in range(3)]
    on_disk = {p.parent.name for p in (cli.vault / "private").rglob("*.md") if "mk" in p.read_text()}
    assert on_disk == set(GHOSTS)
    log = service["log"].read_text()
    assert "Traceback" not in log and "database is locked" not in log, log[-3000:]
