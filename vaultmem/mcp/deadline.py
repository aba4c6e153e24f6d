"""A deadline for each HTTP request to arrive whole (`vaultmem mcp --http`).

uvicorn waits as long as a client likes for a request's headers and body: a client that
opens connections and sends a byte now and then ("slow loris") kept about 21,000 of them
open and shut every other client out for as long as it went on. Here a request must arrive
whole, headers and body, within REQUEST_S of the connection opening or of the answer
before it on the same connection; else the connection is closed, as Apache's
RequestReadTimeout and nginx's client_header_timeout do. So is one whose client has read
nothing of what it is sent for REQUEST_S while the server waits on it (nginx's
send_timeout). A connection idle between requests is uvicorn's keep-alive timeout's, and an
answer that streams (SSE) to a client that reads it is not timed: its request has arrived.

Imported by mcp/http.py only, inside `serve_http` (uvicorn is that command's)."""

from __future__ import annotations

import asyncio
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

# Generous for an MCP request (JSON of at most a few MB) on a slow link; short enough that
# holding connections open costs an attacker a steady stream of new ones.
REQUEST_S = 30.0

log = logging.getLogger("vaultmem.mcp")


class RequestDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request has not arrived whole
    within `deadline_s`, or whose client has read nothing for that long (h11 is uvicorn's
    own dependency; httptools, its faster parser, is there only when another package
    brought it)."""

    deadline_s = REQUEST_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._paused_at: float | None = None  # since when the client has read nothing we sent
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection has its own deadline

    def pause_writing(self) -> None:
        super().pause_writing()
        self._paused_at = self.loop.time()
        if self._deadline is None:  # e.g. an answer streaming long after its request
            self._arm()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._paused_at = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, after: float | None = None) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.deadline_s if after is None else after, self._late)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        # Writes paused: the client reads nothing of what it is sent (requests piped in by the
        # hundred and their answers left unread hold a connection as well as a slow request
        # does). IDLE: the request line or headers are still coming; SEND_BODY: the body is.
        if self._paused_at is not None:
            unread = self.loop.time() - self._paused_at
            if unread < self.deadline_s:  # a client reading slowly, for now: look again then
                self._arm(self.deadline_s - unread)
                return
            log.info("dropping a connection whose client read nothing for %.0f s", unread)
            self.transport.abort()  # close() would wait to hand over what it holds: for ever
        elif self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
            log.info("closing a connection whose request did not arrive within %.0f s", self.deadline_s)
            self.transport.close()
