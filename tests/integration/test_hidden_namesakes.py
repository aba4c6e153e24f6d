"""Another ghost's private note that shares a name or an id with a shared note, found by an
attacker's differential review: two vaults alike in everything alice may read, one where
bob also keeps such a note. Links resolve by file name before title (Obsidian's order), so
bob's `Canonical Summary.md` wins `[[Canonical Summary]]` among all notes; alice's view
resolves it to the shared note titled so. Her delete, review and revert must answer alike
in both vaults (SPEC §3: a ghost never infers another ghost's private notes)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration._vaults import note
from tests.integration.test_git_review import PERSON, git, new_vault

ID = "01JJ5E6RHXQAQPDH4AFAXRHEM3"
SHA = re.compile(r"\b[0-9a-f]{8,40}\b")
STAMP = re.compile(r"\d{8}T\d{6,12}Z")


def vault(root: Path, bob: bool) -> Path:
    """A shared note titled "Canonical Summary" in a file named otherwise, with the given id,
    and a shared note linking to it by title; with `bob`, his private namesake holding the
    same id, by file name and by id."""
    new_vault(root)
    note(root, "shared/canon-file.md", "Pinot.", id=ID, title="Canonical Summary", type="note", scope="shared")
    note(root, "shared/Linker.md", "See [[Canonical Summary]].", title="Linker", type="note", scope="shared")
    note(root, "shared/Cooking.md", "Risotto.\nA person's line.", title="Cooking", type="note", scope="shared")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    if bob:
        note(root, "private/bob/Canonical Summary.md", "bob's", id=ID, title="Bob", type="note", scope="private")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "bob's private work")  # HEAD: a commit alice may not name
    Cli(root).ok("index")
    return root


def answer(root: Path, *args: str) -> tuple[int, Any]:
    res = Cli(root)(*args, ghost="alice")
    text = STAMP.sub("T", SHA.sub("SHA", res.stdout.replace(str(root), "V")))
    return res.exit_code, text


@pytest.fixture
def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    return vault(tmp_path / "quiet", False), vault(tmp_path / "busy", True)


def test_a_delete_names_the_notes_linking_to_it_in_the_callers_view(pair: tuple[Path, Path]) -> None:
    deleted = [answer(root, "note", "delete", "Canonical Summary") for root in pair]
    assert deleted[0] == deleted[1]
    linked = Cli(pair[1]).ok("note", "delete", "Linker", ghost="alice")  # nothing links to it
    assert linked["linked_from"] == []
    assert '"path":"shared/Linker.md"' in deleted[1][1].replace(" ", "")  # the link that now dangles, to her


def test_review_and_revert_answer_alike_beside_a_hidden_namesake(pair: tuple[Path, Path]) -> None:
    for root in pair:  # alice's change: a new link to the note by title, a person's line rewritten
        cli = Cli(root)
        cli.ok("note", "update", "Linker", "--append", "Also [[Canonical Summary]] again.", ghost="alice")
        cli.ok(
            "note", "update", "Cooking", "--body", "Risotto.\nAlice rewrote it.", "--expect-version", "0", ghost="alice"
        )
        cli.ok("note", "update", ID, "--append", "alice's line", ghost="alice")
    for args in (("review",), ("revert", "HEAD", "--dry-run")):
        assert answer(pair[0], *args) == answer(pair[1], *args), args
    review = Cli(pair[1]).ok("review", ghost="alice")
    flags = {c["path"]: [f["reason"] for f in c["flags"]] for c in review["changes"]}
    assert not any("nothing" in reason for reason in flags["shared/Linker.md"])  # the link resolves
    named = re.search(r"version at ([0-9a-f]{8})", " ".join(flags["shared/Cooking.md"]))
    assert named, flags  # the base it names is one alice may ask for
    assert Cli(pair[1])("get", "Cooking", "--at", named.group(1), ghost="alice").exit_code == 0
    for root in pair:
        Cli(root).ok("commit", ghost="alice")
    undone = [answer(root, "revert", "HEAD") for root in pair]
    assert undone[0] == undone[1] and undone[1][0] == 0, undone  # bob's copy of the id blocks nothing
    assert "alice's line" not in (pair[1] / "shared/canon-file.md").read_text()


def test_a_property_link_is_written_and_linted_alike_beside_a_hidden_namesake(pair: tuple[Path, Path]) -> None:
    """Alice's property link by title is written by file name among the notes she and
    the note's readers may see: bob's `Canonical Summary.md`, which Obsidian would open by
    that name, changes neither what she writes nor what her lint says."""
    for root in pair:
        set_link = ("--set", 'related="[[Canonical Summary]]"', "--expect-version", "0")
        Cli(root).ok("note", "update", "Linker", *set_link, ghost="alice")
    related = [re.findall(r"^related: .*$", (root / "shared/Linker.md").read_text(), re.M) for root in pair]
    assert related[0] == related[1] == ["related: '[[shared/canon-file|Canonical Summary]]'"]
    for root in pair:  # a person's link by title, in a property
        (root / "shared/Person.md").write_text('---\nid: P1\ntitle: Person\nsee: "[[Canonical Summary]]"\n---\nx\n')
    linted = [answer(root, "lint") for root in pair]
    assert linted[0] == linted[1]
    named = [p for p in json.loads(linted[1][1])["problems"] if p["path"] == "shared/Person.md"]
    assert [p["code"] for p in named] == ["not_a_file_name"], linted[1]
