"""A person's words in places a first look missed (a reviewer's walk as a person beside an
agent): a note an editor is saving in place, a front matter that sets a key twice, and a
field (a `trust_score`, a tag) a person changed by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

WORDS = "Person paragraph.\n"


@pytest.fixture
def note(cli: Cli, vault: Path) -> dict[str, Any]:
    made = cli.ok(
        "note", "create", "--title", "Tomatoes", "--type", "fact", "--scope", "shared", "--body", WORDS.strip(),
        ghost="alice",
    )  # fmt: skip
    return {**made, "file": vault / made["path"]}


@pytest.mark.parametrize(
    "write",
    [
        ["note", "update", "Tomatoes", "--append", "agent line"],
        ["note", "comment", "Tomatoes", "--text", "agent comment"],
        ["note", "update", "Tomatoes", "--add-tag", "veg"],
    ],
    ids=["append", "comment", "tag"],
)
def test_a_note_an_editor_is_saving_in_place_is_not_written(cli: Cli, note: dict[str, Any], write: list[str]) -> None:
    """An editor saving in place truncates the file, then writes it. An agent's write in
    between used to put its line in place of the whole note (exit 0), and the editor's
    text went to a file no longer in the vault."""
    path: Path = note["file"]
    saved = path.read_bytes() + b"Person new line.\n"
    with path.open("r+b") as editor:
        editor.truncate(0)
        editor.flush()
        res = cli(*write, ghost="alice")
        assert res.exit_code == 4, res.stdout
        assert res.data["error"]["code"] == "conflict" and "empty on disk" in res.data["error"]["message"]
        assert path.read_bytes() == b""  # nothing written; the editor's file is still the note's
        editor.seek(0)
        editor.write(saved)
    assert path.read_bytes() == saved


def test_an_empty_note_read_as_empty_is_written(cli: Cli, vault: Path) -> None:
    """Obsidian's "new note" is an empty file: an agent that read it empty may add to it."""
    (vault / "shared" / "Ideas.md").write_bytes(b"")
    version = cli.ok("get", "Ideas", ghost="alice")["note"]["version"]
    assert cli("note", "update", "Ideas", "--append", "first idea", ghost="alice").exit_code == 4
    cli.ok("note", "update", "Ideas", "--append", "first idea", "--expect-version", str(version), ghost="alice")
    assert (vault / "shared" / "Ideas.md").read_text().endswith("first idea\n")


REPEATED = "---\ntitle: Dup one\ntitle: Dup two\ntags: [a]\ntags: [b]\n---\nBody.\n"


@pytest.mark.parametrize(
    "write",
    [
        ["note", "update", "Dup two", "--append", "agent line", "--expect-version", "0"],
        ["note", "update", "Dup two", "--add-tag", "c", "--expect-version", "0"],
        ["note", "comment", "Dup two", "--text", "c"],
        ["note", "validate", "Dup two", "--by", "alice/m"],
    ],
    ids=["append", "tag", "comment", "validate"],
)
def test_a_front_matter_setting_a_key_twice_is_not_rewritten(cli: Cli, vault: Path, write: list[str]) -> None:
    """YAML keeps the last of a key set twice, and a write re-rendered the block without the
    others: `title: Dup one` and `tags: [a]`, a person's, vanished on an append (exit 0)."""
    path = vault / "shared" / "dup.md"
    path.write_text(REPEATED)
    res = cli(*write, ghost="alice")
    assert res.exit_code == 5, res.stdout
    assert "more than once" in res.data["error"]["message"]
    assert path.read_text() == REPEATED
    problems = cli("lint").data["problems"]
    assert {"path": "shared/dup.md", "code": "repeated_key"} in [{k: p[k] for k in ("path", "code")} for p in problems]
    cli("lint", "--fix")  # it fixes ids and dates, never by re-rendering this block
    assert path.read_text() == REPEATED
    assert cli.ok("get", "shared/dup.md", ghost="alice")["note"]["title"] == "Dup two"  # read as YAML reads it


def _hand_edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize(
    ("old", "new", "write"),
    [
        ("trust_score: 0.5", "trust_score: 0.1", ["note", "validate", "Tomatoes", "--by", "alice/m", "--trust", "0.9"]),
        ("tags: []", "tags: [mine]", ["note", "update", "Tomatoes", "--remove-tag", "mine"]),
        ("trust_score: 0.5", "trust_score: 0.1", ["note", "update", "Tomatoes", "--set", "trust_score=0.9"]),
    ],
    ids=["validate-trust", "remove-tag", "set"],
)
def test_a_field_a_person_set_is_not_replaced_unread(
    cli: Cli, note: dict[str, Any], old: str, new: str, write: list[str]
) -> None:
    """`--set` refused this; `validate --trust` and `--remove-tag` wrote over the person's
    value (exit 0). With the version read, they write."""
    _hand_edit(note["file"], old, new)
    before = note["file"].read_text()
    res = cli(*write, ghost="alice")
    assert res.exit_code == 4, res.stdout
    assert note["file"].read_text() == before
    cli.ok(*write, "--expect-version", str(res.data["error"]["current_version"]), ghost="alice")


@pytest.mark.parametrize(
    "addition",
    [
        ["note", "comment", "Tomatoes", "--text", "looks right"],
        ["note", "update", "Tomatoes", "--add-tag", "veg"],
        ["note", "validate", "Tomatoes", "--by", "alice/m"],
    ],
    ids=["comment", "tag", "validate"],
)
def test_an_unread_addition_leaves_a_persons_field_theirs(cli: Cli, note: dict[str, Any], addition: list[str]) -> None:
    """An addition brings the note's version level with the hand edit before it: after it,
    an unread `--set` of the person's field used to go through."""
    _hand_edit(note["file"], "trust_score: 0.5", "trust_score: 0.1")
    cli.ok(*addition, ghost="alice")
    res = cli("note", "update", "Tomatoes", "--set", "trust_score=0.9", ghost="alice")
    assert res.exit_code == 4, res.stdout
    assert "trust_score: 0.1" in note["file"].read_text()
