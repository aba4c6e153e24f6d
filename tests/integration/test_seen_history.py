"""A ghost's revisions count its own history (services/seen.py), found by an attacker's
review: `get --at HEAD~N` answering or not told alice how many commits the vault has, bob's
private ones among them, and a commit id by prefix whether bob had committed at all.

Two vaults alike in everything alice may read, one where bob also commits private notes
between her commits: every revision she can write must answer her the same in both."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli
from tests.integration.test_git_review import PERSON, create, git, new_vault

SHA = re.compile(r"\b[0-9a-f]{7,40}\b")
PLAN = "shared/Plan.md"


def committed_vault(root: Path) -> Path:
    """A new vault (ghosts alice and bob), committed as the first commit of its own repository."""
    new_vault(root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def build(root: Path, bob_commits: int) -> Path:
    """Alice's plan in three committed versions; after each, `bob_commits` of bob's own."""
    committed_vault(root)
    cli = Cli(root)
    plan = create(cli, "Plan", "version 1", source="x")
    for version in (1, 2, 3):
        if version > 1:
            cli.ok("note", "update", plan["id"], "--body", f"version {version}", ghost="alice")
        cli.ok("commit")
        for n in range(bob_commits):
            create(cli, f"Bob {version} {n}", "salary 200k", ghost="bob", scope="private", source="x")
            cli.ok("commit")
    return root


@pytest.fixture(scope="module")
def vaults(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    with pytest.MonkeyPatch.context() as mp:
        for key, value in PERSON.items():
            mp.setenv(key, value)
        base = tmp_path_factory.mktemp("seen")
        return build(base / "quiet", 0), build(base / "busy", 2)


def answer(root: Path, *args: str) -> tuple[int, Any]:
    """What alice is told, her commit ids as their place in her history (A0 the newest) and
    any other id as HIDDEN: the two vaults' ids differ, the places must not."""
    res = Cli(root)(*args, ghost="alice")
    mine = git(root, "log", "--format=%H", "--", PLAN).split()

    def named(text: str) -> str:
        def label(m: re.Match[str]) -> str:
            return next((f"A{i}" for i, sha in enumerate(mine) if sha.startswith(m.group(0))), "HIDDEN")

        return SHA.sub(label, text)

    data = json.loads(res.stdout) if res.stdout.strip() else None
    if isinstance(data, dict) and "error" in data:
        return res.exit_code, named(data["error"]["message"])
    if args[0] == "get":
        return res.exit_code, (data["body"], named(data["part"]["at"]))
    if args[0] == "review":
        return res.exit_code, sorted((c["title"], c["kind"]) for c in data["changes"])
    if args[0] == "revert":
        review = data.get("review") or {}
        changes = sorted((c["title"], c["kind"]) for c in review.get("changes", []))
        return res.exit_code, (named(json.dumps(review.get("range"))), changes, len(data["restored"]))
    return res.exit_code, data


STEP = st.sampled_from(["~", "~1", "~2", "~3", "~4", "~7", "^", "^0", "^1", "^2", "^^"])
BASE = st.sampled_from(["HEAD", "@", "HEAD@{0}", "HEAD@{1}", "HEAD@{3}", "@{-1}", "HEAD@{2999-01-01}"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=BASE, steps=st.lists(STEP, max_size=3), command=st.sampled_from(["get", "review", "range", "revert"]))
def test_no_revision_tells_a_ghost_how_many_commits_it_may_not_see(
    vaults: tuple[Path, Path], base: str, steps: list[str], command: str
) -> None:
    rev = base + "".join(steps)
    args = {
        "get": ("get", PLAN, "--at", rev),
        "review": ("review", rev),
        "range": ("review", f"{rev}..HEAD"),
        "revert": ("revert", rev, "--dry-run"),
    }[command]
    quiet, busy = (answer(root, *args) for root in vaults)
    assert quiet == busy, (args, quiet, busy)


def test_a_ghost_steps_back_through_its_own_commits(vaults: tuple[Path, Path]) -> None:
    _, busy = vaults
    for root in vaults:
        cli = Cli(root)
        bodies = [cli.ok("get", PLAN, "--at", f"HEAD~{n}", ghost="alice")["body"].strip() for n in range(3)]
        assert bodies == ["version 3", "version 2", "version 1"]
    # a person's revisions are git's: in the busy vault HEAD~1 is one of bob's commits
    assert Cli(busy).ok("get", PLAN, "--at", "HEAD~2")["body"].strip() == "version 3"
    assert Cli(busy).ok("get", PLAN, "--at", "HEAD~3")["body"].strip() == "version 2"


def count_histories(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every History built from now on (each one a `git log` of the whole repository)."""
    from vaultmem.services import seen

    made: list[object] = []
    real = seen.History.__init__

    def counted(self: seen.History, *a: Any) -> None:
        made.append(self)
        real(self, *a)

    monkeypatch.setattr(seen.History, "__init__", counted)
    return made


@pytest.mark.parametrize(
    "args",
    [
        ("revert", "HEAD", "--dry-run"),
        ("revert", PLAN, "--to", "HEAD~1", "--dry-run"),
        ("revert", "--by", "alice", "--since", "HEAD~2", "--dry-run"),
        ("review", "HEAD~1"),
        ("review", "HEAD~2..HEAD"),
    ],
)
def test_a_ghosts_revision_command_reads_its_history_once(
    vaults: tuple[Path, Path], args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each read is a `git log --all` of the whole repository: revert read it up to three
    times (its revision, --by's filter, the dry run's parent), review REV twice."""
    made = count_histories(monkeypatch)
    _, busy = vaults
    res = Cli(busy)(*args, ghost="alice")
    assert res.exit_code == 0, res.stdout
    assert len(made) == 1, (args, len(made))


def test_a_hidden_commit_id_answers_as_one_that_does_not_exist(vaults: tuple[Path, Path]) -> None:
    _, busy = vaults
    bobs = git(busy, "log", "--format=%H", "-1", "--", "private/bob").strip()
    made_up = "0123456789abcdef0123456789abcdef01234567"
    seen = set()
    for sha in (bobs, bobs[:7], made_up, made_up[:7]):
        for args in (("get", PLAN, "--at", sha), ("review", sha), ("revert", sha, "--dry-run")):
            res = Cli(busy)(*args, ghost="alice")
            assert res.exit_code == 5, (args, res.stdout)
            seen.add((args[0], res.stdout.replace(sha, "REV")))
    assert len(seen) == 3  # one answer per command, whichever id
    assert Cli(busy).ok("review", bobs)["changes"]  # a person reviews bob's commit


def test_the_commit_a_ghost_is_shown_is_one_of_its_own(vaults: tuple[Path, Path]) -> None:
    _, busy = vaults
    head = git(busy, "rev-parse", "HEAD").strip()
    mine = git(busy, "log", "--format=%H", "-1", "--", PLAN).strip()
    assert head != mine  # bob committed last
    assert Cli(busy).ok("get", PLAN, "--at", "HEAD", ghost="alice")["part"]["at"] == mine


@pytest.mark.parametrize(
    "form",
    ["{}", "{}~1", "{}^", "{}~0", "{}^0", "x-g{}", "v1-3-g{}", "{}@{{0}}", "{}..HEAD", "HEAD..{}"],
)
def test_a_hidden_commit_id_in_any_form_answers_as_a_made_up_one(vaults: tuple[Path, Path], form: str) -> None:
    """git reads `name-g<id>` (git describe's names) as the id, a step after it resolved the
    id first: each told a hidden commit from none by a different message or an answer."""
    _, busy = vaults
    bobs = git(busy, "log", "--format=%H", "-1", "--", "private/bob").strip()
    made_up = "0123456789abcdef0123456789abcdef01234567"
    for command in (("get", PLAN, "--at"), ("review",), ("revert", "--dry-run")):
        said = []
        for sha in (bobs[:7], bobs[:7].upper(), made_up[:7]):
            rev = form.format(sha)
            args = (*command[:-1], rev, command[-1]) if command[0] == "revert" else (*command, rev)
            res = Cli(busy)(*args, ghost="alice")
            said.append((res.exit_code, res.stdout.replace(rev, "REV").replace(sha, "ID")))
        assert said[0] == said[1] == said[2], (command, form, said)
        assert said[0][0] == 5


def test_a_commit_id_is_matched_against_the_ghosts_own_commits_only(vaults: tuple[Path, Path]) -> None:
    """git matches a short id against every object: one of bob's commits sharing alice's
    prefix made her prefix ambiguous, and so told her it was there."""
    _, busy = vaults
    mine = git(busy, "log", "--format=%H", "-1", "--", PLAN).strip()
    tree = git(busy, "rev-parse", "HEAD^{tree}").strip()
    for n in range(2_000_000):  # a commit object whose id starts as alice's does
        body = f"tree {tree}\nauthor bob <bob@vaultmem> 1700000000 +0000\ncommitter bob <bob@vaultmem> 1700000000 +0000\n\nprivate {n}\n"
        if hashlib.sha1(f"commit {len(body)}\0{body}".encode()).hexdigest().startswith(mine[:4]):
            break
    made = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=busy, input=body, capture_output=True, text=True
    )
    assert made.stdout.startswith(mine[:4]) and made.stdout.strip() != mine
    try:
        assert Cli(busy).ok("get", PLAN, "--at", mine[:4], ghost="alice")["part"]["at"] == mine
    finally:
        obj = busy / ".git" / "objects" / made.stdout[:2] / made.stdout.strip()[2:]
        obj.unlink()


def merged(root: Path, bob_commits: bool) -> Path:
    """bob's sync merges alice's work into his clone's history: with a private commit of his
    own there, a merge commit (his first); without, a fast-forward. Alice's view is one."""
    committed_vault(root)
    main = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    cli = Cli(root)
    plan = create(cli, "Plan", "version 1", source="x")
    cli.ok("commit")
    git(root, "checkout", "-q", "-b", "bobs")
    if bob_commits:
        create(cli, "Bob private", "salary 200k", ghost="bob", scope="private", source="x")
        cli.ok("commit")
    git(root, "checkout", "-q", main)
    cli.ok("note", "update", plan["id"], "--body", "version 2", ghost="alice")
    cli.ok("commit")
    bobs_merge(root, main)
    return root


def bobs_merge(root: Path, main: str) -> None:
    """Bob merges main into his line (his commit the first parent); main moves to his merge."""
    git(root, "checkout", "-q", "bobs")
    git(root, "merge", "-q", "--no-edit", main)
    git(root, "checkout", "-q", main)
    git(root, "merge", "-q", "--ff-only", "bobs")


def test_a_merge_that_brought_a_ghost_nothing_new_is_not_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    quiet, busy = merged(tmp_path / "quiet", False), merged(tmp_path / "busy", True)
    assert len(git(busy, "rev-parse", "HEAD^@").split()) == 2  # the busy vault's HEAD is a merge
    for args in (
        ("get", PLAN, "--at", "HEAD"),
        ("get", PLAN, "--at", "HEAD~1"),
        ("get", PLAN, "--at", "HEAD~2"),
        ("review", "HEAD"),
        ("review", "HEAD~1..HEAD"),
        ("revert", "HEAD", "--dry-run"),
    ):
        assert answer(quiet, *args) == answer(busy, *args), args
    assert answer(busy, "get", PLAN, "--at", "HEAD")[1] == ("version 2\n", "A0")


def test_a_note_like_one_of_bobs_private_notes_keeps_its_own_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git log --follow` took alice's new note for a copy of bob's private one when their
    texts were alike, and her history stopped there: get --at HEAD said it did not exist,
    history showed it uncommitted. A guess at bob's text, confirmed."""
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    text = "\n".join(f"Line {i} of the quarterly numbers: {i * 37} units sold in region {i % 5}." for i in range(40))
    seen = []
    for like in (True, False):
        root = committed_vault(tmp_path / ("like" if like else "unlike"))
        cli = Cli(root)
        create(cli, "Numbers", text if like else "Nothing like it.", ghost="bob", scope="private", source="x")
        cli.ok("commit")
        create(cli, "Guess", text, source="x")
        cli.ok("commit")
        got = cli("get", "shared/Guess.md", "--at", "HEAD", ghost="alice")
        versions = cli.ok("history", "shared/Guess.md", ghost="alice")["versions"]
        seen.append((got.exit_code, [(v["commit"] is None, v["kind"], v["path"]) for v in versions]))
    assert seen[0] == seen[1]
    assert seen[0][0] == 0


def clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[int | None], None]:
    """`at(hour)`: the commits made after it are dated 2026-01-01 at that hour; `at(None)`: now."""

    def at(hour: int | None) -> None:
        for key in ("GIT_COMMITTER_DATE", "GIT_AUTHOR_DATE"):
            if hour is None:
                monkeypatch.delenv(key)
            else:
                monkeypatch.setenv(key, f"2026-01-01T{hour:02d}:00:00Z")

    return at


def crossed(root: Path, bob_commits: bool, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Alice commits v2 at 10:00; bob, whose clone still had v1, commits a private note at
    11:00 and merges at 12:00 (without it: nothing to merge). Dates are set, not waited for."""
    committed_vault(root)
    main = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    cli = Cli(root)

    at = clock(monkeypatch)

    at(9)
    plan = create(cli, "Plan", "version 1", source="x")
    cli.ok("commit")
    git(root, "branch", "bobs")
    at(10)
    cli.ok("note", "update", plan["id"], "--body", "version 2", ghost="alice")
    cli.ok("commit")
    if bob_commits:
        git(root, "checkout", "-q", "bobs")
        at(11)
        create(cli, "Bob private", "salary 200k", ghost="bob", scope="private", source="x")
        cli.ok("commit")
        git(root, "checkout", "-q", main)
        at(12)
        git(root, "merge", "-q", "--no-edit", "bobs")
    at(None)
    return root


def test_review_since_and_a_commits_base_are_the_ghosts_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """review --since took git's last commit by then (bob's, whose parent had v1: alice saw
    her committed v2 as pending, and by moving the time, when bob committed); review REV
    named its raw parent (`line 15 of the version at <bob's id>`); ORIG_HEAD moved with
    every pull of bob's private work."""
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    quiet, busy = crossed(tmp_path / "quiet", False, monkeypatch), crossed(tmp_path / "busy", True, monkeypatch)
    for args in (
        ("review", "--since", "2026-01-01T11:30:00Z"),
        ("review", "--since", "2026-01-01T10:30:00Z"),
        ("review", "--since", "2026-01-01T09:30:00Z"),
        ("review", "HEAD"),
        ("get", PLAN, "--at", "ORIG_HEAD"),
        ("review", "ORIG_HEAD..HEAD"),
    ):
        assert answer(quiet, *args) == answer(busy, *args), args
    assert answer(busy, "review", "--since", "2026-01-01T11:30:00Z") == (0, [])
    refused = Cli(busy)("get", PLAN, "--at", "ORIG_HEAD", ghost="alice")
    assert refused.exit_code == 5


def test_a_note_a_person_published_from_bobs_private_notes_reads_as_the_persons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git blame followed the person's move back into private/bob/: alice's edit of a line
    was flagged as a person's line when the person wrote the note, not when bob had."""
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    text = "First line of the plan.\nSecond line of the plan.\nThird line of the plan."
    seen = []
    for moved in (True, False):
        root = committed_vault(tmp_path / ("moved" if moved else "copied"))
        cli = Cli(root)
        if moved:
            made = create(cli, "Secret", text, ghost="bob", scope="private", source="x")
            cli.ok("commit")
            git(root, "mv", made["path"], "shared/Secret.md")
        else:  # the person writes it in shared/ themselves
            cli.ok("note", "create", "--title", "Secret", "--type", "fact", "--scope", "shared", "--body", text)
            git(root, "add", "-A")
        git(root, "commit", "-qm", "a person publishes it")
        cli.ok("index")
        cli.ok("note", "update", "shared/Secret.md", "--body", text.replace("Second", "2nd"), ghost="alice")
        cli.ok("commit")
        flags = [f["code"] for c in cli.ok("review", "HEAD", ghost="alice")["changes"] for f in c["flags"]]
        seen.append("person_lines" in flags)
    assert seen == [True, True]


def trash_emptied(root: Path, bob: bool) -> Path:
    """Alice's shared note says most of what bob's private note said, which bob deleted into
    the trash; a person empties the trash and commits everything in one commit, and git's
    --follow takes alice's note for bob's trashed file renamed."""
    committed_vault(root)
    cli = Cli(root)
    text = "\n".join(f"Meeting line {i}: the quarterly planning went over item {i} in detail." for i in range(12))
    if bob:
        create(cli, "Plan", text + "\nBOB-ONLY: the price is 41 dollars a share.", ghost="bob", scope="private")
        cli.ok("commit")
        cli.ok("note", "delete", "Plan", ghost="bob")
        cli.ok("commit")
    create(cli, "Meeting", text)
    shutil.rmtree(root / ".trash", ignore_errors=True)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "empty the trash")
    return root


def test_a_note_git_takes_for_bobs_trashed_note_keeps_its_own_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path in the trash read as a shared note's (found by an attacker's review): alice's
    `get --at HEAD~1` returned bob's deleted private note, text and owner, and her history
    listed his delete."""
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    quiet, busy = trash_emptied(tmp_path / "quiet", False), trash_emptied(tmp_path / "busy", True)
    assert re.search(r"^R\d+", git(busy, "log", "-1", "--name-status", "-M", "--format="), re.M)  # git pairs them
    for args in (("history", "Meeting"), *(("get", "Meeting", "--at", f"HEAD~{n}") for n in range(3))):
        told = [Cli(root)(*args, ghost="alice") for root in (quiet, busy)]
        assert [r.exit_code for r in told] == [told[0].exit_code] * 2, args
        assert "BOB-ONLY" not in told[1].stdout and ".trash" not in told[1].stdout, (args, told[1].stdout)
        if args[0] == "history":
            assert [v["kind"] for v in json.loads(told[1].stdout)["versions"]] == ["created"]
    # a revert of the person's commit does not bring bob's trashed note back for alice
    res = Cli(busy)("revert", "HEAD", "--dry-run", ghost="alice")
    assert ".trash" not in res.stdout and "BOB-ONLY" not in res.stdout, res.stdout


def rewritten(root: Path, bob: bool, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Alice's plan at 9, 10, 14 and 15 o'clock. Beside it, bob's private work that a person
    rewrote away: committed at 11 and reset away at 12; stashed at 13; committed at 16 on a
    line the person rebased alice's 15 o'clock commit onto at 17 (its committer time 17)."""
    committed_vault(root)
    main = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    cli = Cli(root)

    at = clock(monkeypatch)

    def plan(version: int, hour: int) -> None:
        at(hour)
        if version == 1:
            create(cli, "Plan", "version 1", source="x")
        else:
            cli.ok("note", "update", "Plan", "--body", f"version {version}", ghost="alice")
        cli.ok("commit")

    plan(1, 9)
    plan(2, 10)
    if bob:
        at(11)
        create(cli, "Bob 11", "salary 200k", ghost="bob", scope="private", source="x")
        cli.ok("commit")
        at(12)
        git(root, "reset", "-q", "--hard", "HEAD~1")
        at(13)
        create(cli, "Bob 13", "salary 210k", ghost="bob", scope="private", source="x")
        git(root, "stash", "-q", "-u")
    plan(3, 14)
    plan(4, 15)
    if bob:
        git(root, "checkout", "-q", "-b", "side", "HEAD~1")
        at(16)
        create(cli, "Bob 16", "salary 220k", ghost="bob", scope="private", source="x")
        cli.ok("commit")
        git(root, "checkout", "-q", main)
        at(17)
        git(root, "rebase", "-q", "side")
    at(None)
    return root


def test_a_ghosts_dated_revision_is_its_own_line_by_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git answers REF@{date} from the reflog: where REF pointed then, here — at 11:30 bob's
    commit a person had since reset away, which alice was told "did not exist" of, and so
    when it was made. To a ghost it is REF's line as it is now, by the time each of its
    commits was written (a rebase re-dates the committer). A person's stash is no ghost's."""
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    quiet, busy = rewritten(tmp_path / "quiet", False, monkeypatch), rewritten(tmp_path / "busy", True, monkeypatch)
    main = git(busy, "rev-parse", "--abbrev-ref", "HEAD").strip()
    asked: list[tuple[str, ...]] = [
        ("get", PLAN, "--at", "stash"),
        ("review", "stash"),
        ("get", PLAN, "--at", "stash@{0}"),
    ]
    for hour in range(8, 18):
        moment = f"2026-01-01T{hour:02d}:30:00Z"
        for ref in (main, "HEAD", ""):
            asked += [("get", PLAN, "--at", f"{ref}@{{{moment}}}"), ("review", f"{ref}@{{{moment}}}..HEAD")]
            # a second selector after the date had git read the date from the reflog again
            asked += [("get", PLAN, "--at", f"{ref}@{{{moment}}}@{{{later}}}") for later in ("now", "", "-0")]
        asked.append(("review", "--since", moment))
    for args in asked:
        assert answer(quiet, *args) == answer(busy, *args), args
    code, (body, at) = answer(busy, "get", PLAN, "--at", f"{main}@{{2026-01-01T11:30:00Z}}")
    assert (code, body.strip(), at) == (0, "version 2", "A2")
    code, (body, at) = answer(busy, "get", PLAN, "--at", f"{main}@{{2026-01-01T15:30:00Z}}")
    assert (code, body.strip(), at) == (0, "version 4", "A0")
    assert Cli(busy).ok("get", PLAN, "--at", "stash")["body"].strip() == "version 2"  # a person's is git's
    twice = f"{main}@{{2026-01-01T11:30:00Z}}@{{now}}~1"
    refused = Cli(busy)("get", PLAN, "--at", twice, ghost="alice")
    assert refused.exit_code != 0 and repr(twice) in refused.data["error"]["message"]  # named whole, steps too


def scratched(root: Path, bob: bool) -> Path:
    """Alice's plan, then a scratch note she makes and deletes: nothing she can see changed.
    Bob commits a private note on a line of his from before and merges her work into it,
    his commit the merge's first parent; main moves to his merge."""
    committed_vault(root)
    main = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    cli = Cli(root)
    create(cli, "Plan", "version 1", source="x")
    cli.ok("commit")
    git(root, "branch", "bobs")
    scratch = create(cli, "Scratch", "to be thrown away", source="x")
    cli.ok("commit")
    cli.ok("note", "delete", scratch["id"], ghost="alice")
    cli.ok("commit")
    if bob:
        git(root, "checkout", "-q", "bobs")
        create(cli, "Bob private", "salary 200k", ghost="bob", scope="private", source="x")
        cli.ok("commit")
        bobs_merge(root, main)
    return root


def test_a_merge_the_same_as_both_parents_follows_the_ghosts_own_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by an attacker's review: bob's merge, the same as both its parents in what
    alice may read, was walked through its first parent, bob's line, and skipped her
    scratch note's two commits: her HEAD~1 was her plan, and HEAD~2 named no commit."""
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    quiet, busy = scratched(tmp_path / "quiet", False), scratched(tmp_path / "busy", True)
    assert len(git(busy, "rev-list", "--merges", "HEAD").split()) == 1
    for n in range(4):
        for args in (("get", PLAN, "--at", f"HEAD~{n}"), ("review", f"HEAD~{n}"), ("review", f"HEAD~{n}..HEAD")):
            assert answer(quiet, *args) == answer(busy, *args), args
    assert answer(busy, "get", PLAN, "--at", "HEAD~2")[0] == 0
