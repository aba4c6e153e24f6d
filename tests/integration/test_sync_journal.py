"""A ghost's sync and another ghost's journal lines not yet committed (found by a probe).

bob writes on clone two and does not sync; bob on clone one writes to the same month's
journal file and pushes. alice's sync on clone two commits only alice's files, and git
refused to merge into bob's journal file with its uncommitted lines ("merging origin/main
failed: git refused", exit 4) though the journal is append-only and merges as a union.
Now the merge goes through: bob's uncommitted lines are set aside while git merges and
appended again after, still bob's to commit, and alice hears nothing of them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import Cli, Result
from tests.integration.test_clones_merge import clones, git  # noqa: F401  (the fixture)
from tests.integration.test_sync import GIT_ENV, create, head
from vaultmem.vault.git import Git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

SECRET = "Bob's salary 7731"


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def journal_of(root: Path, ghost: str) -> Path:
    (month,) = sorted((root / ".vaultmem-journal" / ghost).glob("*.jsonl"))[-1:]
    return month


def committed(root: Path, path: Path, rev: str = "HEAD") -> bytes:
    shown = git(root, "show", f"{rev}:{path.relative_to(root).as_posix()}", ok=False)
    return shown.stdout.encode() if shown.returncode == 0 else b""


def told(result: Result) -> str:
    return result.stdout + result.stderr


def bob_behind_upstream(one: Path, two: Path) -> tuple[Git, Path, bytes]:
    """bob's month file committed on both clones; then a line of his pushed from clone one
    and a private note's line on clone two only, origin fetched: (clone two's repo, that
    journal file, its bytes), as a sync finds them before it merges."""
    a, b = Cli(one), Cli(two)
    create(a, "Bob earlier", "bob")
    a.ok("sync", ghost="bob")
    b.ok("sync")
    create(a, "Bob upstream", "bob")
    a.ok("sync", ghost="bob")
    create(b, "Bob private plan", "bob", scope="private", body=SECRET)
    journal = journal_of(two, "bob")
    before = journal.read_bytes()
    git(two, "fetch", "-q")
    return Git.of(two), journal, before


@pytest.mark.parametrize("tracked", [True, False], ids=["journal-committed-before", "journal-new-on-both"])
def test_a_ghosts_sync_merges_past_another_ghosts_uncommitted_journal_lines(
    clones: tuple[Path, Path],  # noqa: F811
    tracked: bool,
) -> None:
    one, two = clones
    a, b = Cli(one), Cli(two)
    if tracked:  # bob's month file is in both clones' history already
        create(a, "Bob earlier", "bob")
        a.ok("sync", ghost="bob")
    b.ok("sync")
    create(a, "Bob upstream", "bob")  # bob on clone one: the same month file, pushed
    a.ok("sync", ghost="bob")
    create(b, "Bob private plan", "bob", scope="private", body=SECRET)  # bob on clone two: not synced
    create(b, "Alice fact", "alice")
    journal = journal_of(two, "bob")
    if journal.relative_to(two) != journal_of(one, "bob").relative_to(one):
        pytest.skip("the month turned between the writes: two journal files, no shared one to merge")
    before = journal.read_bytes()
    pending = before[len(committed(two, journal)) :]
    assert pending and b"Bob private plan" in pending

    synced = b("sync", ghost="alice")
    assert synced.exit_code == 0, synced.stdout + synced.stderr
    assert [c["by"] for c in synced.data["commits"]] == ["alice"]
    assert head(two) == head(two, "origin/main")
    # the merged journal, then bob's lines: still uncommitted, bob's to commit
    assert journal.read_bytes() == committed(two, journal) + pending
    assert committed(two, journal) == committed(one, journal_of(one, "bob"))
    status = git(two, "status", "--porcelain", "--untracked-files=all").stdout
    assert journal.relative_to(two).as_posix() in status and "private/bob/Bob private plan.md" in status
    for secret in ("Bob private", "7731", "private/bob", ".vaultmem-journal/bob"):
        assert secret not in told(synced)
    assert not list((two / ".git").glob("vaultmem-*"))  # nothing left aside

    # bob's sync commits them; both clones end with every line of both
    assert [c["by"] for c in b.ok("sync", ghost="bob")["commits"]] == ["bob"]
    a.ok("sync")
    lines = journal_of(one, "bob").read_bytes()
    assert pending in lines and b"Bob upstream" in lines and journal.read_bytes() == lines
    assert git(two, "status", "--porcelain").stdout == ""


def test_a_merge_refused_for_another_reason_puts_the_lines_back_as_they_were(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """bob also has a private note upstream changed and clone two has edited, uncommitted:
    git refuses the merge as before (exit 4, nothing private named), and bob's journal
    file is byte for byte what it was."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    plan = create(a, "Bob plan", "bob", scope="private", body="# Plan\n\nMonday.")
    a.ok("sync", ghost="bob")
    b.ok("sync")
    a.ok("note", "update", plan["id"], "--body", "# Plan\n\nTuesday.", ghost="bob")
    a.ok("sync", ghost="bob")
    b.ok("note", "update", plan["id"], "--body", f"# Plan\n\n{SECRET}.", ghost="bob")  # not committed
    create(b, "Alice fact", "alice")
    journal = journal_of(two, "bob")
    before, note_before = journal.read_bytes(), (two / plan["path"]).read_bytes()
    was = head(two)

    refused = b("sync", ghost="alice")
    assert refused.exit_code == 4, refused.stdout
    assert "git refused" in refused.data["error"]["message"]
    for secret in ("Bob plan", "7731", "private/bob", ".vaultmem-journal/bob"):
        assert secret not in told(refused)
    assert journal.read_bytes() == before and (two / plan["path"]).read_bytes() == note_before
    assert not (two / ".git" / "MERGE_HEAD").exists() and not list((two / ".git").glob("vaultmem-*"))
    assert git(two, "rev-parse", "HEAD~1").stdout.strip() == was  # alice's own commit only
    # bob's own sync then meets his note's conflict as the owner, with every line kept
    b.ok("commit", ghost="bob")
    assert b("sync", ghost="bob").exit_code == 4
    assert set(before.splitlines()) <= set(journal.read_bytes().splitlines())


def test_lines_left_aside_by_a_sync_killed_mid_merge_come_back(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """The set-aside lines are written to a file in the git dir before the journal is cut
    back: a sync killed before it appended them again leaves them there, and the next
    sync puts them back (once: not again where they already are)."""
    from vaultmem.vault.journal_aside import put_back, set_aside

    one, two = clones
    b = Cli(two)
    repo, journal, before = bob_behind_upstream(one, two)
    pending = before[len(committed(two, journal)) :]
    aside = set_aside(repo, "origin/main")  # what sync does before git merges; then killed
    assert aside and journal.read_bytes() == committed(two, journal)
    put_back(repo)
    assert journal.read_bytes() == before
    put_back(repo)  # nothing left: nothing appended twice
    assert journal.read_bytes() == before
    set_aside(repo, "origin/main")  # killed again; the next sync puts them back, then merges
    create(b, "Alice fact", "alice")
    assert b.ok("sync", ghost="alice")["pushed"]
    assert journal.read_bytes() == committed(two, journal) + pending


@pytest.mark.parametrize("committer", [None, "bob"], ids=["person", "bob"])
def test_a_commit_after_a_killed_sync_puts_the_lines_back_first(
    clones: tuple[Path, Path],  # noqa: F811
    committer: str | None,
) -> None:
    """A probe's find: after a sync killed mid-merge, bob's notes had no journal lines, so a
    person's `vaultmem commit` committed them as "memory(hand)" and bob's own commit left
    them out. A commit now puts the lines set aside back first."""
    from vaultmem.vault.journal_aside import left_aside, set_aside

    one, two = clones
    b = Cli(two)
    repo, journal, before = bob_behind_upstream(one, two)
    assert set_aside(repo, "origin/main")  # what sync does before git merges; then killed
    made = b.ok("commit", ghost=committer)["commits"]
    assert not left_aside(repo) and journal.read_bytes() == before
    assert [c["by"] for c in made] == ["bob"]
    shown = git(two, "show", "--name-only", "--format=%an", "HEAD").stdout
    assert "private/bob/Bob private plan.md" in shown and shown.startswith("bob")
