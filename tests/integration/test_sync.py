"""Issue 27, item 2: `vaultmem sync` — commit pending memory changes, merge the upstream in
with the notes' merge driver, push — between clones of one vault (a bare repository as the
remote): both sides' writes arrive, a person's uncommitted edits stop it, a true conflict
stops it before anything is pushed, and a ghost is told only of notes it may read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration.test_clones_merge import clones, front, git  # noqa: F401  (the fixture)
from vaultmem.vault.frontmatter import split_document
from vaultmem.vault.merge import has_conflict_markers

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

GIT_ENV = {"GIT_AUTHOR_NAME": "Pat", "GIT_AUTHOR_EMAIL": "pat@example.com",
           "GIT_COMMITTER_NAME": "Pat", "GIT_COMMITTER_EMAIL": "pat@example.com"}  # fmt: skip


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def head(root: Path, rev: str = "HEAD") -> str:
    return git(root, "rev-parse", rev).stdout.strip()


def create(cli: Cli, title: str, ghost: str, scope: str = "shared", body: str = "Text.") -> dict[str, str]:
    return cli.ok("note", "create", "--title", title, "--type", "fact", "--scope", scope, "--body", body,
                  "--source", "x", ghost=ghost)  # fmt: skip


def test_sync_commits_merges_and_pushes_both_ways(clones: tuple[Path, Path]) -> None:  # noqa: F811
    one, two = clones
    a, b = Cli(one), Cli(two)
    note = create(a, "Shared fact", "alice", body="# Shared fact\n\nFirst.\n\n## End\n\nLast.")
    first = a.ok("sync")
    assert [c["by"] for c in first["commits"]] == ["alice"] and first["pushed"] is True
    assert first["upstream"] == "origin/main" and first["pulled"]["commits"] == 0
    assert head(one) == head(one, "origin/main")
    got = b.ok("sync")
    assert got["commits"] == [] and got["pulled"]["notes"] == 1 and (two / note["path"]).exists()
    for i in range(25):  # both sides write, many to the same note
        a.ok("note", "update", note["id"], "--add-tag", f"one-{i}", ghost="alice")
        b.ok("note", "comment", note["id"], "--text", f"bob {i}", ghost="bob")
        create(a, f"Alice {i}", "alice")
        create(b, f"Bob {i}", "bob")
    assert a.ok("sync")["pushed"]
    merged = b.ok("sync")  # merges one's writes into two's by the driver, then pushes
    assert merged["pulled"]["notes"] >= 26 and {c["by"] for c in merged["commits"]} == {"bob"}
    back = a.ok("sync")
    assert back["pulled"]["notes"] >= 26
    assert head(one) == head(two) == head(one, "origin/main")
    for root in (one, two):
        assert git(root, "status", "--porcelain").stdout == ""
        assert all((root / "shared" / f"{who} {i}.md").exists() for who in ("Alice", "Bob") for i in range(25))
        fm = front(root / note["path"])
        assert {f"one-{i}" for i in range(25)} <= set(fm["tags"])
        assert len(fm["comments"]) == 25
        assert not has_conflict_markers(split_document((root / note["path"]).read_text()).body)
        assert Cli(root)("lint").exit_code == 0
    # nothing new on either side: a sync is a no-op that still succeeds
    again = a.ok("sync")
    assert again["commits"] == [] and again["pulled"] == {**again["pulled"], "commits": 0, "notes": 0}


def test_a_persons_uncommitted_edit_stops_sync_until_included(clones: tuple[Path, Path]) -> None:  # noqa: F811
    one, _two = clones
    a = Cli(one)
    note = create(a, "Person's note", "alice", body="Agent text.")
    a.ok("sync")
    path = one / note["path"]
    path.write_text(path.read_text() + "\nA line the person typed in Obsidian.\n")
    create(a, "Agent's new fact", "alice")
    before = head(one)
    refused = a("sync")
    assert refused.exit_code == 4 and refused.data["error"]["code"] == "conflict"
    assert refused.data["error"]["paths"] == [note["path"]]
    assert head(one) == before  # nothing committed, nothing pulled or pushed
    done = a.ok("sync", "--include-hand-edits")
    assert {c["by"] for c in done["commits"]} == {"alice", "hand"}
    assert git(one, "status", "--porcelain").stdout == ""
    assert git(one, "log", "-1", "--format=%an", "--", note["path"]).stdout.strip() == "Pat"  # the person's commit
    assert head(one) == head(one, "origin/main")


def test_a_true_conflict_stops_sync_with_the_note_named_and_nothing_pushed(clones: tuple[Path, Path]) -> None:  # noqa: F811
    one, two = clones
    a, b = Cli(one), Cli(two)
    note = create(a, "Plan", "alice", body="# Plan\n\nMeet on Monday.")
    a.ok("sync")
    b.ok("sync")
    a.ok("note", "update", note["id"], "--body", "# Plan\n\nMeet on Tuesday.", ghost="alice")
    b.ok("note", "update", note["id"], "--body", "# Plan\n\nMeet on Friday.", ghost="bob")
    a.ok("sync")
    remote = head(one, "origin/main")
    stopped = b("sync")
    assert stopped.exit_code == 4 and stopped.data["error"]["paths"] == [note["path"]]
    assert "git commit" in stopped.data["error"]["message"]
    assert head(two, "origin/main") == remote and git(two, "ls-remote", "origin", "main").stdout.startswith(remote)
    body = split_document((two / note["path"]).read_text()).body
    assert has_conflict_markers(body) and "Tuesday" in body and "Friday" in body
    assert b("sync").exit_code == 4  # mid-merge: a person finishes it first
    # the person resolves it; the next sync pushes the merge
    path = two / note["path"]
    path.write_text(path.read_text().replace("<<<<<<<", "").split("=======")[0].replace(">>>>>>>", ""))
    git(two, "add", "-A")
    git(two, "commit", "-qm", "resolved")
    assert b.ok("sync")["pushed"] and head(two) == head(two, "origin/main")


def test_sync_needs_an_upstream_and_the_merge_driver(tmp_path: Path, clones: tuple[Path, Path]) -> None:  # noqa: F811
    one, _two = clones
    lone = tmp_path / "lone"
    shutil.copytree(one, lone)
    git(lone, "remote", "remove", "origin")
    no_remote = Cli(lone)("sync")
    assert no_remote.exit_code == 5 and "no remote" in no_remote.data["error"]["message"]
    git(one, "checkout", "-qb", "topic")
    no_upstream = Cli(one)("sync")
    assert no_upstream.exit_code == 5 and "upstream" in no_upstream.data["error"]["message"]
    git(one, "checkout", "-q", "main")
    # the driver's definition is this clone's config: sync sets it when missing
    git(one, "config", "--unset", "merge.vaultmem.driver")
    assert Cli(one).ok("sync")["pushed"]
    assert "merge-driver" in git(one, "config", "--get", "merge.vaultmem.driver").stdout
    # notes not sent to the driver would merge line by line, markers in front matter: refused
    attributes = one / ".gitattributes"
    attributes.write_text(attributes.read_text().replace("*.md merge=vaultmem", ""))
    git(one, "commit", "-qam", "no driver")
    refused = Cli(one)("sync")
    assert refused.exit_code == 5 and "vaultmem git setup" in refused.data["error"]["message"]


def test_a_ghost_syncs_its_own_changes_and_hears_only_of_notes_it_may_read(clones: tuple[Path, Path]) -> None:  # noqa: F811
    one, two = clones
    a, b = Cli(one), Cli(two)
    secret = create(a, "Alice private plan", "alice", scope="private", body="# Plan\n\nMonday.")
    a.ok("sync")
    b.ok("sync")
    # bob's ghost commits bob's changes only; alice's pending change stays for her
    create(b, "Bob fact", "bob")
    b.ok("note", "update", secret["id"], "--body", "# Plan\n\nFriday.", ghost="alice")
    mine = b.ok("sync", ghost="bob")
    assert [c["by"] for c in mine["commits"]] == ["bob"]
    assert all(not p.startswith("alice/") for c in mine["commits"] for p in c["paths"])
    assert secret["path"] in git(two, "status", "--porcelain").stdout  # still alice's to commit
    # the upstream changes alice's private note: the merge would overwrite her pending edit
    a.ok("note", "update", secret["id"], "--body", "# Plan\n\nTuesday.", ghost="alice")
    a.ok("sync")
    refused = b("sync", ghost="bob")
    assert refused.exit_code == 4 and "private" not in refused.stdout + refused.stderr
    assert "alice/" not in refused.stdout + refused.stderr  # git's words would list the file
    # alice's side committed: now a true conflict on her note, which bob is not told of
    b.ok("commit", ghost="alice")
    stopped = b("sync", ghost="bob")
    assert stopped.exit_code == 4 and stopped.data["error"]["paths"] == []
    assert "alice/" not in stopped.stdout + stopped.stderr
