"""Every tool through an in-memory client session: structured content equal to the CLI's
`--json` document, aliases, unknown parameters, errors with the CLI's codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import Cli
from tests.mcp.conftest import error_of, structured
from vaultmem.mcp.tools import TOOLS


def _tokens(tools: list[Any]) -> int:
    text = json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools])
    return len(text) // 4


def test_tools_list_is_small_and_annotated(run_mcp: Any) -> None:
    async def body(client: Any) -> None:
        listed = (await client.list_tools()).tools
        names = {t.name for t in listed}
        assert names == {t.name for t in TOOLS}
        assert {
            "memory_search", "memory_get", "memory_capture", "reference_search", "memory_query", "memory_write",
            "memory_note_create", "memory_note_update", "memory_note_validate", "memory_note_comment",
            "memory_note_delete", "memory_save", "memory_update", "memory_delete",
        } <= names  # fmt: skip
        assert _tokens(listed) < 2500
        by = {t.name: t for t in listed}
        for name in ("memory_search", "memory_get", "reference_search", "memory_query"):
            assert by[name].annotations.read_only_hint is True
        for name in ("memory_delete", "memory_note_delete"):
            assert by[name].annotations.destructive_hint is True
        assert by["memory_save"].annotations.read_only_hint is False
        assert by["memory_search"].output_schema["required"] == [
            "query", "mode", "results", "returned", "tokens_used", "search_time_ms",
        ]  # fmt: skip
        scope = by["memory_search"].input_schema["properties"]["scope"]["enum"]
        assert scope == ["all", "shared_only", "private_only", "projects_only", "diary_only", "inbox_only"]

    run_mcp(body)


def test_save_search_update_delete_round_trip(run_mcp: Any, cli: Cli) -> None:
    async def body(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "The user likes chocolates"}))
        assert set(saved) >= {"id", "path", "version"} and saved["path"].startswith("private/alice/")
        note_id = saved["id"]
        found = structured(await client.call_tool("memory_search", {"q": "chocolates", "top_k": 3}))
        assert found["results"][0]["summary"]["id"] == note_id
        # the same search from the CLI gives the same document (timings aside)
        cli_doc = cli.ok("search", "chocolates", "--limit", "3", ghost="alice")
        for key in ("query", "mode", "returned"):
            assert found[key] == cli_doc[key]
        assert [r["summary"]["id"] for r in found["results"]] == [r["summary"]["id"] for r in cli_doc["results"]]
        updated = structured(
            await client.call_tool("memory_update", {"note_id": note_id, "content": "The user likes vanilla"})
        )
        assert updated["id"] == note_id and updated["version"] == 2
        got = structured(await client.call_tool("memory_get", {"id": note_id}))
        assert "vanilla" in got["body"] and set(got) >= {"note", "body", "tags", "links", "comments"}
        assert got == cli.ok("get", note_id, ghost="alice")
        gone = structured(await client.call_tool("memory_delete", {"note_id": note_id}))
        assert gone["id"] == note_id and gone["trashed_to"]
        missing = error_of(await client.call_tool("memory_get", {"note_id_or_title": note_id}))
        assert missing["code"] == "not_found"

    run_mcp(body)


def test_note_tools(run_mcp: Any, vault: Path) -> None:
    async def body(client: Any) -> None:
        created = structured(
            await client.call_tool(
                "memory_note_create",
                {"title": "Deploy steps", "type": "skill", "scope": "shared", "body": "Run make.", "tags": ["ops"]},
            )
        )
        assert created["version"] == 1 and created["path"] == "shared/Deploy steps.md"
        ref = created["id"]
        dup = error_of(
            await client.call_tool("memory_note_create", {"title": "Deploy steps", "type": "skill", "scope": "shared"})
        )
        assert dup["code"] == "conflict"
        upd = structured(
            await client.call_tool(
                "memory_note_update", {"id": ref, "patch": {"append": "Then deploy.", "add_tags": ["deploy"]}}
            )
        )
        assert upd["version"] == 2
        stale = error_of(
            await client.call_tool("memory_note_update", {"note_id": ref, "body": "x", "expect_version": 1})
        )
        assert stale["code"] == "conflict"
        val = structured(await client.call_tool("memory_note_validate", {"note_id": ref, "model": "m1", "trust": 0.9}))
        assert val["trust_score"] == 0.9 and set(val) >= {"id", "version", "last_validated_at"}
        com = structured(
            await client.call_tool("memory_note_comment", {"note_id": ref, "text": "checked", "model": "m1"})
        )
        assert com["comments"][-1]["text"] == "checked"
        text = (vault / "shared" / "Deploy steps.md").read_text()
        assert "Then deploy." in text and "last_validated_by: alice/m1" in text
        deleted = structured(await client.call_tool("memory_note_delete", {"note_id": ref}))
        assert deleted["id"] == ref
        again = error_of(await client.call_tool("memory_note_delete", {"note_id": ref}))
        assert again["code"] == "not_found"

    run_mcp(body)


def test_capture_query_write_reference(run_mcp: Any, cli: Cli) -> None:
    async def body(client: Any) -> None:
        cap = structured(await client.call_tool("memory_capture", {"text": "- a raw idea about kites"}))
        assert cap["path"].startswith("inbox/alice/")
        q = structured(await client.call_tool("memory_query", {"q": "kites", "limit": 5}))
        assert set(q) >= {"matches", "query_summary", "total_searched", "search_time_ms"}
        assert [m["path"] for m in q["matches"]] == [cap["path"]]
        w = structured(
            await client.call_tool(
                "memory_write",
                {"memory_writes": [{"type": "semantic", "content": "Kites fly best at 20 km/h"}, {"type": "bogus"}]},
            )
        )
        assert len(w["written"]) == 1 and len(w["rejected"]) == 1
        ref = await client.call_tool("reference_search", {"topic": "no such topic", "question": "anything"})
        cli_ref = cli("reference", "search", "no such topic", "anything", ghost="alice")
        if cli_ref.exit_code == 0:
            assert structured(ref)["topic"] == cli_ref.data["topic"]
        else:
            assert error_of(ref)["code"] == cli_ref.data["error"]["code"]

    run_mcp(body)


def test_unknown_parameter_lists_the_accepted_ones(run_mcp: Any) -> None:
    async def body(client: Any) -> None:
        err = error_of(await client.call_tool("memory_search", {"query": "x", "frobnicate": 1}))
        assert err["code"] == "invalid_input"
        assert "frobnicate" in err["message"] and "query" in err["message"] and "options.max_results" in err["message"]
        missing = error_of(await client.call_tool("memory_note_update", {}))
        assert "note_id" in missing["message"]
        bad = error_of(await client.call_tool("memory_search", {"query": "x", "scope": "everywhere"}))
        assert bad["code"] == "invalid_input"
        nested = structured(
            await client.call_tool(
                "memory_search", {"query": "x", "scope": "shared_only", "options": {"max_results": 2}}
            )
        )
        assert nested["returned"] <= 2
        unknown_tool = error_of(await client.call_tool("memory_frob", {}))
        assert "memory_search" in unknown_tool["message"]

    run_mcp(body)


def test_private_save_needs_a_ghost(run_mcp: Any) -> None:
    async def body(client: Any) -> None:
        err = error_of(await client.call_tool("memory_save", {"content": "orphan"}))
        assert err["code"] == "invalid_input"
        shared = structured(await client.call_tool("memory_save", {"content": "open fact", "scope": "shared"}))
        assert shared["path"].startswith("shared/")

    run_mcp(body, ghost=None)


def test_get_resolves_within_the_scope_it_is_given(run_mcp: Any) -> None:
    async def body(client: Any) -> None:
        note = {"title": "Packing list", "type": "fact", "body": "tent"}
        shared = structured(await client.call_tool("memory_note_create", {**note, "scope": "shared"}))
        private = structured(
            await client.call_tool("memory_note_create", {**note, "scope": "private", "body": "sleeping bag"})
        )
        # one title in two scopes: the scope picks which one is meant
        mine = structured(await client.call_tool("memory_get", {"title": "Packing list", "scope": "private_only"}))
        assert mine["note"]["id"] == private["id"] and "sleeping bag" in mine["body"]
        theirs = structured(await client.call_tool("memory_get", {"title": "Packing list", "scope": "shared_only"}))
        assert theirs["note"]["id"] == shared["id"]
        assert structured(await client.call_tool("memory_get", {"id": private["id"], "scope": "all"}))["body"]
        # an id outside the scope is not found there
        outside = error_of(await client.call_tool("memory_get", {"id": private["id"], "scope": "diary_only"}))
        assert outside["code"] == "not_found"
        bad = error_of(await client.call_tool("memory_get", {"id": private["id"], "scope": "elsewhere"}))
        assert bad["code"] == "invalid_input" and "shared_only" in bad["message"]

    run_mcp(body)


def test_errors_tell_the_servers_paths_relative_to_the_vault(run_mcp: Any, vault: Path) -> None:
    """A client over HTTP may sit on another machine: a broken `vaultmem.toml` is named as
    the vault's file, never by where the server keeps its vault."""
    config = vault / "vaultmem.toml"
    config.write_text(config.read_text() + "\nbroken = [\n")

    async def body(client: Any) -> None:
        for name, arguments in (("memory_search", {"query": "x"}), ("memory_save", {"content": "hello there"})):
            err = error_of(await client.call_tool(name, arguments))
            assert err["code"] == "invalid_input"
            assert err["message"].startswith("vaultmem.toml: not valid TOML"), err
            assert str(vault.resolve()) not in json.dumps(err) and str(vault) not in json.dumps(err)

    run_mcp(body)


def test_note_tools_write_property_links_by_file_name(run_mcp: Any, vault: Path) -> None:
    """memory_note_create and memory_note_update store a property link by title as the
    body's: by file name, the title kept as its label (services/notes.py)."""

    async def body(client: Any) -> None:
        args = {"title": "Wine: basics", "type": "fact", "scope": "shared", "body": "Red."}
        structured(await client.call_tool("memory_note_create", args))
        args = {"title": "Tasting", "type": "note", "scope": "shared", "source": "[[Wine: basics]]"}
        made = structured(await client.call_tool("memory_note_create", args))
        patch = {"note_id": made["id"], "set": {"related": ["[[Wine: basics#Soils]]", "x"]}}
        structured(await client.call_tool("memory_note_update", patch))
        text = (vault / made["path"]).read_text(encoding="utf-8")
        assert "source: '[[shared/Wine basics|Wine: basics]]'" in text
        assert "- '[[shared/Wine basics#Soils|Wine: basics#Soils]]'\n  - x\n" in text

    run_mcp(body)
