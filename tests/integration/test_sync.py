"""Issue 27, item 2: `vaultmem sync` — commit pending memory changes, merge the upstream in
with the notes' merge driver, push — between clones of one vault (a bare repository as the
remote): both sides' writes arrive, a person's uncommitted edits stop it, a true conflict
stops it before anything is pushed, and a ghost is told only of notes it may read."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration.test_clones_merge import clones, front, git  # noqa: F401  (the fixture)
from tests.integration.test_seen_history import count_histories
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
    told = a("sync", json_=False)  # "exit 4, naming the notes" (README) on a terminal too
    assert told.exit_code == 4 and f"\n  {note['path']}\n" in told.stderr
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
    # undone: alice's note holds no markers, bob's commits go on, and the owner meets it
    assert not (two / ".git" / "MERGE_HEAD").exists()
    assert "<<<<<<<" not in (two / secret["path"]).read_text()
    create(b, "Bob second fact", "bob")
    assert [c["by"] for c in b.ok("commit", ghost="bob")["commits"]] == ["bob"]
    owner = b("sync", ghost="alice")
    assert owner.exit_code == 4 and owner.data["error"]["paths"] == [secret["path"]]


def _push_by_hand(root: Path, *paths: str) -> None:
    """A teammate's commit made with plain git (forced past .gitignore) and pushed."""
    git(root, "add", "-f", "--", *paths)
    git(root, "commit", "-q", "-m", "teammate")
    git(root, "push", "-q", "origin", "HEAD:main")


def test_sync_merges_nothing_that_would_run_a_teammates_code(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """A clone's own state (.vaultmem/: Whoosh's pickled segment lists, the state database)
    pushed by a teammate would be written into this checkout by the merge and loaded by the
    next search; new hooks where core.hooksPath points would run on the merge itself. Both
    stop sync (exit 4) with nothing merged; the vault works as before."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    a.ok("sync")
    b.ok("sync")
    planted = one / ".vaultmem" / "whoosh" / "_MAIN_999.toc"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_bytes(b"not a segment list of this clone's")
    _push_by_hand(one, ".vaultmem/whoosh/_MAIN_999.toc")
    before = head(two)
    refused = b("sync")
    assert refused.exit_code == 4, refused.stdout
    assert ".vaultmem" in refused.data["error"]["message"] and "nothing merged" in refused.data["error"]["message"]
    assert head(two) == before and not (two / ".vaultmem" / "whoosh" / "_MAIN_999.toc").exists()
    assert b.ok("search", "anything", "--mode", "bm25")["results"] is not None
    git(one, "rm", "-q", "-r", "--cached", ".vaultmem")  # untracked upstream, as the message says
    git(one, "commit", "-q", "-m", "untrack")
    git(one, "push", "-q", "origin", "HEAD:main")
    assert b.ok("sync")["pulled"]["commits"] == 2

    git(two, "config", "core.hooksPath", "hooks")  # as the README's pre-commit hook asks
    hook = one / "hooks" / "post-merge"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {two / 'ran-a-teammates-hook'}\n")
    hook.chmod(0o755)
    _push_by_hand(one, "hooks/post-merge")
    before = head(two)
    refused = b("sync")
    assert refused.exit_code == 4 and "hooks" in refused.data["error"]["message"], refused.stdout
    assert head(two) == before and not (two / "ran-a-teammates-hook").exists()
    git(two, "config", "--unset", "core.hooksPath")  # hooks git does not run: an ordinary file
    assert b.ok("sync")["pulled"]["commits"] == 1 and not (two / "ran-a-teammates-hook").exists()


def test_a_file_name_that_is_not_utf8_stops_nothing(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """A teammate's note named in another encoding (`Bad\\xff.md`): every command goes on,
    lint names it (shown with U+FFFD) to those who may see its folder, and sync carries on."""
    import os

    one, two = clones
    a, b = Cli(one), Cli(two)
    a.ok("sync")
    b.ok("sync")
    for folder in ("shared", "private/alice"):
        (one / folder).mkdir(parents=True, exist_ok=True)
        with open(os.fsencode(one / folder) + b"/Bad\xff.md", "wb") as f:
            f.write(b"hello from another encoding\n")
    git(one, "add", "-A")
    git(one, "commit", "-q", "-m", "bad names")
    git(one, "push", "-q", "origin", "HEAD:main")
    assert b.ok("sync")["pulled"]["commits"] == 1
    create(b, "After the bad names", "bob")
    for args in (["index"], ["status"], ["review"], ["search", "hello", "--mode", "bm25"], ["list"], ["sync"]):
        b.ok(*args)
    named = [p["path"] for p in b("lint", ghost="alice").data["problems"] if p["code"] == "name_not_utf8"]
    assert named == ["private/alice/Bad\ufffd.md", "shared/Bad\ufffd.md"]
    named = [p["path"] for p in b("lint", ghost="bob").data["problems"] if p["code"] == "name_not_utf8"]
    assert named == ["shared/Bad\ufffd.md"]  # not alice's


def test_a_write_while_sync_merges_is_never_lost(clones: tuple[Path, Path], tmp_path: Path) -> None:  # noqa: F811
    """git's merge checks a note, runs the driver, then writes its result: a write landing
    in between was lost though it reported success. Here the driver is slowed down and a
    write made while it runs: it waits for the merge (vault/writers.py), and then either
    lands on the merged note or refuses (the note changed since it was read), never lost."""
    import subprocess
    import sys
    import time

    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Raced", "alice", body="First line.\n\nSecond line.")
    a.ok("sync")
    b.ok("sync")
    a.ok("note", "update", made["id"], "--body", "First line, edited upstream.\n\nSecond line.", ghost="alice")
    a.ok("sync")
    b.ok("note", "update", made["id"], "--append", "Bob's earlier line.", ghost="bob")
    b.ok("commit")  # both sides changed the note: a true merge, by the driver
    mark = tmp_path / "merging"
    driver = git(two, "config", "--get", "merge.vaultmem.driver").stdout.strip()
    git(two, "config", "merge.vaultmem.driver", f"touch {mark} && sleep 8 && {driver}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    env.update(VAULTMEM_NO_AUTOSTART="1", VAULTMEM_CACHE_DIR=os.environ["VAULTMEM_CACHE_DIR"])
    syncing = subprocess.Popen([str(Path(sys.executable).parent / "vaultmem"), "sync", "--vault", str(two), "--json"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    until = time.monotonic() + 120
    while not mark.exists() and syncing.poll() is None and time.monotonic() < until:
        time.sleep(0.05)
    assert mark.exists(), syncing.communicate()
    written = b("note", "update", made["id"], "--append", "Words written while sync merged.", ghost="bob")
    out, err = syncing.communicate(timeout=120)
    assert syncing.returncode == 0, (out, err)
    text = (two / made["path"]).read_text()
    assert "edited upstream" in text  # the merge kept the teammate's edit
    if written.exit_code == 0:
        assert "Words written while sync merged." in text  # reported written: it is there
    else:
        assert written.exit_code == 4 and "changed on disk" in written.stdout, written.stdout


def test_a_ghost_is_not_told_of_commits_that_touched_only_notes_hidden_from_it(clones: tuple[Path, Path]) -> None:  # noqa: F811
    one, two = clones
    a, b = Cli(one), Cli(two)
    a.ok("sync")
    b.ok("sync")
    create(a, "Alice's own plan", "alice", scope="private")
    a.ok("sync", ghost="alice")
    only_hers = b.ok("sync", ghost="bob")
    assert only_hers["pulled"]["commits"] == 0 and only_hers["pulled"]["notes"] == 0
    # nor shown one: from and to name commits of his history, and it did not move
    assert only_hers["pulled"]["from"] == only_hers["pulled"]["to"]
    create(a, "A shared fact", "alice")
    a.ok("sync", ghost="alice")
    shared = b.ok("sync", ghost="bob")
    assert shared["pulled"]["commits"] == 1 and shared["pulled"]["notes"] == 1


def test_a_ghosts_sync_reads_its_history_once(clones: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Each read is a `git log` of the whole repository; `from` and `to` read it twice."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    a.ok("sync")
    b.ok("sync")
    create(a, "A fact for both", "alice")
    a.ok("sync", ghost="alice")
    made = count_histories(monkeypatch)
    pulled = b.ok("sync", ghost="bob")["pulled"]
    assert pulled["commits"] == 1 and pulled["from"] != pulled["to"]
    assert len(made) == 1


def test_a_merge_stopped_mid_way_is_named_and_undone_as_the_message_says(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """A merge killed mid-way (kill -9, a power cut) leaves git's index lock and some notes
    rewritten in the work tree. sync and commit stop with exit 4 and name the lock rather
    than pass on git's "remove the file manually"; followed as written, the advice brings
    every edit of the teammate's in."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    first = create(a, "First", "alice", body="# First\n\nOne.")
    second = create(a, "Second", "alice", body="# Second\n\nTwo.")
    a.ok("sync")
    b.ok("sync")
    for made, words in ((first, "One, edited."), (second, "Two, edited.")):
        a.ok("note", "update", made["id"], "--append", words, ghost="alice")
    a.ok("sync")
    git(two, "fetch", "-q")  # the merge got as far as writing the first note, then died
    (two / first["path"]).write_bytes(git(two, "show", f"origin/main:{first['path']}").stdout.encode())
    (two / ".git" / "index.lock").write_bytes(b"")
    before = head(two)
    for args in (["sync"], ["commit"]):
        stopped = b(*args)
        assert stopped.exit_code == 4, stopped.stdout
        message = stopped.data["error"]["message"]
        assert ".git/index.lock" in message and "git stash" in message, message
    assert head(two) == before
    (two / ".git" / "index.lock").unlink()
    git(two, "stash", "-q")
    b.ok("sync")
    for made, words in ((first, "One, edited."), (second, "Two, edited.")):
        assert words in (two / made["path"]).read_text()
    assert head(two) == head(one)


def test_a_remote_gone_is_named_with_what_to_check(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """git ends a failed fetch with advice whose last line ("and the repository exists.")
    said nothing; sync names git's own reason and what to check, to a ghost too (a fetch
    names no note), and nothing is merged."""
    one, _two = clones
    a = Cli(one)
    create(a, "Before the remote went", "alice")
    a.ok("sync")
    origin = one.parent / "origin.git"
    origin.rename(one.parent / "moved.git")
    before = head(one)
    for ghost in (None, "alice"):
        gone = a("sync", ghost=ghost) if ghost else a("sync")
        assert gone.exit_code == 4, gone.stdout
        message = gone.data["error"]["message"]
        assert "does not appear to be a git repository" in message and "git remote -v" in message, message
        assert "and the repository exists" not in message
    assert head(one) == before


def test_a_push_refused_because_the_remote_moved_is_told_apart(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """The retry of sync's push looks for git's reason in everything git said, not in the
    one line an error message shows (vault/git.py _reason picks `error: failed to push`)."""
    from vaultmem.services.sync import _moved_meanwhile
    from vaultmem.vault.git import Git, GitError

    one, two = clones
    create(Cli(one), "Theirs first", "alice")
    Cli(one).ok("sync")
    git(two, "commit", "-q", "--allow-empty", "-m", "ours")
    with pytest.raises(GitError) as refused:
        Git.of(two).run("push", "--quiet", "origin", "HEAD:main")
    assert str(refused.value).startswith("git push failed: error:"), str(refused.value)
    assert _moved_meanwhile(refused.value.stderr)


def _trashed(root: Path) -> list[str]:
    return (
        sorted(str(p.relative_to(root)) for p in (root / ".trash").rglob("*.md")) if (root / ".trash").is_dir() else []
    )


@pytest.mark.parametrize("editor_first", [True, False])
def test_an_edit_that_crossed_a_delete_brings_the_note_back(clones: tuple[Path, Path], editor_first: bool) -> None:  # noqa: F811
    """One clone edits a note while another deletes it. git's merge carried the edit into
    .trash/ with the delete's rename, where nobody reads it: now sync brings the note back
    where it was, the edit in it, on whichever clone merges the two, and says so."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Plan", "alice", body="# Plan\n\nLine one.")
    a.ok("sync")
    b.ok("sync")
    a.ok("note", "update", made["id"], "--append", "Added by one after the other deleted it.", ghost="alice")
    b.ok("note", "delete", made["id"], ghost="alice")
    first, second = (a, b) if editor_first else (b, a)
    first.ok("sync")
    merged = second.ok("sync")
    assert merged["pulled"]["commits"] == 2  # the other side's commit and the merge; not the restore
    (crossed,) = merged["crossed"]
    assert crossed["path"] == made["path"] and crossed["restored"] is True
    assert crossed["trashed_to"].startswith(".trash/") and crossed["trashed_to"].endswith(made["path"])
    first.ok("sync")
    for root in (one, two):
        assert "Added by one after the other deleted it." in (root / made["path"]).read_text()
        assert _trashed(root) == [] and git(root, "status", "--porcelain").stdout == ""
    assert head(one) == head(two)
    assert a.ok("get", made["id"], ghost="alice")["note"]["path"] == made["path"]
    assert b.ok("sync")["crossed"] == []  # told once


def test_a_crossed_edit_is_kept_in_the_trash_where_a_note_took_the_path(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """A note written at the path between the merge and the restore is never replaced: the
    edited copy stays in the trash, reported with restored false, and nothing is committed."""
    from vaultmem.services.crossings import Crossing, keep_crossed_edits
    from vaultmem.vault.git import Git

    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Plan", "alice", body="# Plan\n\nLine one.")
    a.ok("sync")
    b.ok("sync")
    a.ok("note", "update", made["id"], "--append", "The edit.", ghost="alice")
    a.ok("sync")
    trashed = b.ok("note", "delete", made["id"], ghost="alice")["trashed_to"]
    b.ok("commit", ghost="alice")
    ours = head(two)
    git(two, "fetch", "-q")
    base = git(two, "merge-base", "HEAD", "origin/main").stdout.strip()
    git(two, "merge", "-q", "--no-edit", "origin/main")
    (two / made["path"]).write_text("# Plan\n\nA person's new note at the same path.\n")
    merged = head(two)
    kept = keep_crossed_edits(Git.of(two), base, ours, "origin/main")
    assert kept.crossings == [Crossing(made["path"], trashed, False)] and kept.commit is None
    assert "The edit." in (two / trashed).read_text()
    assert "A person's new note" in (two / made["path"]).read_text() and head(two) == merged


def test_a_ghost_is_not_told_of_a_crossing_in_a_note_hidden_from_it(clones: tuple[Path, Path]) -> None:  # noqa: F811
    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Secret plan", "alice", scope="private", body="# Secret plan\n\nCode 4471.")
    a.ok("sync", ghost="alice")
    b.ok("sync")
    a.ok("note", "update", made["id"], "--append", "Code changed to 9912.", ghost="alice")
    a.ok("sync", ghost="alice")
    b.ok("note", "delete", made["id"], ghost="alice")
    b.ok("commit", ghost="alice")
    told = b.ok("sync", ghost="bob")
    assert told["crossed"] == [] and "Secret" not in json.dumps(told) and "4471" not in json.dumps(told)
    assert "9912" in (two / made["path"]).read_text()  # kept all the same: the merge's, not bob's
    assert b.ok("sync", ghost="alice")["crossed"] == []


def test_links_rewritten_by_a_move_bring_no_deleted_note_back(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """A move on one clone rewrites the links in notes that point at the moved one; a note
    the other clone deleted meanwhile had nobody's words changed, and stays deleted
    (found by review: `note move` and `fix-names` undid deletes)."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    plan = create(a, "Plan", "alice", body="# Plan\n\nSee [[Budget]] for money.")
    budget = create(a, "Budget", "alice", body="# Budget\n\nMoney.")
    a.ok("sync")
    b.ok("sync")
    b.ok("note", "delete", plan["id"], ghost="alice")
    b.ok("sync")
    moved = a.ok("note", "move", budget["id"], "shared/Finance/Budget 2026.md", ghost="alice")
    assert moved["links_updated"] == [plan["path"]]
    assert a.ok("sync")["crossed"] == []
    assert not (one / plan["path"]).exists() and len(_trashed(one)) == 1


def test_a_note_both_clones_deleted_merges_with_both_trash_copies(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """Two agents on two machines retire the same memory: each delete moved it into a trash
    folder of its own, and git stopped on the two renames (found by review). Both copies
    are kept, the note stays deleted, and the merge goes through."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Stale", "alice", body="# Stale\n\nOld news.")
    a.ok("sync")
    b.ok("sync")
    a.ok("note", "delete", made["id"], ghost="alice")
    b.ok("note", "delete", made["id"], ghost="bob")
    a.ok("sync")
    merged = b.ok("sync")
    assert merged["crossed"] == [] and merged["pushed"] is True
    a.ok("sync")
    for root, cli in ((one, a), (two, b)):
        assert not (root / made["path"]).exists() and len(_trashed(root)) == 2
        assert git(root, "status", "--porcelain").stdout == ""
        assert cli.ok("trash", "list")["count"] == 2
    assert head(one) == head(two)


def test_a_delete_crossing_a_move_stops_sync_with_what_happened(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """A note deleted on one clone and moved on the other is a person's call: sync stops,
    and the message no longer speaks of conflict markers there are none of."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Draft", "alice", body="# Draft\n\nText.")
    a.ok("sync")
    b.ok("sync")
    a.ok("note", "delete", made["id"], ghost="alice")
    b.ok("note", "move", made["id"], "shared/Kept/Draft.md", ghost="alice")
    a.ok("sync")
    stopped = b("sync")
    assert stopped.exit_code == 4, stopped.stdout
    message = stopped.data["error"]["message"]
    assert "deleted, moved or added" in message and "markers" not in message, message
    assert made["path"] in stopped.data["error"]["paths"]


def test_an_edit_that_crossed_an_obsidian_delete_brings_the_note_back(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """Obsidian's own delete moves a note to `.trash/<name>` (no time folder, no path): the
    one deleted note of that name is where it came from."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Groceries", "alice", body="# Groceries\n\nMilk.")
    a.ok("sync")
    b.ok("sync")
    a.ok("note", "update", made["id"], "--append", "Eggs, added by the agent.", ghost="alice")
    (two / ".trash").mkdir(exist_ok=True)
    git(two, "mv", made["path"], ".trash/Groceries.md")  # what Obsidian's delete does on disk
    git(two, "commit", "-q", "-m", "deleted in Obsidian")
    a.ok("sync")
    (crossed,) = b.ok("sync")["crossed"]
    assert crossed == {"path": made["path"], "trashed_to": ".trash/Groceries.md", "restored": True}
    assert "Eggs, added by the agent." in (two / made["path"]).read_text()
    assert not (two / ".trash" / "Groceries.md").exists()


def test_both_deletes_of_a_note_both_edited_keep_each_sides_own_words(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """Both clones changed the same line, then each deleted the note: git's conflict wrote
    one text, markers and all, into both trash copies (found by review). Each copy now holds
    its own side's words; a pre-commit hook that would refuse does not stop the merge (git
    merge runs none)."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Plan", "alice", body="# Plan\n\nLine one.\n\nLine two.\n\nLine three.")
    a.ok("sync")
    b.ok("sync")
    for root, cli, who in ((one, a, "ONE"), (two, b, "TWO")):
        a_path = root / made["path"]
        a_path.write_text(a_path.read_text().replace("Line two.", f"Line two, by {who}."))
        git(root, "commit", "-q", "-a", "-m", f"{who} edits")
        cli.ok("note", "delete", made["id"], ghost="alice")
    (two / "hooks").mkdir(exist_ok=True)
    (two / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 1\n")
    (two / "hooks" / "pre-commit").chmod(0o755)
    git(two, "config", "core.hooksPath", "hooks")
    git(two, "add", "hooks/pre-commit")
    git(two, "commit", "-q", "--no-verify", "-m", "a guard")
    a.ok("sync")
    b.ok("sync")
    copies = {p.read_text().count("Line two, by ONE.") + 2 * p.read_text().count("Line two, by TWO.")
              for p in (two / ".trash").rglob("*.md")}  # fmt: skip
    assert copies == {1, 2}  # one copy each, no copy holding both
    assert all(not has_conflict_markers(p.read_text()) for p in (two / ".trash").rglob("*.md"))


def test_a_persons_file_in_the_trash_is_never_taken_for_a_deleted_note(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """A note moved elsewhere is not deleted, and a file that only turned up in `.trash/`
    (a person's discarded draft of the same name) is no note's: nothing is brought back
    (found by review: the draft took the note's place and was pushed)."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Plan", "alice", body="# Plan\n\nLine.")
    a.ok("sync")
    b.ok("sync")
    b.ok("note", "move", made["id"], "shared/Projects/Plan.md", ghost="alice")
    (two / ".trash").mkdir(exist_ok=True)
    (two / ".trash" / "Plan.md").write_text("MY PRIVATE DRAFT: salary numbers\n")
    git(two, "add", "-f", ".trash/Plan.md")
    git(two, "commit", "-q", "-m", "draft")
    b.ok("sync")
    a.ok("note", "update", made["id"], "--append", "Edited on one.", ghost="alice")
    assert a.ok("sync")["crossed"] == []
    assert not (one / made["path"]).exists() and (one / ".trash" / "Plan.md").exists()


def test_a_clone_with_no_commits_yet_is_told_what_to_do(tmp_path: Path) -> None:
    """A vault just made a repository, a remote added, nothing committed: sync said
    "git rev-parse failed: ambiguous argument 'HEAD'" (found by review). The advice, as
    written, gets it syncing."""
    fresh = tmp_path / "fresh"
    Cli(tmp_path)("init", str(fresh), "--ghost", "alice")
    git(fresh, "init", "-q", "-b", "main")
    git(fresh, "remote", "add", "origin", str(tmp_path / "empty.git"))
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "empty.git"))
    Cli(fresh).ok("git", "setup")
    told = Cli(fresh)("sync")
    assert told.exit_code == 5 and "no commits yet" in told.data["error"]["message"], told.stdout
    Cli(fresh).ok("commit")
    git(fresh, "push", "-q", "-u", "origin", "HEAD")
    assert Cli(fresh).ok("sync")["pushed"] is True


def test_a_ghosts_writes_around_a_sync_stay_the_ghosts(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """After a sync the journal interleaves both clones' lines, and review takes the lines
    since the merge commit by the second: a write in that second once looked like it found
    a person's edit (review listed `hand`, commit made it the person's and the next sync
    refused). Found by review; the lines land in one second when the calls come quickly."""
    one, two = clones
    a, b = Cli(one), Cli(two)
    made = create(a, "Shared list", "alice", body="Milk.")
    a.ok("sync")
    b.ok("sync")
    a.ok("note", "update", made["id"], "--append", "alice adds", ghost="alice")
    a.ok("sync")
    b.ok("note", "update", made["id"], "--add-tag", "x", ghost="bob")
    b.ok("sync")
    b.ok("note", "update", made["id"], "--append", "bob adds", ghost="bob")
    change = next(c for c in b.ok("review")["changes"] if c["path"] == made["path"])
    assert "hand" not in change["by"] and change["by"][-1] == "bob", change
    b.ok("sync")  # nothing held back as a person's


def test_a_ghosts_sync_stops_at_a_persons_uncommitted_edit_it_may_see(clones: tuple[Path, Path]) -> None:  # noqa: F811
    """It committed its own and merged over the person's edit, or failed with git's words
    and no note named (a reviewer's find); it now stops as a person's sync does, naming the
    notes it may see, and never commits the person's words itself."""
    one, _two = clones
    a = Cli(one)
    note = create(a, "Shared fact", "alice", body="Agent text.")
    hidden = create(a, "Bob plan", "bob", scope="private", body="Plan.")
    a.ok("sync")
    for made in (note, hidden):
        path = one / made["path"]
        path.write_text(path.read_text() + "\nA line the person typed.\n")
    create(a, "Alice new fact", "alice")
    before = head(one)
    refused = a("sync", ghost="alice")
    assert refused.exit_code == 4 and refused.data["error"]["paths"] == [note["path"]]  # bob's not named
    assert head(one) == before
    done = a.ok("sync", "--include-hand-edits", ghost="alice")
    assert [c["by"] for c in done["commits"]] == ["alice"]  # the person's words stay theirs to commit
    assert note["path"] in git(one, "status", "--porcelain").stdout
