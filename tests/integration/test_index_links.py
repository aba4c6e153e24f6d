"""Issue 3, acceptance 1 and 2: a help vault in the style of Obsidian's, copied into a new
vault's shared/, indexes cleanly and idempotently, and `get` resolves its links as
Obsidian does, with links.in the mirror of links.out."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration import _obsidian as help_vault
from tests.integration._vaults import make_vault

S = help_vault.S


@pytest.fixture
def help_cli(tmp_path: Path, hash_embedder: object) -> tuple[Cli, list[str]]:
    root = make_vault(tmp_path / "help", backend="auto")
    rels = help_vault.build(root)
    return Cli(root), rels


def test_help_vault_indexes_once_then_reports_nothing_to_do(help_cli: tuple[Cli, list[str]]) -> None:
    cli, rels = help_cli
    first = cli.ok("index")
    assert first["added"] == len(rels) == 15
    assert (first["updated"], first["deleted"], first["moved"], first["errors"]) == (0, 0, 0, [])
    assert first["fulltext_docs"] == len(rels)
    assert first["embedded_notes"] == len(rels)
    second = cli.ok("index")
    assert (second["added"], second["updated"], second["deleted"], second["moved"]) == (0, 0, 0, 0)
    assert second["unchanged"] == len(rels)
    assert second["fulltext_docs"] == 0 and second["embedded_notes"] == 0
    status = cli.ok("status")
    assert status["notes"] == {"total": 15, "by_scope": {"shared": 15}}
    assert status["index"]["fresh"] is True and status["index"]["pending"] == 0


def _links(cli: Cli, rel: str) -> dict[str, object]:
    doc = cli.ok("get", S + rel)
    assert doc["note"]["path"] == S + rel
    return doc["links"]


def test_get_resolves_links_as_obsidian_does(help_cli: tuple[Cli, list[str]]) -> None:
    cli, _ = help_cli
    cli.ok("index")
    wrong: list[str] = []
    for rel, expected in help_vault.EXPECTED_OUT.items():
        links = _links(cli, rel)
        got = {item["path"] for item in links["out"]}
        want = {S + t for t in expected}
        if got != want:
            wrong.append(f"{rel}: missing {sorted(want - got)}, unexpected {sorted(got - want)}")
        dangling = {d["target"] for d in links["dangling"]}
        if dangling != help_vault.EXPECTED_DANGLING.get(rel, set()):
            wrong.append(f"{rel}: dangling {sorted(dangling)}")
        parent = help_vault.PARENT.get(rel)
        assert (links["parent"] or {}).get("path") == (S + parent if parent else None), rel
    assert not wrong, "\n".join(wrong)


def test_link_labels_headings_and_embeds_are_kept(help_cli: tuple[Cli, list[str]]) -> None:
    cli, _ = help_cli
    cli.ok("index")
    for (src, dst), (kind, heading, label) in help_vault.DETAILS.items():
        out = {item["path"]: item for item in _links(cli, src)["out"]}
        item = out[S + dst]
        assert (item["kind"], item["heading"], item["label"]) == (kind, heading, label), (src, dst)


def test_links_in_mirror_links_out(help_cli: tuple[Cli, list[str]]) -> None:
    cli, _ = help_cli
    cli.ok("index")
    inbound: dict[str, set[str]] = {S + rel: set() for rel in help_vault.EXPECTED_OUT}
    for rel, targets in help_vault.EXPECTED_OUT.items():
        for t in targets:
            inbound[S + t].add(S + rel)
    for rel in help_vault.EXPECTED_OUT:
        links = _links(cli, rel)
        got = {item["path"] for item in links["in"] if item["kind"] != "parent"}
        assert got == inbound[S + rel], rel
    # Links written inside code count for nobody.
    assert S + "Home.md" not in {i["path"] for i in _links(cli, "Aliases.md")["in"]}
    assert S + "Linking notes.md" not in {i["path"] for i in _links(cli, "Callouts.md")["in"]}


def test_get_finds_help_notes_by_title_alias_and_id(help_cli: tuple[Cli, list[str]]) -> None:
    cli, _ = help_cli
    cli.ok("index")
    assert cli.ok("get", "Plugins overview")["note"]["path"] == S + "Plugins/Overview.md"
    assert cli.ok("get", "Quick start")["note"]["path"] == S + "Getting started.md"
    assert cli.ok("get", help_vault.ALIASES_ID)["note"]["path"] == S + "Aliases.md"
