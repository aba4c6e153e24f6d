"""Issue 21, item 1: with a watcher running, the MCP server's reads reach it as typed use
cases (the socket's `call` op, services/reads.py): the same answer as in-process, the ghost
exactly the one the server sends (never the watcher's environment), and anything else on
the socket refused without harm."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.mcp.conftest import in_memory, structured
from vaultmem.daemon.client import exchange, ping
from vaultmem.daemon.paths import connect_path
from vaultmem.errors import NotFound
from vaultmem.mcp.runner import Runner
from vaultmem.mcp.tools import BY_NAME
from vaultmem.services import reads
from vaultmem.services.search import SearchRequest


def _wait(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


def _notes(vault: Path) -> None:
    cli = Cli(vault)
    cli.ok(
        "note",
        "create",
        "--title",
        "Kelp",
        "--type",
        "fact",
        "--scope",
        "private",
        "--body",
        "kelp forest",
        ghost="alice",
    )
    cli.ok("note", "create", "--title", "Reef", "--type", "fact", "--scope", "shared", "--body", "kelp and reef")


@contextmanager
def _watcher(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A watcher on a thread, started with VAULTMEM_GHOST=alice in its environment."""
    from vaultmem.cli.serve import command_runner
    from vaultmem.daemon.runner import Settings, Watcher

    monkeypatch.setenv("VAULTMEM_GHOST", "alice")
    watcher = Watcher(vault, command_runner, Settings(rescan_s=60.0))
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        _wait(lambda: (ping(str(vault)) or {}).get("state") == "watching")
        monkeypatch.delenv("VAULTMEM_GHOST")
        yield vault
    finally:
        watcher.request_stop()
        thread.join(timeout=30)


@pytest.fixture
def watched(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    _notes(vault)
    with _watcher(vault, monkeypatch):
        yield vault


def _call(vault: Path, message: dict[str, Any]) -> dict[str, Any]:
    path = connect_path(str(vault))
    assert path is not None
    reply, why = exchange(path, message)
    assert reply is not None, why
    return reply


def test_reads_go_to_the_watcher_as_typed_calls(watched: Path) -> None:
    runner = Runner(watched)
    plan = BY_NAME["memory_search"].plan({"query": "kelp", "options": {"mode": "bm25"}}, "alice")
    answer = runner.call(plan, "alice")
    assert answer.via == "watcher"
    assert {r["summary"]["title"] for r in answer.data["results"]} == {"Kelp", "Reef"}
    # the ghost is the one sent: the watcher's own VAULTMEM_GHOST=alice never stands in
    anonymous = runner.call(BY_NAME["memory_search"].plan({"query": "kelp", "options": {"mode": "bm25"}}, None), None)
    assert anonymous.via == "watcher"
    assert {r["summary"]["title"] for r in anonymous.data["results"]} == {"Reef"}
    # errors come back typed, with the CLI's code
    with pytest.raises(NotFound):
        runner.call(BY_NAME["memory_get"].plan({"id": "Kelp"}, "bob"), "bob")


def test_over_mcp_with_a_watcher_the_answer_is_the_in_process_one(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _notes(vault)
    requests = {
        "search": SearchRequest("kelp", mode="bm25"),
        "get": reads.GetRequest("Kelp"),
        "query": reads.QueryRequest("kelp"),
    }
    here = Runner(vault)
    local = {name: here._here("alice", lambda app, r=r: reads.run(app, r)).data for name, r in requests.items()}
    docs: dict[str, Any] = {}

    async def body(client: Any) -> None:
        docs["search"] = structured(
            await client.call_tool("memory_search", {"query": "kelp", "options": {"mode": "bm25"}})
        )
        docs["get"] = structured(await client.call_tool("memory_get", {"id": "Kelp"}))
        docs["query"] = structured(await client.call_tool("memory_query", {"query": "kelp"}))

    with _watcher(vault, monkeypatch):
        in_memory(vault, "alice", body)
    for name in requests:
        for doc in (docs[name], local[name]):
            doc.pop("search_time_ms", None)
        assert docs[name] == local[name], name


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"op": "call", "use_case": "search", "ghost": "alice", "request": {"query": "kelp"}}, "not_this_vault"),
        ({"op": "call", "use_case": "delete", "ghost": "alice", "request": {"ref": "Kelp"}}, "invalid_request"),
        (
            {"op": "call", "use_case": "search", "ghost": "alice", "request": {"query": "x", "argv": ["--ghost"]}},
            "invalid_request",
        ),
        ({"op": "call", "use_case": "search", "ghost": ["alice"], "request": {"query": "x"}}, "invalid_request"),
        ({"op": "call", "use_case": "get", "ghost": "alice", "request": {"ref": 7}}, "invalid_request"),
        ({"op": "call", "use_case": "get", "ghost": "mallory", "request": {"ref": "Kelp"}}, "invalid_input"),
    ],
)
def test_the_call_op_refuses_what_it_does_not_know(watched: Path, message: dict[str, Any], code: str) -> None:
    if code != "not_this_vault":
        message = {**message, "root": str(watched)}
    reply = _call(watched, message)
    assert reply["error"]["code"] == code, reply
    assert "kelp forest" not in str(reply)
    assert (ping(str(watched)) or {}).get("state") == "watching"  # and it serves on
