"""A ghost's revisions count its own history (services/seen.py), found by an attacker's
review: `get --at HEAD~N` answering or not told alice how many commits the vault has, bob's
private ones among them, and a commit id by prefix whether bob had committed at all.

Two vaults alike in everything alice may read, one where bob also commits private notes
between her commits: every revision she can write must answer her the same in both."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli
from tests.integration.test_git_review import PERSON, create, git, new_vault

SHA = re.compile(r"\b[0-9a-f]{7,40}\b")
PLAN = "shared/Plan.md"


def build(root: Path, bob_commits: int) -> Path:
    """Alice's plan in three committed versions; after each, `bob_commits` of bob's own."""
    new_vault(root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
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
    """What alice is told, commit ids and note ids aside (they differ between the vaults)."""
    res = Cli(root)(*args, ghost="alice")
    data = json.loads(res.stdout) if res.stdout.strip() else None
    if isinstance(data, dict) and "error" in data:
        return res.exit_code, SHA.sub("SHA", data["error"]["message"])
    if args[0] == "get":
        return res.exit_code, data["body"]
    if args[0] == "review":
        return res.exit_code, sorted((c["title"], c["kind"]) for c in data["changes"])
    return res.exit_code, data


STEP = st.sampled_from(["~", "~1", "~2", "~3", "~4", "~7", "^", "^0", "^1", "^2", "^^"])
BASE = st.sampled_from(["HEAD", "@", "HEAD@{0}", "HEAD@{1}", "HEAD@{3}", "@{-1}", "HEAD@{2999-01-01}"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=BASE, steps=st.lists(STEP, max_size=3), command=st.sampled_from(["get", "review", "range"]))
def test_no_revision_tells_a_ghost_how_many_commits_it_may_not_see(
    vaults: tuple[Path, Path], base: str, steps: list[str], command: str
) -> None:
    rev = base + "".join(steps)
    args = {
        "get": ("get", PLAN, "--at", rev),
        "review": ("review", rev),
        "range": ("review", f"{rev}..HEAD"),
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
