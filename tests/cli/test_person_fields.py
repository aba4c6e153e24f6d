"""A person's words in places a first look missed (a reviewer's walk as a person beside an
agent): a note an editor is saving in place, a front matter that sets a key twice, and a
field (a `trust_score`, a tag) a person changed by hand."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
        ["note", "comment", "Tomatoes", "--text", "agent line"],
        ["diary", "--append", "agent line"],
    ],
    ids=["append", "comment", "diary"],
)
def test_a_note_an_editor_is_saving_in_place_keeps_both(cli: Cli, vault: Path, write: list[str]) -> None:
    """An editor saving in place truncates the file, then writes it. An agent's write in
    between used to put its line in place of the whole note (exit 0), and the editor's text
    went to a file no longer in the vault. The agent (a real process) now waits for the
    save and adds to what it holds."""
    if write[0] == "diary":
        path = vault / cli.ok("diary", "--append", "first", ghost="alice")["path"]
    else:
        cli.ok("note", "create", "--title", "Tomatoes", "--type", "fact", "--scope", "shared", "--body", WORDS.strip())
        path = vault / "shared" / "Tomatoes.md"
    with saving_in_place(path):
        agent = _agent(vault, write)
        time.sleep(0.5)  # an editor between its truncate and its write
    out, err = agent.communicate(timeout=300)
    assert agent.returncode == 0, out + err
    text = path.read_text()
    assert "Person new line." in text and "agent line" in text


@contextmanager
def saving_in_place(path: Path) -> Iterator[bytes]:
    """A person's editor saving in place: the file emptied on entry, its text and a line
    of the person's (what is yielded) written through the same descriptor on exit."""
    saved = path.read_bytes() + b"Person new line.\n"
    with path.open("r+b") as editor:
        editor.truncate(0)
        editor.flush()
        yield saved
        editor.seek(0)
        editor.write(saved)


def _agent(vault: Path, argv: list[str]) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "vaultmem", "--vault", str(vault), "--ghost", "alice", "--json", *argv]
    env = {**os.environ, "VAULTMEM_NO_AUTOSTART": "1"}
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_a_save_slower_than_the_wait_is_a_conflict(cli: Cli, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attacker's probe: a save whose truncate and write lay further apart than
    the wait (a large note, a network disk) had the agent write over the empty file (exit
    0), and the editor's text, the note's id and title with it, went to a file no longer in
    the vault. A note still empty a moment after it was emptied is now a conflict."""
    from vaultmem.services import revisions

    monkeypatch.setattr(revisions, "EMPTY_SETTLE_S", 0.2)  # the wait, short: the save outlasts it
    cli.ok("note", "create", "--title", "Tomatoes", "--type", "fact", "--scope", "shared", "--body", WORDS.strip())
    path = vault / "shared" / "Tomatoes.md"
    with saving_in_place(path) as saved:
        res = cli("note", "update", "Tomatoes", "--append", "agent line", ghost="alice")
    assert res.exit_code == 4 and "still be saving" in res.data["error"]["message"], res.stdout
    assert path.read_bytes() == saved  # the person's save is the note
    cli.ok("note", "update", "Tomatoes", "--append", "agent line", ghost="alice")  # the retry adds to it
    assert path.read_text().count("Person new line.") == 1 and "agent line" in path.read_text()


def test_an_empty_note_takes_an_addition(cli: Cli, vault: Path) -> None:
    """Obsidian's "new note" is an empty file: once it has stayed empty a moment, an agent
    adds to it without stating a version."""
    path = vault / "shared" / "Ideas.md"
    path.write_bytes(b"")
    past = time.time() - 60
    os.utime(path, (past, past))
    cli.ok("note", "update", "Ideas", "--append", "first idea", ghost="alice")
    assert path.read_text().endswith("first idea\n")


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


def test_keys_yaml_reads_as_one_count_as_repeated(cli: Cli, vault: Path) -> None:
    """`1` and `1.0` (or `yes` and `true`) are one key to YAML: a write dropped one line."""
    text = "---\ntitle: Dup\n1: first person line\n1.0: second person line\n---\nbody\n"
    path = vault / "shared" / "Dup.md"
    path.write_text(text)
    res = cli("note", "update", "Dup", "--add-tag", "x", ghost="alice")
    assert res.exit_code == 5 and "'1 / 1.0'" in res.data["error"]["message"]
    assert path.read_text() == text


def test_a_moves_link_rewrite_leaves_a_persons_field_unseen(cli: Cli, vault: Path) -> None:
    """The rewrite wrote the note's version into its file, which made a field a person had
    set by hand look seen: an unread validate then replaced it (a reviewer's find)."""
    cli.ok("note", "create", "--title", "Target", "--type", "note", "--scope", "shared", "--body", "m", ghost="alice")
    made = cli.ok(
        "note", "create", "--title", "Linking", "--type", "note", "--scope", "shared", "--body", "see [[Target]]",
        ghost="alice",
    )  # fmt: skip
    _hand_edit(vault / made["path"], "trust_score: 0.5", "trust_score: 0.95")
    cli.ok("note", "move", "Target", "Target two", ghost="alice")
    res = cli("note", "validate", "Linking", "--by", "alice/m", "--trust", "0.1", ghost="alice")
    assert res.exit_code == 4, res.stdout
    assert "trust_score: 0.95" in (vault / made["path"]).read_text()
