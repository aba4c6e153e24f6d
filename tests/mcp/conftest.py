"""MCP tests: the real server (vaultmem/mcp/server.py) through the SDK's own client, in
process, over a stdio subprocess, and over HTTP."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

CallTool = Callable[..., Awaitable[Any]]


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    text = result.content[0].text
    assert "Traceback" not in text
    return dict(json.loads(text)["error"])


def in_memory(vault: Path, ghost: str | None, body: Callable[[Any], Awaitable[None]]) -> None:
    """Run `body(client)` against an in-process server acting as `ghost`."""
    from mcp import Client

    from vaultmem.mcp.server import build_server

    async def main() -> None:
        async with Client(build_server(vault, lambda ctx: ghost)) as client:
            await body(client)

    anyio.run(main)


@pytest.fixture
def run_mcp(vault: Path) -> Callable[..., None]:
    def run(body: Callable[[Any], Awaitable[None]], ghost: str | None = "alice") -> None:
        in_memory(vault, ghost, body)

    return run
