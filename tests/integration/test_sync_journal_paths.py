"""A teammate's push, or a crafted file in the git dir, never makes sync write journal
lines out of the vault (a security probe's F3 and F7).

F3: on clone one, plain git replaced `.vaultmem-journal/bob` by a symlink out of the vault
and pushed; on clone two, where bob had a private note's line not yet committed, alice's
sync exited 4 ("could not be put back (File exists)"), and once the link's target existed
the next sync appended bob's line there (naming his private note) and dropped it from the
vault; bob's own writes then went there too. F7: an absolute path in the lines set aside
made sync create folders and write there; a NUL in one crashed every sync (exit 1)."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration.test_clones_merge import clones, git  # noqa: F401  (the fixture)
from tests.integration.test_sync import create, head
from tests.integration.test_sync_journal import SECRET, identity, journal_of, told  # noqa: F401  (autouse)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

ASIDE = ".git/vaultmem-journal-aside.json"


def files_in(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def push_journal_as_symlink(one: Path, outside: Path) -> None:
    """Clone one pushes bob's journal folder as a symlink to `outside` (plain git)."""
    git(one, "rm", "-rq", ".vaultmem-journal/bob")
    (one / ".vaultmem-journal").mkdir(exist_ok=True)  # gone with its one folder
    (one / ".vaultmem-journal" / "bob").symlink_to(outside)
    git(one, "add", "-A")
    git(one, "commit", "-qm", "journal elsewhere")
    git(one, "push", "-q", "origin", "main")


def bob_writes_unsynced(one: Path, two: Path) -> tuple[Path, bytes]:
    """bob's journal file committed on both clones, then a private note's line on clone two
    only: (that file, its bytes)."""
    a, b = Cli(one), Cli(two)
    create(a, "Bob earlier", "bob")
    a.ok("sync", ghost="bob")
    b.ok("sync")
    create(b, "Bob private plan", "bob", scope="private", body=SECRET)
    journal = journal_of(two, "bob")
    return journal, journal.read_bytes()


def test_a_push_making_a_journal_folder_a_symlink_is_not_merged(clones: tuple[Path, Path], tmp_path: Path) -> None:  # noqa: F811
    one, two = clones
    b = Cli(two)
    journal, before = bob_writes_unsynced(one, two)
    outside = tmp_path / "outside"
    push_journal_as_symlink(one, outside)
    was = head(two)

    for _ in range(2):  # and again once the link's target exists
        refused = b("sync", ghost="alice")
        assert refused.exit_code == 4, refused.stdout + refused.stderr
        assert "symlink" in refused.data["error"]["message"] and "nothing merged" in refused.data["error"]["message"]
        assert refused.data["error"]["paths"] == [".vaultmem-journal/bob"]
        assert head(two) == was and journal.read_bytes() == before and not journal.is_symlink()
        assert files_in(outside) == []
        for secret in ("Bob private", "7731", "private/bob"):
            assert secret not in told(refused)
        outside.mkdir(exist_ok=True)
    create(b, "Bob later", "bob")  # bob's own writes stay in the vault
    assert files_in(outside) == [] and b"Bob later" in journal.read_bytes()

    # Upstream puts a real folder back: the next sync merges, bob's lines still his to commit
    git(one, "rm", "-q", ".vaultmem-journal/bob")
    git(one, "checkout", "HEAD~1", "--", ".vaultmem-journal/bob")
    git(one, "commit", "-qm", "journal back")
    git(one, "push", "-q", "origin", "main")
    assert b.ok("sync", ghost="alice")["pushed"]
    assert journal.read_bytes().startswith(before) and b"Bob later" in journal.read_bytes()
    assert files_in(outside) == []


def test_a_link_merged_by_hand_refuses_writes_and_its_removal_syncs(clones: tuple[Path, Path], tmp_path: Path) -> None:  # noqa: F811
    """A person who merged such a push with plain git: bob's writes are done, not
    journaled, and said so; the person's commit that removes the link then syncs (the
    link was in both histories: not this merge's doing)."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    outside = tmp_path / "outside"
    outside.mkdir()
    create(a, "Bob earlier", "bob")
    a.ok("sync", ghost="bob")
    push_journal_as_symlink(one, outside)
    git(two, "pull", "-q", "--no-rebase", "origin", "main")  # by hand
    create(a, "Alice upstream", "alice")  # and upstream moves on: the next sync merges
    a.ok("sync", ghost="alice")

    written = b("note", "create", "--title", "Bob plan", "--type", "fact", "--scope", "private", "--body", SECRET,
                "--source", "x", ghost="bob")  # fmt: skip
    assert written.exit_code == 0, written.stderr
    assert (two / written.data["path"]).is_file()
    assert "not journaled" in written.stderr and ".vaultmem-journal/bob/" in written.stderr
    assert files_in(outside) == []

    git(two, "rm", "-q", ".vaultmem-journal/bob")
    git(two, "commit", "-qm", "a real journal folder again")
    (two / ".vaultmem-journal" / "bob").mkdir(parents=True)
    assert b.ok("sync", ghost="alice")["pushed"]
    assert not (two / ".vaultmem-journal" / "bob").is_symlink() and files_in(outside) == []


def keep_aside(root: Path, files: dict[str, bytes]) -> None:
    record = {"files": {path: base64.b64encode(block).decode("ascii") for path, block in files.items()}}
    (root / ASIDE).write_text(json.dumps(record))


@pytest.mark.parametrize(
    "bad",
    ["{tmp}/x/.vaultmem-journal/x.jsonl", ".vaultmem-journal/bob/\x00.jsonl", ".vaultmem-journal/b\x00b/x.jsonl",
     ".vaultmem-journal/../x.jsonl", "shared/.vaultmem-journal/x.jsonl", "../x/.vaultmem-journal/x.jsonl"],
    ids=["absolute", "nul", "nul-in-a-folder", "dotdot", "not-the-vaults-journal", "above-the-vault"],
)  # fmt: skip
def test_a_crafted_entry_set_aside_is_dropped_with_a_warning(
    clones: tuple[Path, Path],  # noqa: F811
    tmp_path: Path,
    bad: str,
) -> None:
    _, two = clones
    bad = bad.format(tmp=tmp_path)
    line = b'{"at":"2026-11-26T12:28:41.123Z","by":"alice","hash":null,"path":"shared/x.md"}\n'
    keep_aside(two, {bad: b"planted\n", ".vaultmem-journal/alice/2026-11.jsonl": line})

    synced = Cli(two)("sync", ghost="alice")
    assert synced.exit_code == 0, synced.stdout + synced.stderr
    assert "1 of the entries" in synced.stderr and "dropped" in synced.stderr
    assert (two / ".vaultmem-journal" / "alice" / "2026-11.jsonl").read_bytes() == line  # the good one put back
    assert not (two / ASIDE).exists()
    assert not (tmp_path / "x").exists() and not (two / "shared" / ".vaultmem-journal").exists()
    assert not [p for p in tmp_path.rglob("*.jsonl") if p.read_bytes() == b"planted\n"]


def test_lines_set_aside_for_a_symlinked_folder_are_kept_not_written_through(
    clones: tuple[Path, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    _, two = clones
    outside = tmp_path / "outside"
    outside.mkdir()
    (two / ".vaultmem-journal").mkdir(exist_ok=True)
    (two / ".vaultmem-journal" / "bob").symlink_to(outside)
    keep_aside(two, {".vaultmem-journal/bob/2026-11.jsonl": b"bob's line\n"})

    refused = Cli(two)("sync", ghost="alice")
    assert refused.exit_code == 4, refused.stdout + refused.stderr
    assert "symlink" in refused.data["error"]["message"]
    assert files_in(outside) == [] and (two / ASIDE).exists()  # kept, for a person
    (two / ".vaultmem-journal" / "bob").unlink()
    Cli(two).ok("sync", ghost="alice")
    assert (two / ".vaultmem-journal" / "bob" / "2026-11.jsonl").read_bytes() == b"bob's line\n"
    assert not (two / ASIDE).exists()
