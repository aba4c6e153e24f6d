"""Acceptance 12: `note delete` moves the file into .trash/; `get` then exits 3."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli._util import write
from tests.conftest import Cli


@pytest.mark.parametrize(
    ("scope", "ghost", "ref_kind"),
    [("shared", None, "id"), ("shared", None, "title"), ("private", "alice", "path"), ("diary", "bob", "id")],
)
def test_delete_moves_into_trash_and_get_exits_3(
    vault: Path, cli: Cli, scope: str, ghost: str | None, ref_kind: str
) -> None:
    made = cli.ok(
        "note", "create", "--title", "Doomed", "--type", "note", "--scope", scope, "--body", "last words", ghost=ghost
    )
    original = (vault / made["path"]).read_bytes()
    ref = {"id": made["id"], "title": "doomed", "path": made["path"]}[ref_kind]
    out = cli.ok("note", "delete", ref, ghost=ghost)
    assert (out["id"], out["trashed_to"].startswith(".trash/")) == (made["id"], True)
    assert out["trashed_to"].endswith(made["path"])
    assert not (vault / made["path"]).exists()
    assert (vault / out["trashed_to"]).read_bytes() == original  # recoverable, byte for byte
    for again in (made["id"], made["path"], "Doomed"):
        res = cli("get", again, ghost=ghost)
        assert res.exit_code == 3
        assert res.data["error"]["code"] == "not_found"
    assert cli("note", "delete", made["id"], ghost=ghost).exit_code == 3
    # trash is never a note: lint and the title check ignore it
    assert cli.ok("lint")["errors"] == 0
    if scope == "shared":
        cli.ok("note", "create", "--title", "Doomed", "--type", "note", "--scope", "shared")


def test_deleting_twice_the_same_path_keeps_both_copies(vault: Path, cli: Cli) -> None:
    first = cli.ok("note", "create", "--title", "Again", "--type", "note", "--scope", "shared", "--body", "one")
    t1 = cli.ok("note", "delete", first["id"])["trashed_to"]
    second = cli.ok("note", "create", "--title", "Again", "--type", "note", "--scope", "shared", "--body", "two")
    assert second["path"] == first["path"]
    t2 = cli.ok("note", "delete", second["id"])["trashed_to"]
    assert t1 != t2
    assert (vault / t1).read_text().endswith("one\n") and (vault / t2).read_text().endswith("two\n")


def test_delete_hand_written_and_broken_notes(vault: Path, cli: Cli) -> None:
    write(vault, "Loose Note.md", "no front matter\n")
    write(vault, "shared/broken.md", "---\ntitle: [x\n---\nbody\n")
    assert cli.ok("note", "delete", "Loose Note")["path"] == "Loose Note.md"
    assert cli.ok("note", "delete", "shared/broken.md")["path"] == "shared/broken.md"
    assert not (vault / "Loose Note.md").exists() and not (vault / "shared/broken.md").exists()


def test_delete_removes_links_to_the_note(vault: Path, cli: Cli) -> None:
    target = cli.ok("note", "create", "--title", "Target", "--type", "note", "--scope", "shared")
    src = cli.ok(
        "note", "create", "--title", "Source", "--type", "note", "--scope", "shared", "--body", "see [[Target]]"
    )
    assert [link["id"] for link in cli.ok("get", src["id"])["links"]["out"]] == [target["id"]]
    cli.ok("note", "delete", target["id"])
    links = cli.ok("get", src["id"])["links"]
    assert links["out"] == [] and [d["target"] for d in links["dangling"]] == ["Target"]


def test_delete_other_ghosts_note_is_not_found(vault: Path, cli: Cli) -> None:
    made = cli.ok("note", "create", "--title", "Mine", "--type", "note", "--scope", "private", ghost="alice")
    for ghost in ("bob", None):
        res = cli("note", "delete", made["id"], ghost=ghost)
        assert res.exit_code == 3
    assert (vault / made["path"]).exists()
    assert not (vault / ".trash").exists()
