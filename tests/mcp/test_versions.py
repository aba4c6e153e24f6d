"""Issue 21, item 3: every write tool takes `expect_version`, with the CLI's conflict
semantics, and without it an agent never replaces text a person added unseen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import error_of, structured

PERSON = "Also: the user is allergic to oak."


def _hand_edit(path: Path) -> None:
    """A person adds a line in their editor (no version bump, as Obsidian saves it)."""
    path.write_text(path.read_text() + PERSON + "\n")


def test_stale_expect_version_after_a_hand_edit_is_a_conflict(run_mcp: Any, vault: Path) -> None:
    async def body(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "The user likes Pinot Noir."}))
        _hand_edit(vault / saved["path"])
        stale = error_of(
            await client.call_tool(
                "memory_update", {"note_id": saved["id"], "content": "The user likes Merlot.", "expect_version": 1}
            )
        )
        assert stale["code"] == "conflict" and stale["current_version"] == 2
        assert "by hand" in stale["message"]
        assert PERSON in (vault / saved["path"]).read_text()
        # read it, then write with the version read: the agent has seen the person's line
        got = structured(await client.call_tool("memory_get", {"id": saved["id"]}))
        assert got["note"]["version"] == 2 and PERSON in got["body"]
        done = structured(
            await client.call_tool(
                "memory_update",
                {"note_id": saved["id"], "content": got["body"] + "And Merlot.", "expect_version": 2},
            )
        )
        assert done["version"] == 3
        assert PERSON in (vault / saved["path"]).read_text()

    run_mcp(body)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("memory_update", {"content": "Replaced."}),
        ("memory_note_update", {"body": "Replaced."}),
        ("memory_note_update", {"replace_section": "Notes", "body": "Replaced."}),
        ("memory_note_update", {"title": "Renamed"}),
        ("memory_note_update", {"set": {"source": "elsewhere"}}),
    ],
)
def test_without_expect_version_a_hand_edit_is_never_replaced(
    run_mcp: Any, vault: Path, tool: str, args: dict[str, Any]
) -> None:
    async def body(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "The user likes Pinot Noir."}))
        _hand_edit(vault / saved["path"])
        refused = error_of(await client.call_tool(tool, {"note_id": saved["id"], **args}))
        assert refused["code"] == "conflict" and refused["current_version"] == 2, refused
        assert PERSON in (vault / saved["path"]).read_text()

    run_mcp(body)


def test_without_expect_version_adding_to_a_hand_edited_note_keeps_both(run_mcp: Any, vault: Path) -> None:
    async def body(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "The user likes Pinot Noir."}))
        path = vault / saved["path"]
        _hand_edit(path)
        appended = structured(
            await client.call_tool("memory_note_update", {"note_id": saved["id"], "append": "Agent."})
        )
        assert appended["version"] == 3
        tagged = structured(
            await client.call_tool("memory_note_update", {"note_id": saved["id"], "add_tags": ["wine"]})
        )
        assert tagged["version"] == 4
        structured(await client.call_tool("memory_note_comment", {"note_id": saved["id"], "comment": "checked"}))
        text = path.read_text()
        assert PERSON in text and "Agent." in text and "wine" in text
        # the person's words are still there, under what the agent added without reading
        # them: a replace that states no version is still refused, one that read it is not
        refused = error_of(await client.call_tool("memory_update", {"note_id": saved["id"], "content": "Fresh."}))
        assert refused["code"] == "conflict" and refused["current_version"] == 5, refused
        assert PERSON in path.read_text()
        done = structured(
            await client.call_tool("memory_update", {"note_id": saved["id"], "content": "Fresh.", "expect_version": 5})
        )
        assert done["version"] == 6
        assert PERSON not in path.read_text()

    run_mcp(body)


@pytest.mark.parametrize("tool", ["memory_delete", "memory_note_delete", "memory_note_validate", "memory_note_comment"])
def test_every_write_tool_takes_expect_version(run_mcp: Any, vault: Path, tool: str) -> None:
    async def body(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "A fact to act on."}))
        extra = {"comment": "hi"} if tool == "memory_note_comment" else {}
        stale = error_of(await client.call_tool(tool, {"note_id": saved["id"], "expect_version": 7, **extra}))
        assert stale["code"] == "conflict" and stale["current_version"] == 1
        assert (vault / saved["path"]).exists()
        ok = structured(await client.call_tool(tool, {"note_id": saved["id"], "expect_version": 1, **extra}))
        assert ok["id"] == saved["id"]

    run_mcp(body)


def test_validation_is_recorded_as_the_sessions_ghost(run_mcp: Any, vault: Path) -> None:
    async def body(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "Shared fact.", "scope": "shared"}))
        forged = error_of(
            await client.call_tool("memory_note_validate", {"note_id": saved["id"], "validated_by": "alice/x"})
        )
        assert forged["code"] == "invalid_input"  # no such parameter: who validated is the transport's
        structured(await client.call_tool("memory_note_validate", {"note_id": saved["id"], "model": "m1"}))
        assert "last_validated_by: bob/m1" in (vault / saved["path"]).read_text()

    run_mcp(body, ghost="bob")
