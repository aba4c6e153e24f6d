"""Issue 21, items 2 and 4, against a real `vaultmem mcp --http` process: a session belongs
to the token that opened it, sessions are capped (in all and per token) and end when idle,
a revoked token is refused at once, a damaged token file refuses every request (401, and
the log says why), and many openings leave the server small."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.mcp.test_transports import VAULTMEM, _env, serve_on_a_free_port

pytestmark = pytest.mark.slow

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Server:
    def __init__(self, vault: Path, *flags: str) -> None:
        # A file, not a pipe: a server that logs a lot must never block on a full pipe.
        self.log = vault.parent / f"mcp-{len(list(vault.parent.glob('mcp-*.log')))}.log"
        self.port, self.proc = serve_on_a_free_port(
            lambda port: [VAULTMEM, "mcp", "--http", "--port", str(port), "--vault", str(vault), *flags],
            _env(),
            self.log,
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def post(self, token: str, body: dict[str, Any], session: str | None = None) -> Any:
        import httpx

        headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
        if session:
            headers["mcp-session-id"] = session
        return httpx.post(self.url, json=body, headers=headers, timeout=30)

    def open(self, token: str) -> Any:
        return self.post(token, INIT)

    def delete(self, token: str, session: str) -> Any:
        import httpx

        headers = {**ACCEPT, "Authorization": f"Bearer {token}", "mcp-session-id": session}
        return httpx.delete(self.url, headers=headers, timeout=30)

    def tools(self, token: str, session: str) -> Any:
        self.post(token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        return self.post(token, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def stop(self) -> str:
        """Stops the server; what it logged."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.log.read_text()


@pytest.fixture
def serve(vault: Path) -> Iterator[Any]:
    started: list[Server] = []

    def start(*flags: str) -> Server:
        server = Server(vault, *flags)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.proc.poll() is None:
            server.stop()


def test_a_session_belongs_to_the_token_that_opened_it(cli: Cli, serve: Any) -> None:
    alice, bob = cli.ok("token", "add", "alice")["token"], cli.ok("token", "add", "bob")["token"]
    server = serve()
    opened = server.open(alice)
    assert opened.status_code == 200
    session = opened.headers["mcp-session-id"]
    # bob, knowing alice's session id, can neither use nor end it
    assert server.tools(bob, session).status_code == 404
    assert server.delete(bob, session).status_code == 404
    assert server.tools(alice, session).status_code == 200  # still alice's, still open
    assert server.delete(alice, session).status_code == 200
    assert server.tools(alice, session).status_code == 404  # ended by its owner


def test_revoke_holds_at_once_and_the_others_keep_working(cli: Cli, serve: Any) -> None:
    made = [cli.ok("token", "add", ghost) for ghost in ("alice", "bob", "bob")]
    server = serve()
    sessions = [server.open(t["token"]).headers["mcp-session-id"] for t in made]
    revoked = cli.ok("token", "revoke", made[1]["id"])
    assert (revoked["id"], revoked["ghost"]) == (made[1]["id"], "bob")
    assert server.tools(made[1]["token"], sessions[1]).status_code == 401  # its open session too
    assert server.open(made[1]["token"]).status_code == 401
    for i in (0, 2):
        assert server.tools(made[i]["token"], sessions[i]).status_code == 200
        assert server.open(made[i]["token"]).status_code == 200
    listed = cli.ok("token", "list")["tokens"]
    assert {t["id"] for t in listed} == {made[0]["id"], made[2]["id"]}


def test_sessions_are_capped_per_token_and_in_all_and_end_when_idle(cli: Cli, serve: Any) -> None:
    tokens = [cli.ok("token", "add", g)["token"] for g in ("alice", "bob", "alice")]
    server = serve("--max-sessions", "5", "--sessions-per-token", "2", "--session-idle", "2")
    codes = [server.open(tokens[0]).status_code for _ in range(3)]
    assert codes == [200, 200, 503]  # the per-token cap
    assert [server.open(tokens[1]).status_code for _ in range(2)] == [200, 200]  # others unaffected
    assert server.open(tokens[2]).status_code == 200
    assert server.open(tokens[2]).status_code == 503  # five open in all
    time.sleep(4)  # idle longer than --session-idle: every session ended
    assert [server.open(tokens[0]).status_code for _ in range(2)] == [200, 200]


def test_a_damaged_token_file_refuses_every_request_and_says_why(vault: Path, cli: Cli, serve: Any) -> None:
    token = cli.ok("token", "add", "alice")["token"]
    server = serve()
    assert server.open(token).status_code == 200
    (vault / ".vaultmem-tokens.json").write_text('{"tokens": [{"ghost": "alice", "hash": "sha2')  # half written
    refused = server.open(token)
    assert refused.status_code == 401 and "token file" in refused.json()["error"]["message"]
    assert cli("token", "add", "bob").exit_code == 5  # never written over: a person fixes it
    assert "every request is refused until the token file is fixed" in server.stop()


def test_ten_thousand_session_openings_leave_the_server_small(cli: Cli, serve: Any) -> None:
    """Clients that open sessions and never close them: the caps hold the server's memory
    (measured as VmRSS of the real process)."""
    import httpx

    tokens = [cli.ok("token", "add", ("alice", "bob")[i % 2])["token"] for i in range(20)]
    server = serve()
    before = server.rss_mb()
    codes: dict[int, int] = {}
    with httpx.Client(timeout=30) as http:
        for i in range(10_000):
            headers = {**ACCEPT, "Authorization": f"Bearer {tokens[i % len(tokens)]}"}
            status = http.post(server.url, json=INIT, headers=headers).status_code
            codes[status] = codes.get(status, 0) + 1
    after = server.rss_mb()
    print(f"10,000 openings: {codes}; RSS {before:.0f} -> {after:.0f} MB")
    assert codes[200] == 1000 and codes[503] == 9000  # the cap in all (20 tokens x 100 would be 2,000)
    assert after < 150, after
    assert server.proc.poll() is None
    logged = server.stop()
    assert "refusing new sessions" in logged and logged.count("\n") < 50  # said, not 9,000 times
