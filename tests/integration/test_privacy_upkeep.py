"""Privacy through what vaultmem writes on its own (found by an attacker's review, 2026-11-27):
the links it keeps after a move, the links it makes resolvable in a note's text, the commit
and revert of a ghost's changes, and `status` over a symlink. Bob must learn nothing of
alice's private notes through any of them (SPEC §3)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration.test_git_review import create, git, repo  # noqa: F401 (fixture)

SECRET = "Zebracorn Launch"


def private_note(cli: Cli, body: str = "code 4471", **kw: str) -> dict[str, object]:
    return create(cli, SECRET, body, ghost="alice", scope="private", alias="Quokka Vault", **kw)


def bob_sees_nothing_of(text: str) -> None:
    assert "private/alice" not in text and "Zebracorn" not in text and "Quokka" not in text


def test_a_move_by_bob_keeps_alices_links_without_telling_him_through_commit_or_sync(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    road = create(cli, "Roadmap", "Plans.", ghost="bob", source="x")
    secret = private_note(cli, body="see [[Roadmap]] before launch")
    cli.ok("commit")
    moved = cli.ok("note", "move", road["id"], "Roadmap 2026", ghost="bob")
    assert moved["links_updated"] == []
    # the link integrity Obsidian keeps: alice's note still reaches the moved note
    hidden = repo / str(secret["path"])
    assert "[[shared/Roadmap 2026]]" in hidden.read_text() or "[[Roadmap 2026]]" in hidden.read_text()
    journal = "".join(p.read_text() for p in (repo / ".vaultmem-journal" / "bob").glob("*.jsonl"))
    bob_sees_nothing_of(journal)
    made = cli("commit", ghost="bob")
    assert made.exit_code == 0
    bob_sees_nothing_of(made.stdout + made.stderr)
    bob_sees_nothing_of(git(repo, "show", "--stat", "--format=%B", "HEAD"))
    assert str(secret["path"]) in git(repo, "status", "--porcelain", "-uall")  # not bob's to commit
    bob_sees_nothing_of(json.dumps(cli.ok("review", ghost="bob")))
    # the upkeep is the owner's: in alice's journal, with its reason; her commit takes it
    (line,) = [
        e
        for p in (repo / ".vaultmem-journal" / "alice").glob("*.jsonl")
        for e in p.read_text().splitlines()
        if "links kept" in e
    ]
    assert json.loads(line)["by"] == "alice" and json.loads(line)["path"] == secret["path"]
    hers = cli.ok("commit", ghost="alice")
    assert [str(secret["path"]) in c["paths"] for c in hers["commits"]] == [True]
    assert git(repo, "status", "--porcelain", "-uall").strip() == ""
    # and her own revert of the note is not stopped as if a person had changed it since
    rev = git(repo, "rev-list", "--max-count=1", "HEAD~2").strip()
    back = cli("revert", str(secret["id"]), "--to", rev, ghost="alice")
    assert back.exit_code == 0, back.stdout + back.stderr
    assert "[[Roadmap]]" in hidden.read_text()


@pytest.mark.parametrize(
    "link",
    [
        "[[{id}]]",
        "[[Quokka Vault]]",
        "[[Quokka Vault#Details|the plan]]",
        "![[{id}]]",
        "[[{id_upper}]]",
        "[[quokka vault]]",
    ],
)
def test_a_link_alice_makes_resolvable_never_names_her_private_note_in_a_shared_one(
    repo: Path,  # noqa: F811
    link: str,
) -> None:
    cli = Cli(repo)
    secret = private_note(cli, body="## Details\nThe code.")
    written = link.format(id=secret["id"], id_upper=str(secret["id"]).upper())
    shared = create(cli, "Pointer", f"see {written} soon", ghost="alice", source="x")
    text = (repo / str(shared["path"])).read_text()
    assert f"see {written} soon" in text  # as she wrote it: an id or alias names nothing more
    seen = json.dumps(cli.ok("get", "Pointer", ghost="bob"))
    assert "private/alice" not in seen and "Zebracorn" not in seen
    # in her own private notes the same link is made to resolve by file name, as before
    mine = create(cli, "Mine", f"see {written}", ghost="alice", scope="private", source="x")
    if "quokka" in written.lower() or "{id" in link:
        assert "private/alice/Zebracorn Launch" in (repo / str(mine["path"])).read_text()


def test_a_move_of_alices_private_note_never_writes_its_path_into_a_shared_note(
    repo: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = repo / "vaultmem.toml"
    config.write_text(config.read_text().replace("ghosts = [", 'people = ["pat"]\nghosts = [', 1))
    cli = Cli(repo)
    secret = private_note(cli)
    shared = create(cli, "Pointer", f"alice's own link: [[{SECRET}]]", ghost="alice", source="x")
    before = (repo / str(shared["path"])).read_text()
    cli.ok("note", "move", str(secret["id"]), "Zebracorn Launch 2", ghost="alice")
    assert (repo / str(shared["path"])).read_text() == before
    monkeypatch.setenv("VAULTMEM_PERSON", "pat")  # a person's move too: they see every note
    cli.ok("note", "move", str(secret["id"]), "Zebracorn Launch 3")
    assert (repo / str(shared["path"])).read_text() == before


def test_bob_cannot_tell_a_commit_that_also_touched_alices_notes(repo: Path) -> None:  # noqa: F811
    """A commit is, to bob, its changes of notes he may change: undoing one that also
    touched alice's private note does what undoing one without it does, and leaves hers."""
    cli = Cli(repo)
    plain = create(cli, "Plain", "Original plain.", ghost="bob", source="x")
    mixed = create(cli, "Mixed", "Original mixed.", ghost="bob", source="x")
    secret = private_note(cli)
    cli.ok("commit")
    hidden = repo / str(secret["path"])

    def by_hand(path: Path, old: str, new: str) -> None:
        path.write_text(path.read_text().replace(old, new))

    outcomes = []
    for note, also_hers in ((plain, False), (mixed, True)):
        path = repo / str(note["path"])
        by_hand(path, "Original", "Changed by a person:")
        if also_hers:
            by_hand(hidden, "code 4471", "code 4471, changed with it")
        git(repo, "commit", "-qam", "a person's edits")
        res = cli("revert", "HEAD", ghost="bob")
        assert res.exit_code == 0, res.stdout + res.stderr
        bob_sees_nothing_of(res.stdout + res.stderr)
        outcomes.append((len(res.data["restored"]), res.data["conflicts"]))
        assert "Original" in path.read_text()
        cli.ok("commit", ghost="bob")
    assert outcomes == [(1, []), (1, [])]
    assert "changed with it" in hidden.read_text()
    # a commit of alice's notes only is, to bob, no commit at all: his HEAD is the commit
    # before it that changed a note he may read (services/seen.py), as if it were not there
    by_hand(hidden, "changed with it", "alone")
    git(repo, "commit", "-qam", "alice's note alone")
    hers = cli("revert", "HEAD", "--dry-run", ghost="bob")
    (repo / "attachment.txt").write_text("not a note")
    git(repo, "add", "attachment.txt")
    git(repo, "commit", "-qm", "no note")
    none = cli("revert", "HEAD", "--dry-run", ghost="bob")
    assert hers.exit_code == none.exit_code
    assert hers.stdout == none.stdout
    bob_sees_nothing_of(hers.stdout + hers.stderr)


def test_status_does_not_follow_a_symlink_into_alices_notes(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    secret = private_note(cli)
    (repo / "shared" / "peek.md").symlink_to(Path("..") / str(secret["path"]))
    cli.ok("index")
    before = cli.ok("status", ghost="bob")["index"]
    hidden = repo / str(secret["path"])
    hidden.write_text(hidden.read_text() + "\nalice adds a line\n")
    stamp = hidden.stat().st_mtime_ns + 10**9
    os.utime(hidden, ns=(stamp, stamp))
    after = cli.ok("status", ghost="bob")["index"]
    assert after["pending"] == before["pending"] and after["pending_detail"] == before["pending_detail"]
    assert cli.ok("status", ghost="alice")["index"]["pending"] > 0  # hers to see


def test_a_persons_fix_names_writes_a_shared_note_the_same_whatever_alice_keeps(
    repo: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Which link form fix-names writes (a bare name when it is unambiguous, else the path)
    must not depend on a private note that shares the name."""
    config = repo / "vaultmem.toml"
    config.write_text(config.read_text().replace("ghosts = [", 'people = ["pat"]\nghosts = [', 1))
    cli = Cli(repo)
    outcomes = []
    for with_hers in (False, True):
        for p in [*(repo / "shared").rglob("*.md"), *(repo / "private").rglob("*.md")]:
            p.unlink()
        (repo / "shared/deep/folder").mkdir(parents=True, exist_ok=True)
        (repo / "shared/deep/folder/wine-basics.md").write_text("---\ntitle: Wine Basics\n---\nGrapes.\n")
        (repo / "shared/Linker.md").write_text("---\ntitle: Linker\n---\nsee [[wine-basics]]\n")
        if with_hers:
            create(cli, "Wine Basics", "Hers.", ghost="alice", scope="private")
        cli.ok("index")
        monkeypatch.setenv("VAULTMEM_PERSON", "pat")
        cli.ok("fix-names")
        monkeypatch.delenv("VAULTMEM_PERSON")
        outcomes.append((repo / "shared/Linker.md").read_text())
    assert outcomes[0] == outcomes[1]
    assert "private" not in outcomes[1]


@pytest.mark.parametrize(
    ("source", "target", "seen"),
    [
        ("shared/a.md", "shared/b.md", True),
        ("shared/a.md", "private/alice/b.md", False),
        ("shared/a.md", "project/open/b.md", False),  # a caller with no ghost sees no project
        ("shared/a.md", "inbox/shared/b.md", True),
        ("private/alice/a.md", "private/alice/b.md", True),
        ("private/alice/a.md", "private/bob/b.md", False),
        ("private/alice/a.md", "diary/alice/b.md", True),
        ("private/alice/a.md", "project/team/b.md", True),
        ("private/carol/a.md", "project/team/b.md", False),
        ("private/carol/a.md", "project/open/b.md", True),
        ("project/open/a.md", "project/other/b.md", True),  # both open: every ghost reads both
        ("project/open/a.md", "project/team/b.md", False),
        ("project/team/a.md", "project/open/b.md", True),
        ("project/team/a.md", "project/pair/b.md", True),  # {alice, bob} within {alice, bob, carol}
        ("project/pair/a.md", "project/team/b.md", False),
        ("project/team/a.md", "private/alice/b.md", False),
        ("inbox/alice/a.md", "private/alice/b.md", True),
        ("private/a.md", "shared/b.md", True),  # a file in no ghost's folder: nobody reads it
        ("shared/a.md", "private/b.md", False),
    ],
)
def test_who_may_read_a_link_table(source: str, target: str, seen: bool) -> None:
    from vaultmem.config import VaultConfig
    from vaultmem.vault.layout import classify, seen_by_readers_of

    config = VaultConfig(
        projects={"open": None, "other": None, "team": ("alice", "bob"), "pair": ("alice", "bob", "carol")}
    )
    assert seen_by_readers_of(classify(source), classify(target), config) is seen


def test_revert_by_tells_no_hidden_commits_from_none(repo: Path) -> None:  # noqa: F811
    cli = Cli(repo)
    create(cli, "Base", "x", ghost="bob")
    cli.ok("commit")
    hidden = cli("revert", "--by", "alice", ghost="bob")
    private_note(cli)
    cli.ok("commit", ghost="alice")
    only_hers = cli("revert", "--by", "alice", ghost="bob")
    assert hidden.exit_code == only_hers.exit_code == 3
    assert hidden.stdout == only_hers.stdout


def test_a_refused_upkeep_journal_line_names_no_other_ghosts_folder(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    """alice's journal folder a symlink (vault/journal.py refuses it): bob's move keeps her
    note's link and its line is not written, and bob hears nothing of it; his own line is
    written."""
    cli = Cli(repo)
    road = create(cli, "Roadmap", "Plans.", ghost="bob", source="x")
    private_note(cli, body="see [[Roadmap]] before launch")
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = repo / ".vaultmem-journal" / "alice"
    os.rename(folder, tmp_path / "alice-journal")
    folder.symlink_to(outside)
    moved = cli("note", "move", road["id"], "Roadmap 2026", ghost="bob")
    assert moved.exit_code == 0, moved.stdout + moved.stderr
    assert "alice" not in moved.stderr
    # nor that a note he cannot see links to his (a reviewer's find): no warning at all
    assert "journaled" not in moved.stderr, moved.stderr
    bob_sees_nothing_of(moved.stdout + moved.stderr)
    assert list(outside.iterdir()) == []
    assert "Roadmap 2026" in "".join(p.read_text() for p in (repo / ".vaultmem-journal" / "bob").glob("*.jsonl"))
