"""Derived state heals itself (issue 13, items 7-9): with the state db, the Whoosh index or
the Chroma store garbled, truncated, emptied or replaced by a folder, the next command
sets the store aside, rebuilds it from the notes, answers as before and says so on stderr;
`status` never calls a broken index fresh. One case per store x damage x command, each on a
vault indexed afresh and damaged just before the command (in-process CLI)."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests._embedders import HashEmbedder, install
from tests.conftest import Cli, Result
from tests.integration._vaults import make_vault, note, paths_of

QUERY = "walruses ice"
EXPECTED = "shared/walrus.md"


def _garble(path: Path) -> None:
    rng = random.Random(13)
    with path.open("r+b") as fh:
        fh.write(bytes(rng.randrange(256) for _ in range(100)))


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _folder(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    path.mkdir()
    (path / "junk").write_text("x")


DAMAGES: dict[str, Callable[[Path], None]] = {
    "garbled": _garble,
    "truncated": _truncate,
    "emptied": _empty,
    "folder": _folder,
}


def _only(folder: Path, suffix: str) -> Path:
    found = [p for p in folder.iterdir() if p.name.endswith(suffix)]
    assert len(found) == 1, found
    return found[0]


# store -> (the file to damage, whether the vault embeds, the commands that read that store)
STORES: dict[str, tuple[Callable[[Path], Path], bool, tuple[str, ...]]] = {
    "state db": (
        lambda state: state / "state.db",
        False,
        ("search bm25", "get", "query", "index", "index --full", "status"),
    ),
    "whoosh toc": (
        lambda state: _only(state / "whoosh", ".toc"),
        False,
        ("search bm25", "index", "index --full", "status"),
    ),
    "whoosh segment": (
        lambda state: _only(state / "whoosh", ".seg"),
        False,
        ("search bm25", "index", "status"),
    ),
    "chroma.sqlite3": (
        lambda state: state / "chroma" / "chroma.sqlite3",
        True,
        ("search vector", "search hybrid", "index", "index --full", "status"),
    ),
}

CASES = [
    pytest.param(store, damage, command, id=f"{store}-{damage}-{command}")
    for store, (_, _, commands) in STORES.items()
    for damage in DAMAGES
    for command in commands
]


def _vault(tmp_path: Path, embeds: bool) -> tuple[Cli, Path]:
    root = make_vault(tmp_path / "v", backend="auto" if embeds else "none")
    note(root, "shared/walrus.md", "Walruses bask on the ice floes of the Arctic.\n", title="Walrus")
    note(root, "shared/penguin.md", "Penguins swim in cold southern water.\n", title="Penguin")
    note(root, "shared/heron.md", "Herons stand still in shallow rivers. [[Walrus]]\n", title="Heron")
    cli = Cli(root)
    cli.ok("index")
    return cli, root


def _notice(res: Result) -> None:
    assert "damaged" in res.stderr, res.stderr
    assert len([line for line in res.stderr.splitlines() if "damaged" in line]) == 1, res.stderr


def _run(cli: Cli, command: str) -> Result:
    args = {
        "search bm25": ("search", QUERY, "--mode", "bm25"),
        "search vector": ("search", QUERY, "--mode", "vector"),
        "search hybrid": ("search", QUERY, "--mode", "hybrid"),
        "get": ("get", EXPECTED),
        "query": ("query", "walruses"),
        "index": ("index",),
        "index --full": ("index", "--full"),
        "status": ("status",),
    }[command]
    return cli(*args)


@pytest.mark.parametrize(("store", "damage", "command"), CASES)
def test_a_damaged_store_is_set_aside_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str, damage: str, command: str
) -> None:
    target_of, embeds, _ = STORES[store]
    if embeds:
        install(monkeypatch, HashEmbedder())
    cli, root = _vault(tmp_path, embeds)
    modes = ("bm25", "vector", "hybrid") if embeds else ("bm25",)
    before = {m: cli.ok("search", QUERY, "--mode", m)["results"] for m in modes}
    assert paths_of({"results": before["bm25"]})[0] == EXPECTED
    state = root / ".vaultmem"
    DAMAGES[damage](target_of(state))

    res = _run(cli, command)
    assert res.exit_code == 0, f"exit {res.exit_code}\nstdout: {res.stdout}\nstderr: {res.stderr}"
    assert "Traceback" not in res.stderr
    _notice(res)
    data = res.data
    if command.startswith("search"):
        assert data["results"] == before[command.split()[1]]
    elif command == "get":
        assert data["note"]["path"] == EXPECTED if "note" in data else EXPECTED in res.stdout
    elif command == "query":
        assert EXPECTED in res.stdout
    elif command == "status":
        # Never fresh over a broken index, and the next reconcile repairs it.
        assert data["index"]["fresh"] is False and data["index"]["pending"] > 0
        assert cli.ok("index")["errors"] == []
    elif command.startswith("index"):
        assert data["errors"] == []

    # Afterwards: every mode answers as before, nothing is damaged any more, and (once a
    # command that reconciles has run: `get` and `query` only catch the catalog up) fresh.
    for mode, results in before.items():
        again = cli("search", QUERY, "--mode", mode)
        assert again.exit_code == 0 and "damaged" not in again.stderr, again.stderr
        assert again.data["results"] == results
    after = cli("status")
    assert after.exit_code == 0 and "damaged" not in after.stderr, after.stderr
    assert after.data["index"]["fresh"] is True
    aside = [p.name for p in state.rglob("*.broken-*")] + [p.name for p in state.glob("*.broken-*")]
    assert aside, "the damaged store is kept aside, not silently overwritten"


def test_an_emptied_vector_store_is_not_reported_fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The case of the sweep: an emptied chroma.sqlite3 opened as a new, empty store, so
    vector search found nothing while `status` said fresh."""
    install(monkeypatch, HashEmbedder())
    cli, root = _vault(tmp_path, embeds=True)
    (root / ".vaultmem" / "chroma" / "chroma.sqlite3").write_bytes(b"")
    status = cli("status")
    assert status.exit_code == 0 and "vector store is damaged" in status.stderr
    assert status.data["index"]["fresh"] is False
    assert status.data["index"]["pending_detail"]["vectors"] == 3
    assert paths_of(cli.ok("search", QUERY, "--mode", "vector"))[0] == EXPECTED
