"""Bob over MCP never learns anything of alice's private notes, whatever tool he calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.mcp.conftest import error_of, in_memory, structured

SECRET = "zanzibar"


def test_bob_never_sees_alice_private_notes(vault: Path) -> None:
    saved: dict[str, Any] = {}

    async def alice(client: Any) -> None:
        doc = structured(await client.call_tool("memory_save", {"content": f"My {SECRET} password hint is blue"}))
        saved.update(doc)
        diary = structured(
            await client.call_tool(
                "memory_note_create",
                {"title": f"{SECRET} diary", "type": "episode", "scope": "diary", "body": f"{SECRET} trip"},
            )
        )
        saved["diary"] = diary
        found = structured(await client.call_tool("memory_search", {"query": SECRET}))
        assert found["returned"] >= 1  # alice herself finds them

    in_memory(vault, "alice", alice)
    seen: list[str] = []

    async def bob(client: Any) -> None:
        calls = [
            ("memory_search", {"query": SECRET}),
            ("memory_search", {"query": SECRET, "scope": "private_only"}),
            ("memory_search", {"query": f"{SECRET} password hint blue", "options": {"mode": "bm25"}}),
            ("memory_query", {"query": SECRET}),
            ("memory_query", {"query": SECRET, "scope": "all", "min_relevance": 0}),
            ("memory_get", {"note_id_or_title": saved["id"]}),
            ("memory_get", {"note_id_or_title": saved["path"]}),
            ("memory_get", {"note_id_or_title": f"{SECRET} diary"}),
            ("memory_update", {"note_id": saved["id"], "content": "overwritten"}),
            ("memory_delete", {"note_id": saved["id"]}),
            ("memory_note_comment", {"note_id": saved["diary"]["id"], "comment": "hi"}),
            ("memory_note_validate", {"note_id": saved["diary"]["id"]}),
        ]
        for name, args in calls:
            result = await client.call_tool(name, args)
            text = result.content[0].text + json.dumps(result.structured_content or {}, ensure_ascii=False)
            for value in args.values():  # what bob sent may be echoed back to him; nothing else
                if isinstance(value, str):
                    text = text.replace(value, "")
            seen.append(text)
            if name in ("memory_search", "memory_query"):
                doc = structured(result)
                assert doc.get("results", doc.get("matches")) == []
            else:
                err = error_of(result)
                assert err["code"] == "not_found", (name, err)
        # asking for alice's note reads exactly like asking for one that never existed
        absent = error_of(await client.call_tool("memory_get", {"note_id_or_title": "01ZZZZZZZZZZZZZZZZZZZZZZZZ"}))
        hidden = error_of(await client.call_tool("memory_get", {"note_id_or_title": saved["id"]}))
        assert hidden["message"].replace(saved["id"], "X") == absent["message"].replace(
            "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "X"
        )

    in_memory(vault, "bob", bob)
    for text in seen:
        for word in (SECRET, "blue", "trip", saved["id"], saved["diary"]["id"]):
            assert word not in text, (word, text)
    # alice's notes are untouched
    assert "password hint" in (vault / saved["path"]).read_text()
