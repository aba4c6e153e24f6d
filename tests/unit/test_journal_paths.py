"""The write journal touches only real files in real folders of the vault (a probe's F3, F7).

A teammate's push could make `.vaultmem-journal/bob` a symlink out of the vault: every
line of bob's (naming his private notes) was then appended where it pointed. Journal
writes now refuse any symlink between the vault and the file, and readers do not follow
one; paths read from elsewhere are journal files only when spelled plainly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultmem.vault import journal
from vaultmem.vault.journal import JOURNAL_DIR, Entry

AT = "2026-11-26T12:28:41.123Z"


@pytest.mark.parametrize(
    ("path", "plain"),
    [
        (".vaultmem-journal/bob/2026-11.jsonl", True),
        (".vaultmem-journal/_person/2026-11.jsonl", True),
        ("/tmp/x/.vaultmem-journal/x.jsonl", False),  # absolute
        ("/.vaultmem-journal/bob/2026-11.jsonl", False),
        (".vaultmem-journal/../bob/2026-11.jsonl", False),
        (".vaultmem-journal/bob/../2026-11.jsonl", False),
        (".vaultmem-journal/./2026-11.jsonl", False),
        (".vaultmem-journal//2026-11.jsonl", False),
        (".vaultmem-journal/bob/2026-11.jsonl\x00", False),  # NUL
        (".vaultmem-journal/b\x00b/2026-11.jsonl", False),
        (".vaultmem-journal/bob\\..\\x/2026-11.jsonl", False),
        (".vaultmem-journal/bob/2026-11.json", False),  # not a journal file
        (".vaultmem-journal/2026-11.jsonl", False),  # no writer folder
        (".vaultmem-journal/bob/deeper/2026-11.jsonl", False),
        ("notes/.vaultmem-journal/bob/2026-11.jsonl", False),  # not the vault's journal
        ("shared/bob/2026-11.jsonl", False),
        ("", False),
    ],
)
def test_a_journal_path_is_spelled_plainly(path: str, plain: bool) -> None:
    assert journal.is_journal_path(path) is plain


def entry(by: str | None = "bob", path: str = "private/bob/plan.md") -> Entry:
    return Entry(AT, by, path, "0" * 64)


def link(at: Path, to: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(to, target_is_directory=True)


def test_a_real_journal_folder_is_written_and_read(tmp_path: Path) -> None:
    assert journal.append(tmp_path, [entry(), entry("alice", "shared/x.md")]) == []
    assert [e.path for e in journal.read_all(tmp_path)] == ["shared/x.md", "private/bob/plan.md"]


@pytest.mark.parametrize(
    "linked",
    [f"{JOURNAL_DIR}/bob", JOURNAL_DIR],
    ids=["writer-folder", "journal-folder"],
)
@pytest.mark.parametrize("inside", [False, True], ids=["to-outside", "to-inside-the-vault"])
def test_no_journal_line_is_written_through_a_symlinked_folder(tmp_path: Path, linked: str, inside: bool) -> None:
    root, outside = tmp_path / "vault", tmp_path / "outside"
    target = root / "elsewhere" if inside else outside
    (target / "bob").mkdir(parents=True)
    link(root / linked, target if linked == JOURNAL_DIR else target / "bob")

    refused = [f"{JOURNAL_DIR}/bob/2026-11.jsonl"]
    if linked == JOURNAL_DIR:  # every writer's folder lies in the link
        refused.append(f"{JOURNAL_DIR}/alice/2026-11.jsonl")
    assert journal.append(root, [entry(), entry("alice", "shared/x.md")]) == refused
    assert not [p for p in target.rglob("*") if p.is_file()], "nothing written where the link points"
    if linked != JOURNAL_DIR:  # the other writers' folders are real: their lines are written
        assert [e.by for e in journal.read_all(root)] == ["alice"]


def test_a_dangling_symlinked_folder_is_refused_without_making_its_target(tmp_path: Path) -> None:
    root, outside = tmp_path / "vault", tmp_path / "outside"
    link(root / JOURNAL_DIR / "bob", outside)  # points at nothing yet
    assert journal.append(root, [entry()]) == [f"{JOURNAL_DIR}/bob/2026-11.jsonl"]
    assert not outside.exists()


@pytest.mark.parametrize("kind", ["symlink", "dangling-symlink", "fifo", "folder"])
def test_a_journal_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    outside = tmp_path / "outside.jsonl"
    file = tmp_path / JOURNAL_DIR / "bob" / "2026-11.jsonl"
    file.parent.mkdir(parents=True)
    if kind == "symlink":
        outside.write_text("")
        file.symlink_to(outside)
    elif kind == "dangling-symlink":
        file.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(file)  # an open for writing would wait for a reader forever
    else:
        file.mkdir()
    assert journal.append(tmp_path, [entry()]) == [f"{JOURNAL_DIR}/bob/2026-11.jsonl"]
    assert not outside.exists() or outside.read_text() == ""


def test_the_reader_follows_no_symlink(tmp_path: Path) -> None:
    root, outside = tmp_path / "vault", tmp_path / "outside"
    root.mkdir()
    journal.append(root, [entry("alice", "shared/x.md")])
    forged = Entry(AT, "carol", "shared/forged.md", "1" * 64).line() + "\n"
    (outside / "carol").mkdir(parents=True)
    (outside / "carol" / "2026-11.jsonl").write_text(forged)
    (outside / "2026-11.jsonl").write_text(forged)
    link(root / JOURNAL_DIR / "carol", outside / "carol")
    (root / JOURNAL_DIR / "dave").mkdir()
    (root / JOURNAL_DIR / "dave" / "2026-11.jsonl").symlink_to(outside / "2026-11.jsonl")
    assert [e.path for e in journal.read_all(root)] == ["shared/x.md"]
