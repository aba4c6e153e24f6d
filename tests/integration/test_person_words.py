"""A person's words in a note vaultmem did not write (made in Obsidian or vim, a note of an
adopted vault) are never replaced by an agent that has not read them, and stay the person's
in review and commits when an agent adds to the note before the person commits.

Found by a newcomer's walk through the README: `note update --ghost alice --body` replaced a
hand-made note outright, and an append on top of a person's uncommitted edit made the edit
alice's commit, pushed by `sync` past its refusal of uncommitted hand edits."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration.test_git_review import PERSON, git, repo  # noqa: F401  (repo: the fixture)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

WORDS = "My own thoughts on tomatoes: water them at dawn."


@pytest.mark.parametrize(
    "text",
    [
        f"{WORDS}\n",  # no front matter at all
        f"---\ntags: [veg]\n---\n{WORDS}\n",  # Obsidian properties, no vaultmem fields
        f"---\ntitle: Tomatoes\nversion: 3\n---\n{WORDS}\n",  # a version, but no hash: not vaultmem's body
    ],
    ids=["plain", "properties", "version-no-hash"],
)
@pytest.mark.parametrize(
    "edit",
    [["--body", "agent text"], ["--replace-section", "Notes", "--body", "x"]],
    ids=["body", "section"],
)
def test_an_agent_never_replaces_a_hand_made_note_unread(repo: Path, text: str, edit: list[str]) -> None:  # noqa: F811
    cli = Cli(repo)
    path = repo / "shared" / "Tomatoes.md"
    path.write_text(text)
    refused = cli("note", "update", "Tomatoes", *edit, ghost="alice")
    assert refused.exit_code == 4, refused.stdout
    error = refused.data["error"]
    assert error["code"] == "conflict" and "expect_version" in error["message"]
    assert path.read_text() == text  # nothing written
    # having read it, the agent may replace it: the version it read is the one it states
    seen = cli.ok("get", "Tomatoes", ghost="alice")
    assert seen["note"]["version"] == error["current_version"]
    cli.ok("note", "update", "Tomatoes", *edit, "--expect-version", str(seen["note"]["version"]), ghost="alice")
    # without a ghost, the person's own CLI writes as before
    cli.ok("note", "update", "Tomatoes", "--append", "Person again.")


def test_a_ghosts_append_over_a_persons_edit_leaves_the_edit_theirs(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    made = cli.ok(
        "note", "create", "--title", "Plan", "--type", "note", "--scope", "shared", "--body", "Original plan.",
        ghost="alice",
    )  # fmt: skip
    cli.ok("commit")
    path = repo / made["path"]
    path.write_text(path.read_text().replace("Original plan.", "Original plan. PERSON: do not ship on Friday."))
    cli.ok("note", "update", "Plan", "--append", "alice note", ghost="alice")

    change = next(c for c in cli.ok("review")["changes"] if c["path"] == made["path"])
    assert change["by"] == ["hand", "alice"]
    # sync's refusal of uncommitted hand edits holds: the note is the person's to commit
    cli.ok("git", "setup", json_=False)
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "merge driver")
    git(repo, "init", "-q", "--bare", str(repo.parent / "remote.git"))
    git(repo, "remote", "add", "origin", str(repo.parent / "remote.git"))
    git(repo, "push", "-q", "-u", "origin", "HEAD")
    refused = cli("sync")
    assert refused.exit_code == 4 and made["path"] in refused.data["error"]["paths"]
    # alice's own commit leaves it alone; the person's commit takes it, alice's line included
    mine = cli.ok("commit", ghost="alice")
    assert all(made["path"] not in c["paths"] for c in mine["commits"])
    theirs = cli.ok("commit")
    assert [c["by"] for c in theirs["commits"] if made["path"] in c["paths"]] == ["hand"]
    assert git(repo, "log", "-1", "--format=%an", "--", made["path"]).strip() == PERSON["GIT_AUTHOR_NAME"]
    # alice's line is in it: she is named beside the person, not left out of the record
    assert "Co-authored-by: alice <alice@vaultmem>" in git(repo, "log", "-1", "--format=%B", "--", made["path"])

    # bob, who read nothing, cannot replace the person's words that alice's line sits under
    refused = cli("note", "update", "Plan", "--body", "bob rewrites the plan", ghost="bob")
    assert refused.exit_code == 4, refused.stdout
    assert "PERSON: do not ship on Friday." in path.read_text()


def test_a_persons_edit_after_a_ghosts_append_names_the_ghost_as_co_author(repo: Path) -> None:  # noqa: F811
    """The other order: alice appends, then a person edits before anyone commits. The note
    is the person's commit (their words are in it); alice's append was credited to nobody."""
    cli = Cli(repo)
    made = cli.ok(
        "note", "create", "--title", "Plan", "--type", "note", "--scope", "shared", "--body", "Original plan.",
        ghost="alice",
    )  # fmt: skip
    cli.ok("commit")
    cli.ok("note", "update", "Plan", "--append", "Alice adds the budget.", "--model", "gpt-x", ghost="alice")
    path = repo / made["path"]
    path.write_text(path.read_text().replace("Original plan.", "Original plan, as the person puts it."))
    (commit,) = [c for c in cli.ok("commit")["commits"] if made["path"] in c["paths"]]
    assert commit["by"] == "hand"
    assert "Co-authored-by: alice <alice@vaultmem>" in commit["message"]
    assert "bob" not in commit["message"]


def test_a_named_persons_commit_keeps_its_tally_and_co_authors(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A review of the change: with the person one of `[vault] people`, the tally and the
    co-authors were kept under their name and looked up under `person`: lost."""
    config = repo / "vaultmem.toml"
    config.write_text(config.read_text().replace("ghosts = [", 'people = ["pat"]\nghosts = [', 1))
    cli = Cli(repo)
    made = cli.ok(
        "note", "create", "--title", "Plan", "--type", "note", "--scope", "shared", "--body", "Original plan.",
        ghost="alice",
    )  # fmt: skip
    cli.ok("commit")
    cli.ok("note", "update", "Plan", "--append", "Alice adds the budget.", ghost="alice")
    monkeypatch.setenv("VAULTMEM_PERSON", "pat")
    cli.ok("note", "update", "Plan", "--append", "Pat adds the date.")
    (commit,) = [c for c in cli.ok("commit")["commits"] if made["path"] in c["paths"]]
    assert commit["by"] == "person"
    assert commit["message"].startswith("memory(person): 1 edited")
    assert "Co-authored-by: alice <alice@vaultmem>" in commit["message"]


def test_a_write_over_nothing_a_person_wrote_is_the_ghosts(repo: Path) -> None:  # noqa: F811
    """The other side: two ghosts' writes in a row, no edit between them, stay theirs."""
    cli = Cli(repo)
    made = cli.ok(
        "note", "create", "--title", "Plan", "--type", "note", "--scope", "shared", "--body", "Original plan.",
        ghost="alice",
    )  # fmt: skip
    cli.ok("note", "update", "Plan", "--append", "bob's line", ghost="bob")
    cli.ok("note", "update", "Plan", "--body", "Alice's plan, replaced.", ghost="alice")
    change = next(c for c in cli.ok("review")["changes"] if c["path"] == made["path"])
    assert "hand" not in change["by"] and set(change["by"]) == {"alice", "bob"}


def _agents_note(cli: Cli, root: Path) -> Path:
    made = cli.ok(
        "note", "create", "--title", "Groceries", "--type", "note", "--scope", "shared", "--body", "ghost list",
        ghost="alice",
    )  # fmt: skip
    cli.ok("commit")
    return root / made["path"]


@pytest.mark.parametrize(
    "between",
    [
        ["note", "update", "Groceries", "--add-tag", "x"],
        ["note", "comment", "Groceries", "--text", "nice"],
        ["note", "validate", "Groceries", "--by", "bob/m"],
        ["note", "update", "Groceries", "--set", "importance=0.4", "--expect-version", "2"],
    ],
    ids=["tag", "comment", "validate", "set-with-version"],
)
def test_a_write_that_leaves_the_body_alone_keeps_a_hand_edit_protected(repo: Path, between: list[str]) -> None:  # noqa: F811
    """A tag, a comment or a validation brought the version level with the person's edit,
    and the next unread replace went through (found by review)."""
    cli = Cli(repo)
    path = _agents_note(cli, repo)
    path.write_text(path.read_text().replace("ghost list", "PERSON WROTE THIS"))
    assert cli("note", "update", "Groceries", "--body", "overwritten", ghost="bob").exit_code == 4
    cli.ok(*between, ghost="bob")
    refused = cli("note", "update", "Groceries", "--body", "overwritten", ghost="bob")
    assert refused.exit_code == 4, refused.stdout
    assert "PERSON WROTE THIS" in path.read_text()


def test_a_link_a_move_rewrote_is_no_persons_word(repo: Path) -> None:  # noqa: F811
    """A note whose links a move rewrote is still the agent's to replace (found by review:
    the stale hash made it look hand-edited, and an append then marked it a person's)."""
    cli = Cli(repo)
    cli.ok("note", "create", "--title", "Bee", "--type", "note", "--scope", "private", "--body", "bee", ghost="alice")
    made = cli.ok(
        "note", "create", "--title", "Ay", "--type", "note", "--scope", "private", "--body", "see [[Bee]]",
        ghost="alice",
    )  # fmt: skip
    cli.ok("note", "move", "Bee", "private/alice/Cee.md", ghost="alice")
    assert "Cee]]" in (repo / made["path"]).read_text()
    # the rewrite is a version, in the file too: else the note looks edited by hand
    version = cli.ok("get", "Ay", ghost="alice")["note"]["version"]
    assert f"version: {version}\n" in (repo / made["path"]).read_text()
    cli.ok("note", "comment", "Ay", "--text", "noted", ghost="alice")
    cli.ok("note", "update", "Ay", "--append", "more", ghost="alice")
    cli.ok("note", "update", "Ay", "--body", "replaced", ghost="alice")


@pytest.mark.parametrize(
    "write",
    [
        ["note", "move", "Groceries", "shared/Food.md"],
        ["note", "delete", "Groceries"],
    ],
    ids=["move", "delete"],
)
def test_a_ghosts_move_or_delete_over_a_persons_edit_leaves_it_theirs(repo: Path, write: list[str]) -> None:  # noqa: F811
    cli = Cli(repo)
    path = _agents_note(cli, repo)
    path.write_text(path.read_text().replace("ghost list", "PERSON WROTE THIS"))
    cli.ok(*write, ghost="alice")
    changed = [c for c in cli.ok("review")["changes"] if c["path"] != ".vaultmem-journal"]
    assert changed and all("hand" in c["by"] for c in changed if c["kind"] in ("moved", "deleted")), changed


def test_lint_fix_of_a_hand_made_note_leaves_it_the_persons(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    (repo / "shared" / "Pat.md").write_text("---\ntitle: Pat thoughts\n---\nwords only pat wrote\n")
    cli.ok("lint", "--fix", ghost="alice")
    change = next(c for c in cli.ok("review")["changes"] if c["path"] == "shared/Pat.md")
    assert "hand" in change["by"], change
    made = cli.ok("commit")
    assert [c["by"] for c in made["commits"] if "shared/Pat.md" in c["paths"]] == ["hand"]


def test_a_capture_a_person_wrote_stays_theirs_when_a_ghost_promotes_it(repo: Path) -> None:  # noqa: F811
    """Found by review: promoting a capture a person typed in Obsidian made an ordinary note
    any ghost could replace unread."""
    cli = Cli(repo)
    (repo / "inbox" / "shared").mkdir(parents=True, exist_ok=True)
    (repo / "inbox" / "shared" / "boat idea.md").write_text("---\ntype: capture\n---\nSell the boat in May.\n")
    cli.ok("inbox", "promote", "boat idea", "--title", "Boat", "--type", "note", "--scope", "shared", ghost="alice")
    refused = cli("note", "update", "Boat", "--body", "bob replaced it", ghost="bob")
    assert refused.exit_code == 4, refused.stdout
    # a ghost's own capture, promoted, is the ghost's as before
    cli.ok("capture", "remember the milk", ghost="alice")
    cli.ok("inbox", "promote", "remember the milk", "--title", "Milk", "--type", "note", "--scope", "shared",
           ghost="alice")  # fmt: skip
    cli.ok("note", "update", "Milk", "--body", "bob replaced it", ghost="bob")


def test_a_ghosts_restore_of_a_committed_delete_is_the_ghosts(repo: Path) -> None:  # noqa: F811
    """Its old bytes are the trashed copy's, which the restore wrote again: that line was
    taken for the one that wrote the base, the restore for a hand edit, and `commit` left
    bob's restore to the person (a reviewer's find; sync then refused it)."""
    cli = Cli(repo)
    made = cli.ok(
        "note", "create", "--title", "Xnote", "--type", "fact", "--scope", "shared", "--body", "hi", ghost="alice"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    cli.ok("note", "delete", "Xnote", ghost="alice")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "del")
    cli.ok("trash", "restore", made["path"], ghost="bob")
    changes = cli.ok("review")["changes"]
    assert [(c["path"], c["kind"], c["by"]) for c in changes] == [(made["path"], "restored", ["bob"])]
    commits = cli.ok("commit")["commits"]
    assert [c["by"] for c in commits if made["path"] in c["paths"]] == ["bob"]
