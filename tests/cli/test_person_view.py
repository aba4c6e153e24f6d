"""Issue 26, item 2: a person's view. One of the vault's people ([vault] people), named by
$VAULTMEM_PERSON in their own shell, sees what Obsidian shows: every note, links that
resolve, no false orphans; their writes are journaled as theirs. A ghost always wins, an
unknown name is refused, and an MCP server never takes it from its environment."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note
from tests.mcp.conftest import in_memory, structured
from vaultmem.vault.journal import read_all


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_vault(tmp_path / "v")
    config = root / "vaultmem.toml"
    config.write_text(
        config.read_text().replace('ghosts = ["alice", "bob"]', 'ghosts = ["alice", "bob"]\npeople = ["pat"]')
    )
    note(root, "shared/Welcome.md", "See [[Plans]] and [[Roadmap]].\n", id="W", title="Welcome")
    note(root, "private/alice/Plans.md", "Alice's plans for the garden.\n", id="P", title="Plans")
    note(root, "project/apollo/Roadmap.md", "The roadmap, back to [[Welcome]].\n", id="R", title="Roadmap")
    return root


def paths(items: list[dict[str, Any]]) -> list[str]:
    return sorted(i["path"] for i in items)


def test_a_person_sees_the_whole_vault(vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    nobody = cli.ok("links", "Welcome")
    assert {d["target"] for d in nobody["dangling"]} == {"Plans", "Roadmap"}  # no ghost: shared only
    monkeypatch.setenv("VAULTMEM_PERSON", "pat")
    links = cli.ok("links", "Welcome")
    assert links["dangling"] == [] and paths(links["out"]) == [
        "private/alice/Plans.md",
        "project/apollo/Roadmap.md",
    ]
    assert cli.ok("get", "Plans")["note"]["path"] == "private/alice/Plans.md"
    assert paths(cli.ok("orphans")["orphans"]) == []  # each note links or is linked
    assert len(cli.ok("list")["notes"]) == 3
    found = cli.ok("search", "garden plans", "--mode", "bm25")["results"]
    assert [r["summary"]["path"] for r in found][:1] == ["private/alice/Plans.md"]
    # a person's write is journaled as theirs
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=Pat", "-c", "user.email=p@x", "commit", "-qm", "v"]):
        subprocess.run(["git", *args], cwd=vault, check=True, capture_output=True)
    cli.ok("note", "update", "Plans", "--append", "Pat agrees.")
    assert [(e.by, e.person) for e in read_all(vault)] == [(None, "pat")]
    assert cli.ok("review")["changes"][0]["by"] == ["pat"]


def test_a_ghost_always_wins_and_unknown_people_are_refused(
    vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTMEM_PERSON", "pat")
    assert cli("get", "Plans", ghost="bob").exit_code == 3  # bob's view, whoever's shell it is
    assert cli.ok("get", "Plans", ghost="alice")["note"]["id"] == "P"
    monkeypatch.setenv("VAULTMEM_PERSON", "mallory")
    refused = cli("get", "Welcome")
    assert refused.exit_code == 5 and "people" in refused.data["error"]["message"]


def test_an_mcp_server_never_takes_the_person_from_its_environment(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTMEM_PERSON", "pat")

    async def body(client: Any) -> None:
        found = structured(
            await client.call_tool("memory_search", {"query": "garden plans", "options": {"mode": "bm25"}})
        )
        assert all(not r["summary"]["path"].startswith(("private/", "project/")) for r in found["results"])

    in_memory(vault, None, body)
