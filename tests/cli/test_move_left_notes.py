"""A move never stops half done because of one linking note (a security probe's find).

A note whose links cannot be rewritten (it would be over the size limit) is left as it is,
told only to a caller who may see it, and the move and every other relink go on; a moved
note that would be too large (its own links, its new title) refuses the move before
anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli._util import vault_files, write
from tests.conftest import Cli
from vaultmem.errors import ChangedOnDisk
from vaultmem.vault import store
from vaultmem.vault.layout import MAX_NOTE_BYTES


def _sized(head: str, size: int) -> str:
    """`head` then a body of x's: a file of exactly `size` bytes."""
    return head + "x" * (size - len(head.encode("utf-8")) - 1) + "\n"


def _alice_links_to_target(vault: Path, cli: Cli, big: bool = True) -> None:
    """The probe's vault: alice's private notes link to the shared Target2, one of them
    (sorting between the others) a few bytes under the size limit."""
    cli.ok("note", "create", "--title", "Target2", "--type", "note", "--scope", "shared", "--body", "t", ghost="bob")
    for title in ("Apriv", "Zpriv"):
        cli.ok("note", "create", "--title", title, "--type", "note", "--scope", "private",
               "--body", "see [[Target2]]", ghost="alice")  # fmt: skip
    if big:
        write(
            vault,
            "private/alice/Big.md",
            _sized('---\ntitle: Big\ntype: note\nrel: "[[Target2]]"\n---\n', MAX_NOTE_BYTES - 3),
        )
    cli.ok("index")


def test_a_note_too_large_to_relink_never_stops_a_move_nor_is_named(vault: Path, cli: Cli) -> None:
    _alice_links_to_target(vault, cli)
    big_before = (vault / "private/alice/Big.md").read_bytes()
    dry = cli("note", "move", "Target2", "Target3", "--dry-run", ghost="bob")
    res = cli("note", "move", "Target2", "Target3", ghost="bob")
    # bob may not see, count or infer alice's private notes (SPEC §3): nothing names them
    for out in (dry, res):
        assert out.exit_code == 0, out.stdout + out.stderr
        for secret in ("alice", "Big", "Apriv", "Zpriv"):
            assert secret not in out.stdout + out.stderr
        assert out.data["links_updated"] == [] and out.data["skipped"] == []
    assert res.data["moves"][0]["to"] == "shared/Target3.md"
    # the whole move is done: renamed, retitled, every other link rewritten
    assert not (vault / "shared/Target2.md").exists()
    assert cli.ok("get", "shared/Target3.md", ghost="bob")["note"]["title"] == "Target3"
    for name in ("Apriv", "Zpriv"):
        assert "[[shared/Target3]]" in (vault / f"private/alice/{name}.md").read_text(encoding="utf-8")
    # the note too large to relink is left as it was
    assert (vault / "private/alice/Big.md").read_bytes() == big_before


def test_the_owner_is_told_of_her_note_left_as_it_was(vault: Path, cli: Cli) -> None:
    _alice_links_to_target(vault, cli)
    dry = cli.ok("note", "move", "Target2", "Target3", "--dry-run", ghost="alice")
    done = cli.ok("note", "move", "Target2", "Target3", ghost="alice")
    for out in (dry, done):
        assert out["links_updated"] == ["private/alice/Apriv.md", "private/alice/Zpriv.md"]
        assert [s["path"] for s in out["skipped"]] == ["private/alice/Big.md"]
        assert "size limit" in out["skipped"][0]["reason"]


def test_fix_names_goes_on_past_a_note_too_large_to_relink(vault: Path, cli: Cli) -> None:
    # the old slug `wine-cheese` becomes `Wine & cheese`: each link to it 2 bytes longer
    write(vault, "shared/wine-cheese.md", "---\ntitle: Wine & cheese\ntype: note\n---\nRed.\n")
    write(vault, "shared/A.md", "see [[wine-cheese]]\n")
    write(vault, "shared/Big.md", _sized("---\nrel: '[[wine-cheese]]'\n---\n", MAX_NOTE_BYTES - 1))
    write(vault, "shared/Z.md", "see [[wine-cheese]]\n")
    big_before = (vault / "shared/Big.md").read_bytes()
    out = cli.ok("fix-names")
    assert [m["to"] for m in out["moves"]] == ["shared/Wine & cheese.md"]
    assert out["links_updated"] == ["shared/A.md", "shared/Z.md"]
    assert [s["path"] for s in out["skipped"]] == ["shared/Big.md"]
    assert (vault / "shared/Big.md").read_bytes() == big_before
    for name in ("A", "Z"):
        assert "[[Wine & cheese]]" in (vault / f"shared/{name}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "target"),
    [
        # its title is its file name: the rename retitles it, 20 bytes longer
        ("---\ntitle: Note\ntype: note\nversion: 1\n---\n", "Note with a much longer name"),
        # its relative link to a note beside it gains a `../`
        ("---\ntype: note\n---\n[other](Other.md)\n", "shared/sub/"),
    ],
)
def test_a_moved_note_too_large_after_the_move_moves_nothing(vault: Path, cli: Cli, text: str, target: str) -> None:
    write(vault, "shared/Other.md", "Another.\n")
    write(vault, "shared/Note.md", _sized(text, MAX_NOTE_BYTES - 2))
    write(vault, "shared/Linking.md", "see [[Note]]\n")
    cli.ok("index")
    before = vault_files(vault)
    dry = cli("note", "move", "shared/Note.md", target, "--dry-run", ghost="bob")
    res = cli("note", "move", "shared/Note.md", target, ghost="bob")
    for out in (dry, res):
        assert out.exit_code == 5, out.stdout + out.stderr
        assert "nothing moved" in out.stdout + out.stderr
    assert vault_files(vault) == before


@pytest.mark.parametrize(
    ("head", "fixed_as"),
    [
        ("---\ntype: note\n---\n", "id:"),  # a note without an id gets one
        # a link by title is written by file name, as Obsidian resolves it
        ("---\nid: {id}\ntype: note\n---\n[[Wine: basics]] ", "[[shared/Wine basics|Wine: basics]]"),
    ],
)
def test_lint_fix_goes_on_past_a_note_too_large_to_fix(vault: Path, cli: Cli, head: str, fixed_as: str) -> None:
    write(vault, "shared/Wine basics.md", "---\nid: 01JAAAAAAAAAAAAAAAAAAAAAW1\ntitle: 'Wine: basics'\n---\nRed.\n")
    for n, name in enumerate(("A", "Big", "Z")):
        text = head.format(id=f"01JAAAAAAAAAAAAAAAAAAAAAB{n}")
        write(vault, f"shared/{name}.md", _sized(text, MAX_NOTE_BYTES - 2) if name == "Big" else text + "\n")
    big_before = (vault / "shared/Big.md").read_bytes()
    res = cli("lint", "--fix")
    assert res.exit_code in (0, 1), res.stdout
    assert {f["path"] for f in res.data["fixed"]} >= {"shared/A.md", "shared/Z.md"}
    assert "shared/Big.md" not in {f["path"] for f in res.data["fixed"]}
    assert (vault / "shared/Big.md").read_bytes() == big_before
    for name in ("A", "Z"):
        assert fixed_as in (vault / f"shared/{name}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "error",
    [
        ChangedOnDisk("private/alice/Apriv.md changed on disk since it was read; nothing written"),
        PermissionError(13, "Permission denied", "private/alice/Apriv.md"),
    ],
)
def test_a_note_that_cannot_be_written_never_stops_a_move(
    vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    """Any per-note failure of the rewrite (a person's save in the last instant, a file
    system refusing) leaves that note as it was and says nothing of it to bob."""
    _alice_links_to_target(vault, cli, big=False)
    replace_file = store.replace_file

    def refusing(root: Path, relpath: str, *args: object, **kwargs: object) -> None:
        if relpath == "private/alice/Apriv.md":
            raise error
        replace_file(root, relpath, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "replace_file", refusing)
    apriv_before = (vault / "private/alice/Apriv.md").read_bytes()
    res = cli("note", "move", "Target2", "Target3", ghost="bob")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "alice" not in res.stdout + res.stderr and "Apriv" not in res.stdout + res.stderr
    assert res.data["skipped"] == []
    assert (vault / "private/alice/Apriv.md").read_bytes() == apriv_before
    assert "[[shared/Target3]]" in (vault / "private/alice/Zpriv.md").read_text(encoding="utf-8")
    assert cli.ok("get", "shared/Target3.md", ghost="bob")["note"]["title"] == "Target3"
