"""`vaultmem mcp --http`: streamable HTTP with a bearer token per ghost.

Every HTTP request must carry `Authorization: Bearer <token>` made by `vaultmem token add
GHOST` (services/tokens.py); without one, or with one vaultmem does not know, the answer is
401 before the MCP layer sees the request. The ghost a tool call acts as is read from the
token of the very request that carries the call, never from its arguments. Host and Origin
headers are checked by the SDK's DNS-rebinding protection: only the address the server
binds (127.0.0.1 unless told otherwise) and localhost are accepted.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from vaultmem.mcp.server import build_server
from vaultmem.services.tokens import ghost_for

Scope = dict[str, Any]


def bearer(headers: Any) -> str | None:
    """The token of an `Authorization: Bearer …` header (starlette Headers or ASGI pairs)."""
    if isinstance(headers, list):
        value = next((v.decode("latin-1") for k, v in headers if k.lower() == b"authorization"), None)
    else:
        value = headers.get("authorization")
    if not value:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class BearerGate:
    """ASGI middleware: 401 for an HTTP request without a known token."""

    def __init__(self, app: Any, root: Path) -> None:
        self.app = app
        self.root = root

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and ghost_for(self.root, bearer(scope.get("headers", []))) is None:
            body = json.dumps({"error": {"code": "unauthorized", "message": "a valid bearer token is required"}})
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="vaultmem"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
            return
        await self.app(scope, receive, send)


def http_app(root: Path, host: str, port: int, starting: subprocess.Popen[bytes] | None = None) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    def ghost_of(ctx: Any) -> str | None:
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        return ghost_for(root, bearer(headers)) if headers is not None else None

    hosts = {host, "127.0.0.1", "localhost", "[::1]"}
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:{port}" for h in hosts],
        allowed_origins=[f"http://{h}:{port}" for h in hosts],
    )
    server = build_server(root, ghost_of, starting)
    return BearerGate(server.streamable_http_app(host=host, transport_security=security), root)


def serve_http(root: Path, host: str, port: int, starting: subprocess.Popen[bytes] | None = None) -> None:
    import uvicorn

    uvicorn.run(http_app(root, host, port, starting), host=host, port=port, log_level="warning", lifespan="on")
