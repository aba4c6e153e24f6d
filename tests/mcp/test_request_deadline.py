"""`vaultmem mcp --http` closes a connection whose request does not arrive whole in time
(vaultmem/mcp/deadline.py): a slow-loris client that sends headers or a body a little at a
time holds no connection open, while a whole request, a kept-alive connection's next one and
an answer that streams longer than the deadline are served as before.

uvicorn runs in this process, on a socket bound here (no port to race for), with the
protocol's deadline cut to DEADLINE_S; every wait below is bounded by WAIT_S, far longer."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

DEADLINE_S = 2.0
WAIT_S = 60.0


GONE = threading.Event()  # `/big`'s client was disconnected


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Reads the whole body; `/stream` answers in three parts over more than the deadline,
    `/big` with 16 MB (more than any socket buffers) and sets GONE once disconnected."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"] == "/big":
        await _big(receive, send)
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    parts = 3 if scope["path"] == "/stream" else 1
    for i in range(parts):
        if i:
            await asyncio.sleep(DEADLINE_S)
        await send({"type": "http.response.body", "body": b"part;", "more_body": i < parts - 1})


async def _big(receive: Any, send: Any) -> None:
    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        GONE.set()

    watcher = asyncio.ensure_future(watch())
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    for _ in range(256):
        await send({"type": "http.response.body", "body": b"x" * 65536, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
    watcher.cancel()


@pytest.fixture
def port() -> Iterator[int]:
    import uvicorn

    from vaultmem.mcp.deadline import RequestDeadline

    short = type("ShortDeadline", (RequestDeadline,), {"deadline_s": DEADLINE_S})
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, http=short, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    until = time.monotonic() + WAIT_S
    while not server.started and time.monotonic() < until:
        time.sleep(0.05)
    assert server.started
    yield sock.getsockname()[1]
    server.should_exit = True
    thread.join(WAIT_S)


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)


def _read_until_closed(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (WAIT_S at most)."""
    out = b""
    while chunk := conn.recv(65536):
        out += chunk
    return out


@pytest.mark.parametrize(
    "partial",
    [
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # headers never finished
        b'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"jsonrpc"',  # body never finished
        b"",  # a connection and nothing on it
    ],
)
def test_a_request_that_never_arrives_whole_loses_its_connection(port: int, partial: bytes) -> None:
    with _connect(port) as conn:
        conn.sendall(partial)
        assert _read_until_closed(conn) == b""  # closed, with no answer, long before WAIT_S


def test_a_slow_loris_dripping_bytes_is_closed_too(port: int) -> None:
    """A byte at a time, each well inside any per-read timeout: the deadline is the whole
    request's, so the drip does not keep it open."""
    with _connect(port) as conn:
        conn.settimeout(DEADLINE_S / 4)
        closed = False
        until = time.monotonic() + WAIT_S
        for byte in b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 10_000:
            if time.monotonic() > until:
                break
            try:
                conn.sendall(bytes([byte]))
                if conn.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except OSError:
                closed = True
                break
        assert closed


def test_whole_requests_are_served_and_a_stream_outlives_the_deadline(port: int) -> None:
    with _connect(port) as conn:
        for _ in range(2):  # a kept-alive connection's next request has its own deadline
            conn.sendall(b"GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = b""
            while not answer.endswith(b"\r\n0\r\n\r\n"):  # the chunked answer's last chunk
                chunk = conn.recv(65536)
                assert chunk, answer  # not closed before the whole answer
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200") and b"part;" in answer
    with _connect(port) as conn:
        conn.sendall(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = _read_until_closed(conn)
        assert answer.startswith(b"HTTP/1.1 200") and answer.count(b"part;") == 3


def test_a_client_gone_mid_body_leaves_no_traceback_in_the_log() -> None:
    import logging

    from starlette.requests import ClientDisconnect

    from vaultmem.mcp.http import _QuietDisconnects

    def record(error: BaseException) -> logging.LogRecord:
        return logging.LogRecord("mcp.server.streamable_http", logging.ERROR, __file__, 1, "Error handling POST request",
                                 None, (type(error), error, None))  # fmt: skip

    quiet = _QuietDisconnects()
    assert not quiet.filter(record(ClientDisconnect()))
    assert quiet.filter(record(ValueError("a real failure")))  # still logged


def test_a_client_that_reads_none_of_its_answer_loses_its_connection(port: int) -> None:
    """Requests answered into a connection whose client never reads: once the socket buffers
    are full the server waits on the client, and the deadline ends the wait."""
    GONE.clear()
    conn = socket.socket()
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    conn.settimeout(WAIT_S)
    with conn:
        conn.connect(("127.0.0.1", port))
        conn.sendall(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert GONE.wait(WAIT_S)  # closed by the server while this client read nothing
