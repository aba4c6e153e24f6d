"""Issue 25 through the CLI on a git-initialized vault: a scripted agent session of every
write kind plus a person's hand edits, then `review`, `commit`, `history`, `get --at` and
`revert` as a reviewer runs them (real git, real files)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from vaultmem.services.reverts import LEFT_RELINKED as REVERT_LEFT_RELINKED
from vaultmem.services.reverts import UNPLACED_REASON

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

PERSON = {"GIT_AUTHOR_NAME": "Pat", "GIT_AUTHOR_EMAIL": "pat@example.com", "GIT_COMMITTER_NAME": "Pat",
          "GIT_COMMITTER_EMAIL": "pat@example.com"}  # fmt: skip
AWS = "AKIAIOSFODNN7EXAMPLE"


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **PERSON})
    assert out.returncode == 0, (args, out.stderr)
    return out.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    root = new_vault(tmp_path / "v")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def new_vault(root: Path) -> Path:
    """`vaultmem init` (its .gitignore keeps .vaultmem/ out of git), embeddings off."""
    Cli(root.parent).ok("init", str(root), "--ghost", "alice", "--ghost", "bob", "--no-examples", vault=False)
    config = root / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "auto"', 'backend = "none"'))
    return root


def changes(cli: Cli, *args: str, ghost: str | None = None) -> dict[str, Any]:
    return cli.ok("review", *args, ghost=ghost)


def by_title(review: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["title"]: c for c in review["changes"]}


def create(cli: Cli, title: str, body: str, ghost: str = "alice", scope: str = "shared", **kw: str) -> dict[str, Any]:
    args = ["note", "create", "--title", title, "--type", kw.pop("type", "fact"), "--scope", scope, "--body", body]
    for key, value in kw.items():
        args += [f"--{key.replace('_', '-')}", value]
    return dict(cli.ok(*args, ghost=ghost))


def test_review_names_every_change_and_who_made_it(repo: Path) -> None:
    cli = Cli(repo)
    wine = create(cli, "Wine", "# Wine\n\nPinot Noir is light.\n\n## Soils\n\nLimestone.", source="atlas")
    doomed = create(cli, "Doomed", "To be deleted.", ghost="bob", source="x")
    cli.ok("commit")
    # the session: agents of every write kind, and a person editing by hand
    cli.ok("note", "update", wine["id"], "--append", "Burgundy is its home.", "--model", "gpt-x",
           "--reason", "user said", ghost="alice")  # fmt: skip
    path = repo / wine["path"]
    path.write_text(path.read_text().replace("Limestone.", "Limestone and marl."))  # by hand
    cli.ok("note", "validate", doomed["id"], "--by", "bob/claude", "--trust", "0.8", ghost="bob")
    cli.ok("note", "comment", doomed["id"], "--text", "still true?", ghost="alice")
    cli.ok("note", "delete", doomed["id"], ghost="bob")
    cap = cli.ok("capture", "raw thought on cheese", ghost="bob")
    cli.ok("inbox", "promote", cap["id"], "--title", "Cheese", "--type", "note", "--scope", "private", ghost="bob")
    moved = create(cli, "Draft", "A draft of something.", ghost="alice", source="x")
    cli.ok("note", "move", moved["id"], "Final", ghost="alice")
    cli.ok("write", "-", ghost="alice", input=json.dumps([{"type": "semantic", "content": "Kites fly."}]))
    (repo / "shared" / "Handmade.md").write_text("A note a person wrote in Obsidian.\n")

    review = changes(cli)
    got = {c["title"]: (c["kind"], c["by"]) for c in review["changes"]}
    assert got["Wine"] == ("edited", ["alice/gpt-x", "hand"])
    assert got["Doomed"] == ("deleted", ["bob", "alice"])
    assert got["Cheese"] == ("created", ["bob"])
    assert "raw thought on cheese" not in got  # captured and promoted since the last commit: nothing left
    assert got["Final"][0] == "created" and got["Handmade"] == ("created", ["hand"])
    assert any(k == "created" and by == ["alice"] for k, by in got.values() if k)  # the `write`
    assert review["by_ghost"]["alice"]["created"] >= 2 and "hand" in review["by_ghost"]
    assert "Burgundy" in by_title(review)["Wine"]["diff"]
    # a ghost reviews its own changes in its own view: no bob's private notes
    mine = changes(cli, ghost="alice")
    assert mine["changes"] and all(any(b.startswith("alice") for b in c["by"]) for c in mine["changes"])
    assert not any(c["path"].startswith("private/bob/") for c in mine["changes"])
    md = cli.ok("review", "--format", "md", json_=False)
    assert md.startswith("## Memory changes") and "[[Wine]]" in md and len(md.splitlines()) < 60


def test_twenty_changes_read_in_a_minute(repo: Path) -> None:
    cli = Cli(repo)
    for i in range(20):
        create(cli, f"Fact {i}", f"Fact number {i} about kites and wind {i * 7}.", ghost=("alice", "bob")[i % 2],
               source="field notes")  # fmt: skip
    md = cli.ok("review", "--format", "md", json_=False)
    assert len(changes(cli)["changes"]) == 20
    assert len(md.splitlines()) < 60, md


def test_each_flag_fires_when_provoked_and_only_then(repo: Path) -> None:
    cli = Cli(repo)
    base = create(cli, "Base", "Kites fly best in steady wind from the sea.", source="pat")
    linked = create(cli, "Linked", "See [[Base]] for the wind.", source="pat")
    mine = create(cli, "Mine", "Private plans.", ghost="alice", scope="private", source="pat")
    person = create(cli, "Person", "Line one.\nLine two.", source="pat", ttl_days="30")
    create(cli, "Kite facts", "Kites fly best in steady wind from the sea, said the old sailor.", source="pat")
    cli.ok("commit")
    clean = changes(cli)
    assert clean["changes"] == [] and clean["blocking"] == 0

    # a person's line, changed by an agent (the person committed it as theirs)
    path = repo / person["path"]
    path.write_text(path.read_text().replace("Line two.", "Line two, as Pat wrote it."))
    cli.ok("commit")
    cli.ok("note", "update", person["id"], "--body", "Line one.\nLine two, rewritten.", "--set", "expires=",
           "--expect-version", str(cli.ok("get", person["id"])["note"]["version"]), ghost="bob")  # fmt: skip
    # a delete of a note another links to; a new dangling link; a near-duplicate; a fact
    # without a source; a secret added by hand; a note moved across scopes by hand
    cli.ok("note", "delete", base["id"], ghost="bob")
    create(cli, "Dangler", "Points at [[Nowhere at all]].", ghost="bob", type="note")
    create(cli, "Copy", "Kites fly best in steady wind from the sea, said the old sailor.", ghost="bob", type="note")
    create(cli, "Unsourced", "Wind is air that moves.", ghost="bob")
    (repo / "shared" / "Keys.md").write_text(f"Deploy with {AWS}.\n")
    (repo / mine["path"]).rename(repo / "shared" / "Mine.md")

    review = changes(cli)
    flags = {c["title"]: {f["code"]: f for f in c["flags"]} for c in review["changes"]}
    assert "person_lines" in flags["Person"] and "expiry_removed" in flags["Person"]
    assert "linked_delete" in flags["Base"] and "1 note" in flags["Base"]["linked_delete"]["reason"]
    assert "dangling_link" in flags["Dangler"]
    assert ("near_duplicate" in flags["Copy"] and "[[Base]]" in flags["Copy"]["near_duplicate"]["reason"]) or (
        "near_duplicate" in flags["Copy"]
    )
    assert "no_source" in flags["Unsourced"] and "no_source" not in flags["Dangler"]  # a note, not a fact
    assert flags["Keys"]["secret"]["blocking"] and AWS not in json.dumps(review)
    assert flags["Mine"]["cross_scope_move"]["blocking"]
    # silent where not provoked
    assert "Linked" not in flags  # unchanged: not a change at all
    assert not {"secret", "cross_scope_move"} & set(flags["Copy"]) and not flags["Unsourced"].keys() - {"no_source"}
    assert review["blocking"] == 2
    assert cli("review", "--check").exit_code == 1
    assert linked["id"]  # still there


def test_commit_makes_one_commit_per_ghost_with_trailers(repo: Path) -> None:
    cli = Cli(repo)
    create(cli, "A", "Alpha.", ghost="alice", model="gpt-x", reason="asked", source="x")
    create(cli, "B", "Beta.", ghost="bob", source="x")
    (repo / "shared" / "C.md").write_text("By hand.\n")
    made = cli.ok("commit")["commits"]
    assert [c["by"] for c in made] == ["alice", "bob", "hand"]
    log = git(repo, "log", "--format=%an <%ae>|%cn|%s", "-3").splitlines()
    assert log == ["Pat <pat@example.com>|Pat|memory(hand): 1 created", "bob <bob@vaultmem>|Pat|memory(bob): 1 created",
                   "alice <alice@vaultmem>|Pat|memory(alice): 1 created"]  # fmt: skip
    body = git(repo, "log", "--author=alice", "--format=%B")
    assert "Vaultmem-Ghost: alice" in body and "Vaultmem-Model: gpt-x" in body and "Vaultmem-Reason: asked" in body
    assert git(repo, "log", "--author=alice", "--name-only", "--format=").split() == [
        ".vaultmem-journal/alice/" + next(p.name for p in (repo / ".vaultmem-journal" / "alice").iterdir()),
        "shared/A.md",
    ]
    assert git(repo, "status", "--porcelain") == ""
    assert cli.ok("commit")["commits"] == []


def test_commit_in_a_vault_inside_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    top = tmp_path / "project"
    root = new_vault(top / "memory")
    git(top, "init", "-q")
    (top / "README.md").write_text("code\n")
    git(top, "add", "README.md")  # staged by the person: not part of memory commits
    cli = Cli(root)
    create(cli, "A", "Alpha.", ghost="alice", source="x")
    made = cli.ok("commit")["commits"]
    assert made and all(p.startswith(("shared/", ".vaultmem-journal/", "vaultmem.toml", ".git")) or "/" in p
                        for c in made for p in c["paths"])  # fmt: skip
    assert "memory/shared/A.md" in git(top, "log", "--author=alice", "--name-only", "--format=")
    assert "A  README.md" in git(top, "status", "--porcelain")  # still staged, not committed


def test_history_follows_two_renames_and_get_at_reads_the_past(repo: Path) -> None:
    cli = Cli(repo)
    made = create(cli, "First name", "Version one.", source="x")
    cli.ok("commit")
    cli.ok("note", "update", made["id"], "--body", "Version two.", ghost="alice")
    cli.ok("commit")
    cli.ok("note", "move", made["id"], "Second name", ghost="alice")
    cli.ok("commit")
    cli.ok("note", "move", made["id"], "Third name", ghost="bob")
    cli.ok("commit")
    path = repo / "shared" / "Third name.md"
    path.write_text(path.read_text().replace("Version two.", "Version three, by hand."))
    versions = cli.ok("history", made["id"])["versions"]
    assert [(v["kind"], v["by"]) for v in versions] == [
        ("edited", ["hand"]),
        ("moved", ["bob"]),
        ("moved", ["alice"]),
        ("edited", ["alice"]),
        ("created", ["alice"]),
    ]
    assert [v["path"] for v in versions][-1] == "shared/First name.md" and versions[0]["commit"] is None
    first = versions[-1]["commit"]
    old = cli.ok("get", made["id"], "--at", first)
    assert old["body"].strip() == "Version one." and old["note"]["path"] == "shared/First name.md"


def test_a_small_note_moved_and_edited_in_one_commit_is_a_move(repo: Path) -> None:
    """Its bookkeeping lines (title, updated, version, hash) are most of a small note, so git's
    similarity takes the move and edit for a delete and a create: review, the commit and
    history would have called it created, history lost its past and `get --at` refused it."""
    cli = Cli(repo)
    made = create(cli, "Loire whites", "Sancerre.", ghost="bob")
    cli.ok("commit")
    first = git(repo, "rev-parse", "HEAD").strip()
    cli.ok("note", "move", made["id"], "Loire white wines", ghost="bob")
    cli.ok("note", "update", made["id"], "--append", "Also Vouvray.", ghost="bob")
    pending = by_title(changes(cli))["Loire white wines"]
    assert (pending["kind"], pending["old_path"]) == ("moved", "shared/Loire whites.md")
    cli.ok("commit")
    assert "1 moved" in git(repo, "log", "-1", "--format=%s")
    versions = cli.ok("history", "Loire white wines")["versions"]
    assert [(v["kind"], v["path"]) for v in versions] == [
        ("moved", "shared/Loire white wines.md"),
        ("created", "shared/Loire whites.md"),
    ]
    assert cli.ok("get", "Loire white wines", "--at", first)["body"].strip() == "Sancerre."


def test_revert_restores_an_agents_commit_and_leaves_a_persons_edit(repo: Path) -> None:
    cli = Cli(repo)
    keep = create(cli, "Keep", "Original words.", source="x")
    touched = create(cli, "Touched", "Original text.", source="x")
    cli.ok("commit")
    cli.ok("note", "update", keep["id"], "--body", "Agent words.", ghost="bob")
    cli.ok("note", "update", touched["id"], "--body", "Agent text.", ghost="bob")
    junk = create(cli, "Junk", "Made by the agent.", ghost="bob", source="x")
    (sha,) = [c["sha"] for c in cli.ok("commit")["commits"] if c["by"] == "bob"]
    path = repo / touched["path"]
    by_hand = path.read_text().replace("Agent text.", "Pat fixed this text.")
    path.write_text(by_hand)  # a person edits the same lines later
    cli.ok("commit")

    trial = cli("revert", sha, "--dry-run", ghost="alice")  # exits as the revert would
    dry = trial.data
    assert trial.exit_code == 4 and dry["dry_run"] and dry["review"]["changes"]
    assert [c["path"] for c in dry["conflicts"]] == [touched["path"]]
    assert (repo / keep["path"]).read_text().count("Agent words.") == 1  # nothing changed yet
    res = cli("revert", sha, ghost="alice")
    assert res.exit_code == 4
    assert [c["path"] for c in res.data["conflicts"]] == [touched["path"]]
    assert "Original words." in (repo / keep["path"]).read_text()
    assert path.read_text() == by_hand  # left as the person wrote it
    assert not (repo / junk["path"]).exists()
    # the undo is a new change, journaled as the reverter's, never a rewrite of history
    review = changes(cli)
    assert {c["title"]: c["by"] for c in review["changes"]}["Keep"] == ["alice"]
    assert sha in git(repo, "log", "--format=%H")


def test_a_persons_revert_names_a_file_it_cannot_undo(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file in no ghost's, project's or shared folder (`private/x.md`, which lint names)
    is no note a person's revert can put back; it says so (exit 4, as for any change left
    as it is) instead of leaving it out in silence, and undoes the rest."""
    config = repo / "vaultmem.toml"
    config.write_text(config.read_text().replace("ghosts = [", 'people = ["pat"]\nghosts = [', 1))
    cli = Cli(repo)
    kept = create(cli, "Kept", "Original words.", source="x")
    cli.ok("commit")
    cli.ok("note", "update", kept["id"], "--body", "Agent words.", ghost="bob")
    (repo / "private" / "stray.md").write_text("A note dropped in no ghost's folder.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "both")
    sha = git(repo, "rev-parse", "HEAD").strip()

    without_name = cli("revert", sha, "--dry-run")  # at the terminal, no person named: as before
    assert without_name.data["conflicts"] == [], without_name.stdout
    monkeypatch.setenv("VAULTMEM_PERSON", "pat")
    res = cli("revert", sha)
    monkeypatch.delenv("VAULTMEM_PERSON")
    assert res.exit_code == 4, res.stdout
    assert [(c["path"], c["reason"]) for c in res.data["conflicts"]] == [("private/stray.md", UNPLACED_REASON)]
    assert "Original words." in (repo / kept["path"]).read_text()  # the rest undone
    assert (repo / "private" / "stray.md").exists()
    # a ghost is told nothing of what it may not change, as before
    bob = cli("revert", sha, ghost="bob")
    assert "stray" not in bob.stdout


def test_an_agents_addition_to_a_persons_note_changes_no_line_of_theirs(repo: Path) -> None:
    """A newcomer's walk: a ghost's append to a note a person made was flagged person_lines
    for the lines every write rewrites (updated, version, hash). Its rewrite of the
    person's words still is."""
    cli = Cli(repo)
    made = cli.ok("note", "create", "--title", "Burgundy", "--type", "fact", "--scope", "shared",
                  "--source", "s", "--body", "Red is Pinot.")  # fmt: skip
    cli.ok("commit")
    cli.ok("note", "update", made["id"], "--append", "Bob adds.", ghost="bob")
    (change,) = changes(cli)["changes"]
    assert change["by"] == ["bob"] and not [f for f in change["flags"] if f["code"] == "person_lines"]
    cli.ok("commit")
    cli.ok("note", "update", made["id"], "--body", "Red is Gamay.\n\nBob adds.", ghost="bob")
    (change,) = changes(cli)["changes"]
    (flag,) = [f for f in change["flags"] if f["code"] == "person_lines"]
    assert "line" in flag["reason"]


def test_a_dry_run_of_revert_to_names_the_paths_the_revert_writes(repo: Path) -> None:
    """A newcomer's walk: after an edit and a move, `revert NOTE --to REV --dry-run` named the
    restore at the moved name while the revert itself restores it at the old one."""
    cli = Cli(repo)
    made = create(cli, "Burgundy", "Red is Pinot.", source="s")
    cli.ok("commit")
    cli.ok("note", "update", made["id"], "--append", "Bob adds.", ghost="bob")
    cli.ok("commit")
    cli.ok("note", "move", made["id"], "Burgundy wine", ghost="bob")
    cli.ok("commit")
    dry = cli.ok("revert", made["id"], "--to", "HEAD~2", "--dry-run", ghost="bob")
    done = cli.ok("revert", made["id"], "--to", "HEAD~2", ghost="bob")
    assert dry["restored"] == done["restored"] and {r["path"] for r in done["restored"]} == {made["path"]}
    assert "Bob adds." not in (repo / made["path"]).read_text()


def test_a_dry_run_of_revert_to_follows_its_own_steps(repo: Path) -> None:
    """A review of the fix: after two moves the dry run met the second step with the note as
    it is now, not as its first step would leave it, and reported a conflict (title) that
    the revert itself does not meet."""
    cli = Cli(repo)
    made = create(cli, "Burgundy", "Red is Pinot.", source="s")
    cli.ok("commit")
    cli.ok("note", "move", made["id"], "Burgundy wine", ghost="bob")
    cli.ok("commit")
    cli.ok("note", "move", made["id"], "Burgundy wines", ghost="bob")
    cli.ok("commit")
    dry = cli.ok("revert", made["id"], "--to", "HEAD~2", "--dry-run", ghost="bob")
    done = cli.ok("revert", made["id"], "--to", "HEAD~2", ghost="bob")
    assert dry == {**done, "dry_run": True} and not done["conflicts"]
    assert (repo / made["path"]).is_file()


@pytest.mark.parametrize("steps", ["edits", "create and edits", "delete and edit"])
def test_a_dry_run_of_several_commits_follows_its_own_steps(repo: Path, steps: str) -> None:
    """`revert --by G --since REV --dry-run` undid each commit against the files as they
    are, not as the newer commits' undos would leave them: two edits of one note reported a
    conflict (and exited 4) that the revert itself does not meet."""
    cli = Cli(repo)
    keep = create(cli, "Anchor", "Stays.", source="s")
    cli.ok("commit")
    since = git(repo, "rev-parse", "HEAD").strip()
    if steps == "edits":
        plan = create(cli, "Plan", "version 1", ghost="bob", source="s")
        cli.ok("commit")
        since = git(repo, "rev-parse", "HEAD").strip()
    else:
        plan = create(cli, "Plan", "version 1", ghost="alice", source="s")
        cli.ok("commit")
    for version in (2, 3):
        cli.ok("note", "update", plan["id"], "--body", f"version {version}", ghost="alice")
        cli.ok("commit")
    if steps == "delete and edit":
        cli.ok("note", "delete", plan["id"], ghost="alice")
        cli.ok("commit")
    args = ("revert", "--by", "alice", "--since", since)
    dry = cli(*args, "--dry-run", ghost="alice")
    done = cli(*args, ghost="alice")
    assert dry.exit_code == done.exit_code, (dry.stdout, done.stdout)
    shown, did = json.loads(dry.stdout), json.loads(done.stdout)
    assert shown["restored"] == did["restored"] and shown["conflicts"] == did["conflicts"], (shown, did)
    assert (repo / keep["path"]).is_file()
    if steps == "edits":
        assert done.exit_code == 0 and "version 1" in (repo / plan["path"]).read_text()
    if steps == "create and edits":  # undoing the edits raised its version: still the note made
        assert done.exit_code == 0 and not (repo / plan["path"]).exists(), done.stdout


def test_a_first_commit_credits_inits_example_notes_to_the_person(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """init's example notes are the person's writes, journaled: a first `vaultmem commit`
    credited them to `hand`, as edits made outside vaultmem."""
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "v"
    made = Cli(tmp_path).ok("init", str(root), "--ghost", "alice", vault=False)
    notes = [p for p in made["added"] if p.endswith(".md") and p != "README.md"]
    assert notes
    git(root, "init", "-q")
    commits = Cli(root).ok("commit")["commits"]
    assert [c["by"] for c in commits] == ["person"]
    assert set(notes) <= set(commits[0]["paths"])
    assert not Cli(root).ok("commit")["commits"]  # nothing left over for `hand`


def test_a_note_paired_by_id_with_another_ghost_s_private_note_shows_no_past(repo: Path) -> None:
    """Git.changes pairs a note deleted at one path and added at another with the same id
    as a move: a person who turned bob's private note into a shared one (new text, the id
    kept) moved it. alice sees the shared note created there, never its private past: not
    in history, not by get --at, not in review."""
    cli = Cli(repo)
    secret = create(cli, "Bob secret", "Bob's salary is 12345.", ghost="bob", scope="private")
    cli.ok("commit")
    before = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "-q", secret["path"])
    (repo / "shared/Public.md").write_text(
        f"---\nid: {secret['id']}\ntitle: Public\ntype: fact\n---\nA public fact about tea.\n", encoding="utf-8"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "by hand")
    for seen in (
        cli.ok("history", "Public", ghost="alice"),
        changes(cli, "HEAD~1..HEAD", "--by", "hand", ghost="alice"),
    ):
        assert "Bob secret" not in json.dumps(seen) and "12345" not in json.dumps(seen)
    versions = cli.ok("history", "Public", ghost="alice")["versions"]
    assert [(v["kind"], v["path"]) for v in versions] == [("created", "shared/Public.md")]
    past = cli("get", "Public", "--at", before, ghost="alice")  # a commit of bob's alone: none of hers
    assert past.exit_code in (3, 5) and "12345" not in past.stdout
    review = by_title(changes(cli, "HEAD~1..HEAD", "--by", "hand", ghost="alice"))
    assert (review["Public"]["kind"], review["Public"]["old_path"]) == ("created", None)
    mine = cli.ok("history", "Public", ghost="bob")["versions"]  # bob's own past: followed
    assert [v["kind"] for v in mine] == ["moved", "created"] and mine[-1]["path"] == secret["path"]
    # and alice's revert of the commit undoes a creation, as her history tells it: it neither
    # refuses (which would tell her the note came from a place hidden from her) nor names bob's
    undo = cli("revert", "HEAD", "--dry-run", ghost="alice")
    assert undo.exit_code == 0, undo.stdout
    assert [(r["path"], r["action"]) for r in undo.data["restored"]] == [("shared/Public.md", "deleted")]
    assert secret["path"] not in undo.stdout and "Bob secret" not in undo.stdout


@pytest.mark.parametrize("dry", [True, False])
def test_a_revert_of_a_move_says_the_links_it_rewrote_in_a_note_it_left(repo: Path, dry: bool) -> None:
    """A move's revert whose linking note a person edited since: that note's undo conflicts,
    and the move back rewrites its links all the same. It said "left as it is" of a note whose
    links it rewrote."""
    cli = Cli(repo)
    create(cli, "Target", "t")
    linking = create(cli, "L", "see [[Target]]")
    cli.ok("commit")
    cli.ok("note", "move", "Target", "Moved T", ghost="alice")
    cli.ok("commit")
    path = repo / linking["path"]
    path.write_text(path.read_text() + "\nperson adds [[Moved T]]\n")  # a person, after the move
    cli.ok("commit")
    res = cli("revert", "HEAD~1", *(["--dry-run"] if dry else []), ghost="alice")
    assert res.exit_code == 4, res.stdout
    assert [r["action"] for r in res.data["restored"]] == ["moved back from shared/Moved T.md"]
    assert "links" not in res.data["restored"][0]
    (conflict,) = res.data["conflicts"]
    assert conflict["path"] == linking["path"]
    assert conflict["reason"].endswith(REVERT_LEFT_RELINKED), conflict["reason"]
    text = path.read_text()
    if dry:
        assert "[[Moved T]]" in text and (repo / "shared/Moved T.md").exists()
    else:
        assert "[[Target]]" not in text and "[[Moved T]]" not in text and (repo / "shared/Target.md").exists()
