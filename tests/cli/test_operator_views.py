"""Issue 22, items 4 and 5.

4. `status`, `lint` and `fix-names` act on the whole vault for a person (no ghost); with a
   ghost they show and touch only what that ghost may see (SPEC §3): no count, title, path
   or problem of another ghost's notes, and `fix-names` renames only the ghost's own.
5. A rename keeps every link to the note working — links in notes the mover cannot see
   included (Obsidian's "update internal links") — and tells the mover only of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration._vaults import note


@pytest.fixture
def trio(tmp_path: Path) -> Path:
    """Ghosts alice, bob and carol; project apollo for alice and carol only."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "vaultmem.toml").write_text(
        '[vault]\nghosts = ["alice", "bob", "carol"]\n\n[projects.apollo]\nmembers = ["alice", "carol"]\n\n'
        '[embedding]\nbackend = "none"\n'
    )
    note(root, "shared/Old name.md", "The shared plan.", id="01JG0SHARED0000000000000000", title="Old name")
    note(root, "shared/Index.md", "See [[Old name]].", id="01JG0INDEX00000000000000000", title="Index")
    # alice's private note: a path link with a label, a broken link, and a slug file name
    note(root, "private/alice/secret-plan.md", "[[shared/Old name|the plan]] and [[Nowhere zanzibar]]",
         id="01JG0ALICE00000000000000000", title="Secret plan")  # fmt: skip
    (root / "private/alice/broken.md").write_text("---\ntitle: [unclosed\n---\nzanzibar\n")
    note(root, "diary/carol/2026-11-20.md", "Read [[Old name]] today.", id="01JG0CAROL00000000000000000",
         title="2026-11-20")  # fmt: skip
    note(root, "project/apollo/Launch.md", "Plan: [old](../../shared/Old%20name.md)", id="01JG0APOLLO0000000000000000",
         title="Launch")  # fmt: skip
    note(root, "private/bob/bob-list.md", "[[Old name]]", id="01JG0BOB000000000000000000", title="Bob list")
    Cli(root).ok("index")
    return root


ALICE_WORDS = ("zanzibar", "secret", "alice", "apollo", "carol", "Nowhere")


def _nothing_of_others(out: object) -> None:
    text = str(out)
    for word in ALICE_WORDS:
        assert word not in text, (word, text[:2000])


def test_status_with_a_ghost_counts_only_its_view(trio: Path) -> None:
    cli = Cli(trio)
    person = cli.ok("status")
    assert person["notes"]["total"] == 7 and any("broken" in e["path"] for e in person["index"]["errors"])
    bob = cli.ok("status", ghost="bob")
    assert bob["notes"] == {"total": 3, "by_scope": {"shared": 2, "private": 1}}
    assert bob["index"]["errors"] == []
    (trio / "private/alice/new.md").write_text("zanzibar again\n")  # pending work of alice's
    assert cli.ok("status", ghost="bob")["index"]["pending"] == 0
    assert cli.ok("status")["index"]["pending"] > 0
    _nothing_of_others(cli.ok("status", ghost="bob")["notes"])


def test_lint_with_a_ghost_checks_only_its_view(trio: Path) -> None:
    cli = Cli(trio)
    person = cli("lint")
    assert person.exit_code == 1  # alice's broken note is an error for the vault
    assert "Nowhere zanzibar" in person.stdout and "broken.md" in person.stdout
    bob = cli("lint", ghost="bob")
    assert bob.exit_code == 0, bob.stdout
    assert bob.data["checked"] == 3
    _nothing_of_others(bob.stdout)
    alice = cli("lint", ghost="alice")
    assert "Nowhere zanzibar" in alice.stdout and "broken.md" in alice.stdout


def test_fix_names_with_a_ghost_renames_only_its_own(trio: Path) -> None:
    cli = Cli(trio)
    bob = cli.ok("fix-names", ghost="bob")
    assert [m["to"] for m in bob["moves"]] == ["private/bob/Bob list.md"]
    assert (trio / "private/alice/secret-plan.md").exists()  # alice's slug name stays
    _nothing_of_others(bob)
    person = cli.ok("fix-names")
    assert [m["to"] for m in person["moves"]] == ["private/alice/Secret plan.md"]


def test_a_rename_keeps_every_link_working_and_names_only_what_the_mover_sees(trio: Path) -> None:
    cli = Cli(trio)
    moved = cli.ok("note", "move", "Old name", "New name", ghost="bob")
    assert sorted(moved["links_updated"]) == ["private/bob/bob-list.md", "shared/Index.md"]
    _nothing_of_others(moved)
    new_id = "01JG0SHARED0000000000000000"
    for ghost, ref in (
        ("alice", "Secret plan"),
        ("carol", "2026-11-20"),
        ("carol", "Launch"),
        ("alice", "Launch"),
        ("bob", "Bob list"),
        (None, "Index"),
    ):
        doc = cli.ok("get", ref, ghost=ghost)
        targets = [link["id"] for link in doc["links"]["out"]]
        assert new_id in targets, (ghost, ref, doc["links"])
        assert all("Old name" not in d["target"] for d in doc["links"]["dangling"]), (ghost, ref)
    # the links were rewritten in the files themselves: Obsidian follows them too
    assert "[[shared/New name|the plan]]" in (trio / "private/alice/secret-plan.md").read_text()
    assert "../../shared/New%20name.md" in (trio / "project/apollo/Launch.md").read_text()
    # a person without a ghost renames it again: the same for every note
    again = cli.ok("note", "move", "New name", "Newest name")
    assert sorted(again["links_updated"]) == ["shared/Index.md"]
    assert "Newest name" in (trio / "diary/carol/2026-11-20.md").read_text()
    assert "Newest%20name" in (trio / "project/apollo/Launch.md").read_text()
    assert not [p for p in cli.ok("lint", ghost="carol")["problems"] if p["code"] == "dangling_link"]


def test_index_with_a_ghost_reports_only_its_view(trio: Path) -> None:
    cli = Cli(trio)
    (trio / "private/alice/new.md").write_text("zanzibar again\n")
    (trio / "private/alice/broken2.md").write_text("---\ntitle: [unclosed\n---\nzanzibar\n")
    (trio / "shared/Fresh.md").write_text("a new shared note\n")
    bob = cli.ok("index", ghost="bob")
    assert (bob["added"], bob["updated"], bob["deleted"], bob["unchanged"]) == (1, 0, 0, 3)
    assert bob["errors"] == [] and "fulltext_docs" not in bob
    _nothing_of_others(bob)
    (trio / "private/alice/new.md").write_text("zanzibar changed\n")
    person = cli.ok("index")
    assert person["updated"] == 1 and any("broken" in e["path"] for e in person["errors"])
