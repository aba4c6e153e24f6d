"""Issue 25 as an attacker tries it (found by a review of the change): a ghost must not
reach another ghost's notes through revert, history, get --at or review's flags; commit
must not commit secrets, half-finished merges or files that are not memory; and the
journal's attribution must hold for moves and renames."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration.test_git_review import AWS, create, git, repo  # noqa: F401 (fixture)


def test_revert_never_writes_a_note_moved_out_of_the_reverters_view(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    wiki = create(cli, "Wiki", "Original.", source="x")
    cli.ok("commit")
    cli.ok("note", "update", wiki["id"], "--body", "Alice's words.", ghost="alice")
    (sha,) = [c["sha"] for c in cli.ok("commit")["commits"]]
    (repo / "private" / "bob").mkdir(parents=True, exist_ok=True)
    hidden = repo / "private" / "bob" / "Wiki.md"
    (repo / wiki["path"]).rename(hidden)  # a person moves it into bob's private notes
    hidden.write_text(hidden.read_text().replace("Alice's words.", "Bob's private words."))
    assert cli("commit").exit_code == 1  # a move across scopes by hand: held for the person
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the person moves it, knowingly")
    res = cli("revert", sha, ghost="alice")
    assert "private/bob" not in res.stdout and "Bob's private" not in res.stdout
    assert "Bob's private words." in hidden.read_text()


def test_history_and_get_at_stop_where_the_note_came_into_view(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    made = create(cli, "Draft plan", "Salary of Carol is 200k.", ghost="bob", scope="private", source="x")
    cli.ok("commit")
    cli.ok("note", "update", made["id"], "--body", "A plan for everyone.", ghost="bob")
    cli.ok("commit")
    git(repo, "mv", made["path"], "shared/Draft plan.md")  # a person shares it
    git(repo, "commit", "-qm", "share the plan")
    seen = json.dumps(cli.ok("history", made["id"], ghost="alice"))
    assert "private/bob" not in seen and "Salary" not in seen
    for rev in ("HEAD~1", "HEAD~2"):
        res = cli("get", made["id"], "--at", rev, ghost="alice")
        assert res.exit_code == 3 and "Salary" not in res.stdout
    assert "Salary" in cli.ok("get", made["id"], "--at", "HEAD~2", ghost="bob")["body"]


def test_review_flags_do_not_tell_a_hidden_title_from_a_missing_one(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    create(cli, "Bob secret plan", "Hidden.", ghost="bob", scope="private", source="x")
    cli.ok("commit")
    create(cli, "Links", "See [[Bob secret plan]] and [[Nonexistent thing]].", ghost="alice", type="note")
    flags = {c["title"]: c["flags"] for c in cli.ok("review", ghost="alice")["changes"]}
    (dangling,) = [f for f in flags["Links"] if f["code"] == "dangling_link"]
    assert "[[Bob secret plan]]" in dangling["reason"] and "[[Nonexistent thing]]" in dangling["reason"]


def test_the_hook_checks_everything_staged_whoever_commits(tmp_path: Path) -> None:
    from tests.integration.test_git_hooks import bare_git

    root = tmp_path / "v"
    Cli(tmp_path).ok("init", str(root), "--ghost", "alice", "--ghost", "bob", vault=False)
    config = root / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "auto"', 'backend = "none"'))
    for args in (["init", "-q"], ["config", "core.hooksPath", "hooks"], ["add", "-A"], ["commit", "-qm", "init"]):
        assert bare_git(root, *args).returncode == 0
    (root / "private" / "bob" / "Keys.md").write_text(f"key {AWS}\n")
    assert bare_git(root, "add", "-A").returncode == 0
    env = {"HOME": str(root), "VAULTMEM_GHOST": "alice", "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@x",
           "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@x"}  # fmt: skip
    out = subprocess.run(["git", "commit", "-m", "x"], cwd=root, capture_output=True, text=True, env=env)
    assert out.returncode != 0 and AWS not in out.stdout + out.stderr


def test_commit_holds_back_secrets_and_commits_only_memory(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    create(cli, "Clean", "A clean fact.", source="x")
    (repo / "shared" / "Keys.md").write_text(f"The key is {AWS}.\n")
    (repo / "notes.txt").write_text("scratch, not memory\n")
    (repo / "shared" / "Whatever.md").write_text("a person's draft\n")
    res = cli("commit")
    assert res.exit_code == 1 and [h["path"] for h in res.data["held"]] == ["shared/Keys.md"]
    committed = git(repo, "log", "--name-only", "--format=").split()
    assert "shared/Keys.md" not in committed and "notes.txt" not in committed
    assert "shared/Clean.md" in committed
    status = git(repo, "status", "--porcelain", "-uall")
    assert "?? notes.txt" in status and "?? shared/Keys.md" in status


def test_commit_keeps_the_persons_staging(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    (repo / "other.txt").write_text("staged by the person\n")
    git(repo, "add", "other.txt")
    made = create(cli, "Kites", "Kites fly.", ghost="alice", source="x")
    cli.ok("commit")
    assert git(repo, "log", "-1", "--name-only", "--format=").split() == [
        ".vaultmem-journal/alice/" + next((repo / ".vaultmem-journal" / "alice").iterdir()).name,
        made["path"],
    ]
    assert "A  other.txt" in git(repo, "status", "--porcelain", "-uall")  # still staged, not committed


def test_commit_refuses_in_the_middle_of_a_merge(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    made = create(cli, "Plan", "Meet on Monday.", source="x")
    cli.ok("commit")
    git(repo, "checkout", "-q", "-b", "other")
    path = repo / made["path"]
    path.write_text(path.read_text().replace("Monday", "Friday"))
    git(repo, "commit", "-qam", "friday")
    git(repo, "checkout", "-q", "-")
    path.write_text(path.read_text().replace("Monday", "Tuesday"))
    git(repo, "commit", "-qam", "tuesday")
    assert subprocess.run(["git", "merge", "other"], cwd=repo, capture_output=True, env={**os.environ}).returncode
    res = cli("commit")
    assert res.exit_code == 4 and "middle of" in res.data["error"]["message"]
    assert "UU" in git(repo, "status", "--porcelain")


def test_a_vaultmem_move_is_the_movers_and_history_follows_an_uncommitted_rename(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    made = create(cli, "Moving", "Text.", ghost="alice", source="x")
    cli.ok("commit")
    cli.ok("note", "move", made["id"], "Moved", ghost="bob")
    (change,) = cli.ok("review")["changes"]
    assert (change["kind"], change["by"]) == ("moved", ["bob"])
    versions = cli.ok("history", made["id"])["versions"]
    assert [v["kind"] for v in versions] == ["moved", "created"]


@pytest.mark.parametrize("bad", [b"caf\xe9 by hand\n"])
def test_revert_leaves_a_note_that_is_not_utf8(repo: Path, bad: bytes) -> None:  # noqa: F811
    cli = Cli(repo)
    made = create(cli, "Latin", "Words.", source="x")
    cli.ok("commit")
    cli.ok("note", "update", made["id"], "--body", "Agent words.", ghost="bob")
    (sha,) = [c["sha"] for c in cli.ok("commit")["commits"]]
    path = repo / made["path"]
    data = path.read_bytes().replace(b"Agent words.", bad.strip())
    path.write_bytes(data)
    res = cli("revert", sha, ghost="bob")
    assert res.exit_code == 4 and path.read_bytes() == data


@pytest.mark.parametrize(
    "rev",
    [
        "HEAD^{/planning the q}",
        "HEAD^{/memory.bob.: 1 created}",
        ":/planning",
        "HEAD:private/bob/Bob plan.md",
        ":private/bob/Bob plan.md",
        ":0:private/bob/Bob plan.md",
        "HEAD@{0}^{/planning}",
        "HEAD^{/planning}~1..HEAD^{/planning}",
    ],
)
def test_a_revision_cannot_search_commit_messages_or_name_a_path(repo: Path, rev: str) -> None:  # noqa: F811
    """An attacker's walk: HEAD^{/text} answered whether any commit message (bob's --reason,
    counts of his private notes) holds the text, a character at a time; REV:path whether a
    path exists. Every command that takes a revision refuses them alike, matching or not."""
    cli = Cli(repo)
    hub = create(cli, "Shared hub", "hub", ghost="alice", source="x")
    cli.ok("commit")
    cli.ok(
        "note", "create", "--title", "Bob plan", "--type", "fact", "--scope", "private", "--body", "p",
        "--reason", "planning the heist", ghost="bob",
    )  # fmt: skip
    cli.ok("commit")
    for args in (("get", hub["id"], "--at", rev), ("review", rev), ("revert", rev, "--dry-run")):
        res = cli(*args, ghost="alice")
        assert res.exit_code == 5 and "is not a revision" in res.stdout, (args, res.stdout)


@pytest.mark.parametrize(
    "rev",
    [
        "HEAD",
        "HEAD~1",
        "HEAD^",
        "HEAD@{0}",
        "HEAD@{1}",
        "HEAD~1..HEAD",
        "HEAD@{1 hour ago}",
        "HEAD@{2999-01-01 00:00:00}",
    ],
)
def test_plain_revisions_still_resolve(repo: Path, rev: str) -> None:  # noqa: F811
    cli = Cli(repo)
    create(cli, "Shared hub", "hub", ghost="alice", source="x")
    cli.ok("commit")
    create(cli, "Second", "two", ghost="alice", source="x")
    cli.ok("commit")
    res = cli("review", rev)  # a person's revisions are git's
    assert res.exit_code == 0, res.stdout
    if "@{1}" not in rev:  # the reflog's Nth entry counts every ghost's commits: a person's
        res = cli("review", rev if "@{" not in rev or ".." in rev else f"{rev}..HEAD", ghost="alice")
        assert res.exit_code == 0, res.stdout
