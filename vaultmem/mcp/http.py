"""`vaultmem mcp --http`: streamable HTTP with a bearer token per ghost.

Every HTTP request must carry `Authorization: Bearer <token>` made by `vaultmem token add
GHOST` (services/tokens.py); without one, with one vaultmem does not know (or revoked), or
while the token file cannot be read, the answer is 401 before the MCP layer sees the
request. The gate hands the SDK the token as the request's authenticated user, and the
SDK binds each session to the token that opened it: another token asking for that session,
`DELETE` included, gets 404. A tool call acts as the ghost of that token, never as a value
in its arguments.

Sessions are capped — in all, and per token, so one client cannot crowd out the others —
and end after `idle_s` without a request (the SDK's idle timeout).

Host and Origin headers are checked before anything else, for every path (DNS rebinding):
the server's own address (the one it binds, 127.0.0.1, localhost, [::1], with its port;
`http://` origins on them) and the names an operator allows (`--allow-host`,
`--allow-origin`, [mcp] in vaultmem.toml) — a reverse proxy's public name and its
`https://` origin. Anything else gets 421 (Host) or 403 (Origin). The SDK's own check stays
on for /mcp with the same lists. `GET /health` (health.py) needs no token.
"""

from __future__ import annotations

import json
import logging
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

from vaultmem.config import CONFIG_NAME, McpSettings, parse_allowed_host, parse_allowed_origin
from vaultmem.errors import InvalidInput
from vaultmem.mcp.health import HealthEndpoint
from vaultmem.mcp.server import build_server, log_to_stderr
from vaultmem.services.tokens import TokenBook

Scope = dict[str, Any]
REFUSALS_LOGGED_EVERY_S = 60.0
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", "[::]", ""})
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
log = logging.getLogger("vaultmem.mcp")


@dataclass(frozen=True, slots=True)
class Allowed:
    """The Host and Origin header values the server answers, lowercased; a value `NAME:*`
    stands for NAME with any port. `given`: how many the operator added to the server's own."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]
    given: int = 0

    def host(self, value: str | None) -> bool:
        return value is not None and _matches(self.hosts, value)

    def origin(self, value: str | None) -> bool:
        return value is None or _matches(self.origins, value)  # no Origin: not a browser


def _matches(allowed: Sequence[str], value: str) -> bool:
    if value in allowed:
        return True
    for pattern in allowed:
        if pattern.endswith(":*") and value.startswith(pattern[:-1]):
            port = value[len(pattern) - 1 :]
            if port.isascii() and port.isdigit():
                return True
    return False


def own_and_given(host: str, port: int, hosts: Sequence[str] = (), origins: Sequence[str] = ()) -> Allowed:
    """The server's own addresses (the bound one unless it is every interface, and loopback)
    with its port, plus the hosts and origins given (already parsed)."""
    bound = host.lower()
    bound = f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound
    own = [h for h in dict.fromkeys([bound, *LOOPBACK]) if h not in WILDCARD_BINDS]
    return Allowed(
        tuple(dict.fromkeys([*(f"{h}:{port}" for h in own), *hosts])),
        tuple(dict.fromkeys([*(f"http://{h}:{port}" for h in own), *origins])),
        len(hosts) + len(origins),
    )


def allow_list(
    settings: McpSettings, host: str, port: int, hosts: Sequence[str] = (), origins: Sequence[str] = ()
) -> Allowed:
    """What `mcp --http` answers: its own address, [mcp] of vaultmem.toml and the flags
    (both lists apply). A value that is not a host or an origin is InvalidInput."""
    if settings.problems:
        raise InvalidInput(f"{CONFIG_NAME}: " + "; ".join(settings.problems))

    def parsed(flag: str, parse: Any, value: str) -> str:
        try:
            return str(parse(value))
        except InvalidInput as exc:
            raise InvalidInput(f"{flag}: {exc.message}") from None

    return own_and_given(
        host,
        port,
        [*settings.allowed_hosts, *(parsed("--allow-host", parse_allowed_host, v) for v in hosts)],
        [*settings.allowed_origins, *(parsed("--allow-origin", parse_allowed_origin, v) for v in origins)],
    )


def exposure_notice(host: str, port: int, allowed: Allowed) -> str | None:
    """What a server listening on every interface, with no name allowed, answers: said once
    at start (stderr), since requests by any other name are refused."""
    if host.lower() not in WILDCARD_BINDS or allowed.given:
        return None
    return (
        f"vaultmem mcp: listening on every interface ({host}, port {port}), but answering only requests whose "
        f"Host header is {', '.join(allowed.hosts)} (DNS rebinding); others get 421. Allow the names clients "
        "use with --allow-host NAME[:PORT] (and --allow-origin URL for browsers), or [mcp] allowed_hosts in "
        f"{CONFIG_NAME}.\n"
    )


class HostGate:
    """ASGI middleware: 421 for a Host, 403 for an Origin the server does not answer, on
    every path, before the token is even looked at. Passed on lowercased, so the SDK's own
    check (exact strings) agrees. Refusals are logged at most once a minute."""

    def __init__(self, app: Any, allowed: Allowed) -> None:
        self.app = app
        self.allowed = allowed
        self._refused = 0
        self._said_at = -REFUSALS_LOGGED_EVERY_S

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = [(k, v.lower()) if k.lower() in (b"host", b"origin") else (k, v) for k, v in scope["headers"]]
        found = {k.lower(): v.decode("latin-1") for k, v in headers if k.lower() in (b"host", b"origin")}
        if not self.allowed.host(found.get(b"host")):
            await self._refuse(send, 421, "Host", "the Host header names no address this server answers for")
            return
        if not self.allowed.origin(found.get(b"origin")):
            await self._refuse(send, 403, "Origin", "the Origin header is not one this server answers")
            return
        await self.app({**scope, "headers": headers}, receive, send)

    async def _refuse(self, send: Any, status: int, header: str, message: str) -> None:
        self._refused += 1
        now = time.monotonic()
        if now - self._said_at >= REFUSALS_LOGGED_EVERY_S:
            log.warning(
                "refused a request for its %s header (--allow-host, --allow-origin); %d refused so far",
                header,
                self._refused,
            )
            self._said_at = now
        body = json.dumps({"error": {"code": "forbidden", "message": message}}).encode()
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": body})


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


class _QuietDisconnects(logging.Filter):
    """Drops the SDK's traceback for a client gone before its request's body arrived (a
    closed laptop, a killed agent, a connection past deadline.py's deadline): nothing
    failed on this side, and a client disconnecting in a loop would flood the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        from starlette.requests import ClientDisconnect

        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, ClientDisconnect)


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
    allowed: Allowed | None = None,
) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    limits = limits or SessionLimits()
    allowed = allowed or own_and_given(host, port)
    book = book or TokenBook(root)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(allowed.hosts),
        allowed_origins=list(allowed.origins),
    )
    server = build_server(root, ghost_of, starting)
    sessions = Sessions(
        app=server,
        security_settings=security,
        session_idle_timeout=limits.idle_s,
        max_sessions=limits.max_sessions,
        per_token=limits.per_token,
    )
    health = HealthEndpoint(root, starting, book)
    routes = [
        Route("/health", endpoint=health.answer, methods=["GET"]),
        Route("/mcp", endpoint=BearerGate(StreamableHTTPASGIApp(sessions), book)),
    ]
    return HostGate(Starlette(routes=routes, lifespan=lambda _: sessions.run()), allowed)


def serve_http(
    root: Path,
    host: str,
    port: int,
    starting: subprocess.Popen[bytes] | None = None,
    limits: SessionLimits | None = None,
    allowed: Allowed | None = None,
) -> None:
    import sys

    import uvicorn

    from vaultmem.mcp.deadline import RequestDeadline

    log_to_stderr()
    logging.getLogger("mcp.server.streamable_http_manager").addFilter(_QuietRefusals())
    logging.getLogger("mcp.server.streamable_http").addFilter(_QuietDisconnects())
    allowed = allowed or own_and_given(host, port)
    notice = exposure_notice(host, port, allowed)
    if notice:
        sys.stderr.write(notice)
    book = TokenBook(root)
    try:
        uvicorn.run(
            http_app(root, host, port, starting, limits, book, allowed),
            host=host.strip("[]"),
            port=port,
            log_level="warning",
            lifespan="on",
            http=RequestDeadline,
        )
    finally:
        book.flush()
