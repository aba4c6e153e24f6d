"""`vaultmem mcp --http`: streamable HTTP with a bearer token per ghost.

Every HTTP request must carry `Authorization: Bearer <token>` made by `vaultmem token add
GHOST` (services/tokens.py); without one, with one vaultmem does not know (or revoked), or
while the token file cannot be read, the answer is 401 before the MCP layer sees the
request. The gate hands the SDK the token as the request's authenticated user, and the
SDK binds each session to the token that opened it: another token asking for that session,
`DELETE` included, gets 404. A tool call acts as the ghost of that token, never as a value
in its arguments.

Sessions are capped — in all, and per token, so one client cannot crowd out the others —
and end after `idle_s` without a request (the SDK's idle timeout). Host and Origin headers
are checked by the SDK's DNS-rebinding protection: only the address the server binds
(127.0.0.1 unless told otherwise) and localhost are accepted.
"""

from __future__ import annotations

import json
import logging
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

from vaultmem.errors import InvalidInput
from vaultmem.mcp.server import build_server, log_to_stderr
from vaultmem.services.tokens import TokenBook

Scope = dict[str, Any]
REFUSALS_LOGGED_EVERY_S = 60.0
log = logging.getLogger("vaultmem.mcp")


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """Defaults stated in the README (`vaultmem mcp --help`)."""

    max_sessions: int = 1000
    per_token: int = 100
    idle_s: float = 30 * 60


def bearer(headers: Any) -> str | None:
    """The token of an `Authorization: Bearer …` header (ASGI header pairs)."""
    value = next((v.decode("latin-1") for k, v in headers if k.lower() == b"authorization"), None)
    if not value:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class BearerGate:
    """ASGI middleware: 401 for an HTTP request without a token the book knows; otherwise
    the token, as the SDK's authenticated user, travels with the request."""

    def __init__(self, app: Any, book: TokenBook) -> None:
        self.app = app
        self.book = book

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        entry = self.book.identify(bearer(scope.get("headers", [])))
        if entry is None:
            await _unauthorized(send, self.book.damaged)
            return
        # client_id and subject: what the SDK compares to bind a session to its token.
        scope["user"] = AuthenticatedUser(
            AccessToken(token=entry.id, client_id=entry.id, scopes=[], subject=entry.ghost)
        )
        await self.app(scope, receive, send)


async def _unauthorized(send: Any, damaged: str | None) -> None:
    message = "the server's token file cannot be read; see its log" if damaged else "a valid bearer token is required"
    body = json.dumps({"error": {"code": "unauthorized", "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="vaultmem"')]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Sessions(StreamableHTTPSessionManager):
    """The SDK's session manager with a cap per token besides its cap in all. A refusal is
    logged at most once a minute (the SDK would log each one: a client opening sessions in
    a loop would flood the log)."""

    def __init__(self, *args: Any, per_token: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.per_token = per_token
        self._refused = 0
        self._said_at = -REFUSALS_LOGGED_EVERY_S

    def _admit_session(self, requestor: Any) -> Any:
        held = sum(1 for owner in self._session_owners.values() if owner == requestor)
        if requestor is not None and held >= self.per_token:
            return self._refuse(f"token {requestor.get('client_id')} holds {held} sessions (--sessions-per-token)")
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            return self._refuse(f"{len(self._server_instances)} sessions are open (--max-sessions)")
        return super()._admit_session(requestor)

    def _refuse(self, why: str) -> None:
        """None: the SDK answers 503; room frees as sessions end or expire."""
        self._refused += 1
        now = time.monotonic()
        if now - self._said_at >= REFUSALS_LOGGED_EVERY_S:
            log.warning("refusing new sessions: %s; %d refused so far", why, self._refused)
            self._said_at = now
        return None


class _QuietRefusals(logging.Filter):
    """Drops the SDK's line per refused session (Sessions logs them, rate-limited)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Refusing to open a new session")


def ghost_of(ctx: Any) -> str | None:
    """The ghost of the token this request carries (the gate let nothing else through)."""
    request = getattr(ctx, "request", None)
    user = request.scope.get("user") if request is not None else None
    if not isinstance(user, AuthenticatedUser) or not user.access_token.subject:
        raise InvalidInput("this request carries no authenticated ghost")
    return user.access_token.subject


def http_app(
    root: Path,
    host: str,
    port: int,
    starting: subprocess.Popen[bytes] | None = None,
    limits: SessionLimits | None = None,
    book: TokenBook | None = None,
) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    limits = limits or SessionLimits()
    hosts = {host, "127.0.0.1", "localhost", "[::1]"}
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:{port}" for h in hosts],
        allowed_origins=[f"http://{h}:{port}" for h in hosts],
    )
    server = build_server(root, ghost_of, starting)
    sessions = Sessions(
        app=server,
        security_settings=security,
        session_idle_timeout=limits.idle_s,
        max_sessions=limits.max_sessions,
        per_token=limits.per_token,
    )
    app = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(sessions))], lifespan=lambda _: sessions.run())
    return BearerGate(app, book or TokenBook(root))


def serve_http(
    root: Path,
    host: str,
    port: int,
    starting: subprocess.Popen[bytes] | None = None,
    limits: SessionLimits | None = None,
) -> None:
    import uvicorn

    log_to_stderr()
    logging.getLogger("mcp.server.streamable_http_manager").addFilter(_QuietRefusals())
    book = TokenBook(root)
    try:
        uvicorn.run(
            http_app(root, host, port, starting, limits, book), host=host, port=port, log_level="warning", lifespan="on"
        )
    finally:
        book.flush()
