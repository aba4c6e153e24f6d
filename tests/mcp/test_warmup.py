"""Acceptance 5: the watcher answers before its embedding model is loaded. Until then a
search (over MCP or the CLI) runs BM25 + graph and says so, a write is indexed lexically at
once (read-your-writes) and its vectors follow as soon as the model is ready.

The watcher runs in this process, on a thread, with the hash embedder; its model "loads"
until the test opens a gate, so the loading window is as long as the test needs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._embedders import HashEmbedder, install
from tests.conftest import Cli
from tests.mcp.conftest import in_memory, structured
from vaultmem.daemon.client import ping

LOADING = "the embedding model is still loading: searched with BM25 + graph only"


def _wait(check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


@pytest.fixture
def gated(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """A vault with vectors (indexed with the hash embedder), whose model loads only once
    the returned gate is set; a watcher for it runs on a thread until the test ends."""
    from vaultmem.cli.serve import command_runner
    from vaultmem.daemon.runner import Settings, Watcher
    from vaultmem.index import embedder as emb

    config = vault / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "none"', 'backend = "auto"'))
    install(monkeypatch, HashEmbedder())
    assert Cli(vault).ok("index")["embedded_chunks"] > 0  # the vault has vectors
    gate = threading.Event()
    load = emb.load

    def slow_load(choice: Any) -> Any:
        assert gate.wait(60), "the test never opened the gate"
        return load(choice)

    monkeypatch.setattr(emb, "load", slow_load)
    watcher = Watcher(vault, command_runner, Settings(rescan_s=60.0))
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        _wait(lambda: (ping(str(vault)) or {}).get("state") == "watching")
        yield gate
    finally:
        gate.set()
        watcher.request_stop()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_search_runs_lexically_until_the_model_is_ready(vault: Path, gated: threading.Event) -> None:
    assert (ping(str(vault)) or {}).get("model") == "loading"
    results: dict[str, Any] = {}

    async def while_loading(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "Quokkas smile at the ferry"}))
        found = await client.call_tool("memory_search", {"query": "quokkas ferry"})
        doc = structured(found)
        # answered now, lexically, and it says so: in the document and in the model's text
        assert doc["mode"] == "bm25" and doc["requested_mode"] == "hybrid"
        assert LOADING in doc["warnings"]
        assert "still loading" in found.content[0].text
        assert [r["summary"]["id"] for r in doc["results"]][:1] == [saved["id"]]  # read-your-writes
        results["id"] = saved["id"]

    in_memory(vault, "alice", while_loading)
    status = Cli(vault).ok("status")
    assert status["watcher"]["model"] == "loading"
    assert status["index"]["pending_detail"]["vectors"] >= 1  # the new note waits for the model

    gated.set()
    _wait(lambda: (ping(str(vault)) or {}).get("model") == "ready")
    # the reconcile after the loading embeds what was written meanwhile
    _wait(lambda: Cli(vault).ok("status")["index"]["pending_detail"]["vectors"] == 0)

    async def once_ready(client: Any) -> None:
        doc = structured(await client.call_tool("memory_search", {"query": "quokkas ferry"}))
        assert doc["mode"] == "hybrid" and not doc.get("warnings")
        assert doc["results"][0]["summary"]["id"] == results["id"]

    in_memory(vault, "alice", once_ready)
