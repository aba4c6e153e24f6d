"""Issue 25, item 4, over MCP: the write tools refuse text with a detected secret
(invalid_input, its kind named, never the secret) and write nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.test_secrets_refused import AWS, GITHUB, files
from tests.mcp.conftest import error_of, structured


def test_mcp_tools_refuse_a_secret(vault: Path, run_mcp: Any) -> None:
    async def body(client: Any) -> None:
        err = error_of(await client.call_tool("memory_save", {"content": f"key {AWS}"}))
        assert err["code"] == "invalid_input" and "AWS Access Key" in err["message"] and AWS not in json.dumps(err)
        err = error_of(
            await client.call_tool(
                "memory_note_create",
                {"title": "Bot", "type": "note", "scope": "private", "body": f"token {GITHUB}"},
            )
        )
        assert err["code"] == "invalid_input" and "GitHub Token" in err["message"] and GITHUB not in json.dumps(err)
        ok = structured(await client.call_tool("memory_save", {"content": "Kites fly best at 20 km/h."}))
        assert ok["path"]

    before = files(vault)
    run_mcp(body)
    assert not any(AWS in t.decode() or GITHUB in t.decode() for t in files(vault).values())
    assert len(files(vault)) == len(before) + 1


def test_mcp_writes_are_journaled_with_the_hosts_name(vault: Path, run_mcp: Any) -> None:
    """Issue 25, item 1: an MCP write's journal line names its ghost (the transport's) and,
    as the model, the host's own name from the session's `initialize`."""
    from tests.conftest import journaled

    async def body(client: Any) -> None:
        structured(await client.call_tool("memory_save", {"content": "Kites fly best at 20 km/h."}))

    run_mcp(body)
    (entry,) = journaled(vault)
    assert entry.by == "alice" and entry.path.startswith("private/alice/") and entry.hash
    assert entry.model and entry.model.startswith("mcp")
