"""The real processes: `vaultmem mcp` over stdio (initialize, list, call), and
`vaultmem mcp --http` with a bearer token, without one and with a wrong one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import Cli
from tests.mcp.conftest import error_of, structured

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
pytestmark = pytest.mark.slow


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    env.update(VAULTMEM_NO_AUTOSTART="1", VAULTMEM_CACHE_DIR=os.environ["VAULTMEM_CACHE_DIR"], **extra)
    return env


def test_stdio_session(vault: Path) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=VAULTMEM, args=["mcp", "--vault", str(vault)], env=_env(VAULTMEM_GHOST="alice")
    )
    timings: dict[str, float] = {}

    async def main() -> None:
        start = time.monotonic()
        async with Client(params, mode="legacy") as client:
            timings["initialize"] = time.monotonic() - start
            tools = (await client.list_tools()).tools
            assert len(tools) == 14
            saved = structured(await client.call_tool("memory_save", {"content": "stdio works over pipes"}))
            assert saved["path"].startswith("private/alice/")  # the ghost from VAULTMEM_GHOST
            found = structured(await client.call_tool("memory_search", {"query": "stdio pipes"}))
            assert found["results"][0]["summary"]["id"] == saved["id"]
            assert error_of(await client.call_tool("memory_get", {"id": "nothing-like-it"}))["code"] == "not_found"

    anyio.run(main)
    # printed, not asserted: a test beside other work must not fail on a clock (make bench
    # measures startup)
    print(f"stdio initialize: {timings['initialize']:.3f} s")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[Any], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else proc.returncode
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the HTTP server did not come up")


def _answers_health(port: int, proc: subprocess.Popen[Any], timeout: float) -> None:
    """The server at `port` is vaultmem's (`GET /health` answers JSON) while `proc` runs."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the server exited"
        try:
            got = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
            if "status" in got.json():
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.1)
    raise AssertionError("the HTTP server did not answer /health")


def serve_on_a_free_port(
    argv: Callable[[int], list[str]], env: dict[str, str], log: Path, timeout: float = 20.0
) -> tuple[int, subprocess.Popen[Any]]:
    """A server process on a port that was free a moment ago. On a busy machine another
    process may take the port between that check and the server's bind ("address already
    in use", exit 3): then it starts again on another port. Its stderr goes to `log` (a
    file, never a pipe a chatty server could fill)."""
    for _ in range(5):
        port = _free_port()
        with log.open("w") as err:
            proc = subprocess.Popen(argv(port), env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            _wait_port(port, proc, timeout)
            _answers_health(port, proc, timeout)  # this server, not whoever took the port
            return port, proc
        except AssertionError:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if "address already in use" not in log.read_text():
                raise AssertionError(log.read_text()) from None
    raise AssertionError("no free port in five tries")


def test_http_session_needs_a_token(vault: Path, cli: Cli) -> None:
    import httpx
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    alice = cli.ok("token", "add", "alice")
    bob = cli.ok("token", "add", "bob")
    assert alice["token"] != bob["token"]
    # beside the disposable .vaultmem/, never inside it; only hashes, owner-only
    stored = (vault / ".vaultmem-tokens.json").read_text()
    assert alice["token"] not in stored and "sha256:" in stored
    assert oct((vault / ".vaultmem-tokens.json").stat().st_mode & 0o777) == "0o600"
    assert not (vault / ".vaultmem" / "mcp_tokens.json").exists()
    assert cli("token", "add", "mallory").exit_code == 5

    port, proc = serve_on_a_free_port(
        lambda port: [VAULTMEM, "mcp", "--http", "--port", str(port), "--vault", str(vault)],
        _env(),
        vault.parent / "mcp-server.log",
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Accept": "application/json, text/event-stream"}
        assert httpx.post(url, json=init, headers=headers).status_code == 401
        wrong = {**headers, "Authorization": "Bearer vmt_not-a-token"}
        assert httpx.post(url, json=init, headers=wrong).status_code == 401
        # a foreign Origin is refused even with a good token (DNS rebinding)
        evil = {**headers, "Authorization": f"Bearer {alice['token']}", "Origin": "http://evil.example"}
        assert httpx.post(url, json=init, headers=evil).status_code in (403, 421)

        async def session(token: str) -> dict[str, Any]:
            import httpx2  # type: ignore[import-not-found]

            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                assert len((await client.list_tools()).tools) == 14
                return structured(await client.call_tool("memory_save", {"content": "http private fact"}))

        async def main() -> None:
            as_alice = await session(alice["token"])
            as_bob = await session(bob["token"])
            assert as_alice["path"].startswith("private/alice/")  # the ghost comes from the token
            assert as_bob["path"].startswith("private/bob/")

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_landed_injections_over_stdio_and_http_act_as_bob(vault: Path, cli: Cli, tmp_path: Path) -> None:
    """Issue 21's acceptance, over the real transports: each injection answers with bob's
    view or invalid_input; alice's folder is unchanged; no outside file's text anywhere."""
    import hashlib

    import httpx2  # type: ignore[import-not-found]
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    from tests.mcp.test_hostile_arguments import INJECTIONS

    outside = tmp_path / "outside.txt"
    outside.write_text("outside-canary-91\n")
    cli.ok("note", "create", "--title", "Zanzibar plan", "--type", "fact", "--scope", "private",
           "--body", "The zanzibar code is 4471.", ghost="alice")  # fmt: skip

    def alice_files() -> dict[str, str]:
        return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in (vault / "private/alice").rglob("*.md")}

    before = alice_files()
    calls = [
        *INJECTIONS,
        ("memory_note_update", {"note_id": "bob's fact", "append": "x", "add_tags": [f"--body-file={outside}"]}),
        ("memory_get", {"note_id_or_title": str(outside)}),
        ("memory_query", {"query": "zanzibar", "scope": "all", "memory_type": "--vault=/"}),
    ]

    async def attack(client: Any, seen: list[str]) -> None:
        for name, args in calls:
            result = await client.call_tool(name, args)
            seen.append(result.content[0].text + json.dumps(result.structured_content or {}))
            if result.is_error:
                code = json.loads(result.content[0].text)["error"]["code"]
                assert code in ("invalid_input", "not_found", "ambiguous"), (name, result.content[0].text)

    seen: list[str] = []
    params = StdioServerParameters(
        command=VAULTMEM, args=["mcp", "--vault", str(vault)], env=_env(VAULTMEM_GHOST="bob")
    )

    async def over_stdio() -> None:
        async with Client(params, mode="legacy") as client:
            await attack(client, seen)

    anyio.run(over_stdio)
    bob = cli.ok("token", "add", "bob")
    port, proc = serve_on_a_free_port(
        lambda port: [VAULTMEM, "mcp", "--http", "--port", str(port), "--vault", str(vault)],
        _env(),
        vault.parent / "mcp-server.log",
    )
    try:

        async def over_http() -> None:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bob['token']}"})
            url = f"http://127.0.0.1:{port}/mcp"
            async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                await attack(client, seen)

        anyio.run(over_http)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert len(seen) == 2 * len(calls)
    for text in seen:
        assert "4471" not in text and "outside-canary-91" not in text and "Zanzibar plan" not in text, text
    assert alice_files() == before
    assert (vault / "private/bob/bob's fact.md").is_file()  # memory_save wrote as bob, nowhere else


def test_stdio_answers_every_line_it_cannot_read(vault: Path, tmp_path: Path) -> None:
    """A client whose request the server cannot read gets an error for it instead of waiting
    for ever: not JSON at all (JSON-RPC's parse error, id null), valid JSON that is no
    message, and a string holding a lone UTF-16 surrogate (`\\ud800`, which Python's json
    reads and the SDK's parser refuses) both with the request's own id. The session goes on."""
    import queue
    import threading

    log = tmp_path / "stderr.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [VAULTMEM, "mcp", "--vault", str(vault)],
            env=_env(VAULTMEM_GHOST="alice"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
        )
    assert proc.stdin is not None and proc.stdout is not None
    replies: queue.Queue[dict[str, Any]] = queue.Queue()
    threading.Thread(target=lambda: [replies.put(json.loads(line)) for line in proc.stdout], daemon=True).start()

    def ask(line: str) -> dict[str, Any]:
        assert proc.stdin is not None
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        return replies.get(timeout=60)

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert "result" in ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        call = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"memory_save","arguments":{"content":"%s"}}}'
        unread = ask("this is not json {")
        assert unread["id"] is None and unread["error"]["code"] == -32700
        lone = ask(call % (2, "\\ud800 half a pair"))
        assert lone["id"] == 2 and lone["error"]["code"] == -32600 and "surrogate" in lone["error"]["message"]
        shapeless = ask('{"jsonrpc": "2.0", "id": "three", "params": 7}')
        assert shapeless["id"] == "three" and shapeless["error"]["code"] == -32600
        deep = ask("[" * 100_000 + "]" * 100_000)  # deeper than any parser's stack
        assert deep["id"] is None and deep["error"]["code"] == -32600
        # a response of the client's own that the server cannot read gets no answer (JSON-RPC
        # answers requests): the next reply is the next request's
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 9, "result": {"x": "\\ud800"}}\n')
        saved = ask(call % (4, "a whole pair \\ud83d\\ude00 is fine"))
        assert saved["id"] == 4 and saved["result"]["structuredContent"]["path"].startswith("private/alice/")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert proc.returncode == 0, log.read_text()  # the session ends cleanly when stdin does
    assert "Traceback" not in log.read_text()
