"""The watcher answers before its embedding model is loaded (issue 21, acceptance 5): a
write is indexed lexically at once (read-your-writes) and its vectors follow as soon as the
model is ready. A hybrid search waits for the model (issue 24: the first answer is a full
answer), and falls back to BM25 + graph, saying why, only when the model does not come.

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


def test_a_search_waits_for_the_model_and_writes_do_not(vault: Path, gated: threading.Event) -> None:
    """Issue 24: the first answer is a full answer. A write while the model loads is indexed
    lexically at once; a hybrid search waits for the model, then answers in hybrid."""
    assert (ping(str(vault)) or {}).get("model") == "loading"
    results: dict[str, Any] = {}

    async def while_loading(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "Quokkas smile at the ferry"}))
        results["id"] = saved["id"]
        # asked for BM25: answered now, read-your-writes
        doc = structured(await client.call_tool("memory_search", {"query": "quokkas ferry", "mode": "bm25"}))
        assert doc["mode"] == "bm25" and [r["summary"]["id"] for r in doc["results"]][:1] == [saved["id"]]

    in_memory(vault, "alice", while_loading)
    status = Cli(vault).ok("status")
    assert status["watcher"]["model"] == "loading"
    assert status["index"]["pending_detail"]["vectors"] >= 1  # the new note waits for the model

    opener = threading.Timer(0.5, gated.set)  # the model "loads" while the search waits
    opener.start()

    async def first_search(client: Any) -> None:
        found = await client.call_tool("memory_search", {"query": "quokkas ferry"})
        doc = structured(found)
        assert gated.is_set()  # answered only once the model was there
        assert doc["mode"] == "hybrid" and "requested_mode" not in doc
        assert not any("loading" in w for w in doc.get("warnings", []))
        assert doc["results"][0]["summary"]["id"] == results["id"]

    try:
        in_memory(vault, "alice", first_search)
    finally:
        opener.join()
    _wait(lambda: (ping(str(vault)) or {}).get("model") == "ready")
    # the reconcile after the loading embeds what was written meanwhile
    _wait(lambda: Cli(vault).ok("status")["index"]["pending_detail"]["vectors"] == 0)


def test_the_first_search_with_the_model_finds_what_was_written_while_it_loaded(
    vault: Path, gated: threading.Event
) -> None:
    """The notes indexed while the model loaded have no vectors yet, and the reconcile the
    loading asks for runs only after the search that waited for it: the search embeds them
    first, so a vector search finds them (it answered without them, found nothing new)."""
    written: list[str] = []

    async def while_loading(client: Any) -> None:
        for text in ("Quokkas smile at the ferry", "Wombats dig square burrows"):
            written.append(structured(await client.call_tool("memory_save", {"content": text}))["id"])

    in_memory(vault, "alice", while_loading)
    assert Cli(vault).ok("status")["index"]["pending_detail"]["vectors"] >= 2
    opener = threading.Timer(0.5, gated.set)
    opener.start()

    async def first_search(client: Any) -> None:
        doc = structured(await client.call_tool("memory_search", {"query": "wombats dig burrows", "mode": "vector"}))
        assert gated.is_set() and doc["mode"] == "vector"
        assert [r["summary"]["id"] for r in doc["results"]][:1] == [written[1]]

    try:
        in_memory(vault, "alice", first_search)
    finally:
        opener.join()
    assert Cli(vault).ok("status")["index"]["pending_detail"]["vectors"] == 0


def test_a_model_that_does_not_load_in_time_leaves_bm25_with_the_reason(
    vault: Path, gated: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.services import search

    monkeypatch.setattr(search, "MODEL_WAIT_S", 0.2)

    async def stuck(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "Quokkas smile at the ferry"}))
        found = await client.call_tool("memory_search", {"query": "quokkas ferry"})
        doc = structured(found)
        assert doc["mode"] == "bm25" and doc["requested_mode"] == "hybrid"
        assert any("did not load within" in w for w in doc["warnings"])
        assert "did not load within" in found.content[0].text
        assert doc["results"][0]["summary"]["id"] == saved["id"]

    in_memory(vault, "alice", stuck)
    assert not gated.is_set()


def _model_gone(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Any], Any]:
    """A vault with vectors (the hash embedder) whose model then cannot be loaded, as when
    its files are gone: the model library raises its own error. Returns the load that
    works."""
    from vaultmem.index import embedder as emb

    config = vault / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "none"', 'backend = "auto"'))
    install(monkeypatch, HashEmbedder())
    assert Cli(vault).ok("index")["embedded_chunks"] > 0

    def gone(choice: Any) -> Any:
        raise FileNotFoundError("Path /models/minilm not found")

    works = emb.load
    monkeypatch.setattr(emb, "load", gone)
    return works


def test_a_model_that_cannot_load_leaves_bm25_with_the_reason(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No watcher: the search's catch-up indexes a new note lexically, and the search runs
    BM25 + graph and says why (it failed with an internal error, even in bm25 mode); a
    vector search fails with the reason. Once the model loads again, the vectors follow."""
    from vaultmem.index import embedder as emb

    load = _model_gone(vault, monkeypatch)
    cli = Cli(vault)
    saved = cli.ok("capture", "Quokkas smile at the ferry", ghost="alice")
    for mode in ("hybrid", "bm25"):
        doc = cli.ok("search", "quokkas ferry", "--mode", mode, ghost="alice")
        assert doc["mode"] == "bm25" and doc["results"][0]["summary"]["id"] == saved["id"]
    hybrid = cli.ok("search", "quokkas ferry", ghost="alice")
    assert hybrid["requested_mode"] == "hybrid"
    assert any("could not be loaded" in w and "/models/minilm not found" in w for w in hybrid["warnings"])
    vector = cli("search", "quokkas ferry", "--mode", "vector", ghost="alice")
    assert vector.exit_code != 0 and vector.data["error"]["code"] == "embedding_unavailable"
    assert cli.ok("status")["index"]["pending_detail"]["vectors"] >= 1

    monkeypatch.setattr(emb, "load", load)
    assert cli.ok("search", "quokkas ferry", ghost="alice")["mode"] == "hybrid"
    assert cli.ok("status")["index"]["pending_detail"]["vectors"] == 0


def test_a_watcher_whose_model_cannot_load_answers_bm25_with_the_reason(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's background load fails: a search over MCP answers BM25 + graph with the
    reason (it failed with an internal error), and a note written meanwhile is found."""
    from vaultmem.cli.serve import command_runner
    from vaultmem.daemon.runner import Settings, Watcher

    _model_gone(vault, monkeypatch)
    watcher = Watcher(vault, command_runner, Settings(rescan_s=60.0))
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()

    async def search(client: Any) -> None:
        saved = structured(await client.call_tool("memory_save", {"content": "Quokkas smile at the ferry"}))
        found = await client.call_tool("memory_search", {"query": "quokkas ferry"})
        doc = structured(found)
        assert doc["mode"] == "bm25" and doc["requested_mode"] == "hybrid"
        assert any("could not be loaded" in w for w in doc["warnings"])
        assert "could not be loaded" in found.content[0].text
        assert doc["results"][0]["summary"]["id"] == saved["id"]

    try:
        _wait(lambda: (ping(str(vault)) or {}).get("state") == "watching")
        in_memory(vault, "alice", search)
    finally:
        watcher.request_stop()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_a_reference_search_whose_model_cannot_load_ranks_by_bm25(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a search does: the topic's files ranked by BM25 alone, with the reason on stderr
    (it failed with exit 1, embedding_unavailable, while `search` answered)."""
    _model_gone(vault, monkeypatch)
    (vault / "docs").mkdir()
    (vault / "docs/roses.md").write_text("# Roses\n\nPrune roses in late winter.\n", encoding="utf-8")
    (vault / "reference/garden.md").write_text(
        '---\ntitle: Garden care\ntype: topic\nfiles: ["docs/*.md"]\n---\nGarden.\n', encoding="utf-8"
    )
    found = Cli(vault)("reference", "search", "garden", "when to prune roses", ghost="alice")
    assert found.exit_code == 0, found.stdout + found.stderr
    assert found.data["mode"] == "bm25" and [r["summary"]["path"] for r in found.data["results"]] == ["docs/roses.md"]
    assert "could not be loaded" in found.stderr
