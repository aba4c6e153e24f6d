"""Issue 25, item 3: a new note that says what another says in other words is flagged by
`review` as a near-duplicate — by meaning (the real all-MiniLM-L6-v2, in the watcher that
answers the review), not only by wording — and only against notes the reviewer may read.
Run by git (a hook), review is answered by the command itself, which reads git's index."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration.test_git_review import PERSON, git
from tests.integration.test_watcher import Watcher, ok, start_watcher, vm

__all__ = ["start_watcher"]  # the fixture, used by name below

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]

WINE = "User prefers light reds — Earthy Pinot Noir, no oaky Chardonnay."
PARAPHRASE = "The user likes light red wines such as earthy Pinot Noir and dislikes oaky Chardonnay."
CAT = "Alice's cat is named Miso and eats only salmon."
CAT_AGAIN = "Miso the cat will only eat salmon."
OTHER = "The deploy script lives in tools/deploy.sh and needs the prod AWS profile."


def flags_of(review: dict[str, object], title: str) -> list[dict[str, str]]:
    changes = [c for c in review["changes"] if c["title"] == title]  # type: ignore[index,union-attr]
    assert len(changes) == 1, review
    return list(changes[0]["flags"])


def test_a_paraphrased_memory_is_flagged_by_meaning_within_the_reviewers_view(
    tmp_path: Path, real_model_available: None, start_watcher: Callable[..., Watcher]
) -> None:
    root = tmp_path / "v"
    env = {**PERSON}
    Cli(tmp_path).ok("init", str(root), "--ghost", "alice", "--ghost", "bob", "--no-examples", vault=False)
    git(root, "init", "-q")
    ok(root, "note", "create", "--title", "Wine", "--type", "fact", "--scope", "shared", "--body", WINE,
       "--source", "chat", "--ghost", "alice")  # fmt: skip
    ok(root, "note", "create", "--title", "Alice's cat", "--type", "fact", "--scope", "private", "--body", CAT,
       "--source", "chat", "--ghost", "alice")  # fmt: skip
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    start_watcher(root)
    ok(root, "search", "wine", "--mode", "hybrid")  # the model is loaded and the vectors built
    ok(root, "note", "create", "--title", "Drinks", "--type", "fact", "--scope", "shared", "--body", PARAPHRASE,
       "--source", "chat", "--ghost", "alice")  # fmt: skip
    ok(root, "note", "create", "--title", "Deploys", "--type", "fact", "--scope", "shared", "--body", OTHER,
       "--source", "chat", "--ghost", "alice")  # fmt: skip
    review = ok(root, "review", **env)
    twin = [f for f in flags_of(review, "Drinks") if f["code"] == "near_duplicate"]
    assert len(twin) == 1 and "says nearly what [[" in twin[0]["reason"] and "cosine" in twin[0]["reason"]
    assert not [f for f in flags_of(review, "Deploys") if f["code"] == "near_duplicate"]
    # a near twin of alice's private note: named to alice, never to bob, who may not read it
    ok(root, "note", "create", "--title", "Cat food", "--type", "fact", "--scope", "shared", "--body", CAT_AGAIN,
       "--source", "chat", "--ghost", "alice")  # fmt: skip
    alices = [f["reason"] for f in flags_of(ok(root, "review", "--ghost", "alice", **env), "Cat food")]
    assert any("[[Alice's cat]]" in r for r in alices), alices
    ok(root, "note", "delete", "Cat food", "--ghost", "alice")
    ok(root, "note", "create", "--title", "Bob's cat food", "--type", "fact", "--scope", "shared", "--body", CAT_AGAIN,
       "--source", "chat", "--ghost", "bob")  # fmt: skip
    # the same words as alice's (0.81 to her private note, above twins.SAME_MEANING): not for bob
    bobs = [f["reason"] for f in flags_of(ok(root, "review", "--ghost", "bob", **env), "Bob's cat food")]
    assert not any("Alice's cat" in r or "private" in r for r in bobs), bobs


def test_review_run_by_git_is_answered_by_the_command_itself(
    tmp_path: Path, start_watcher: Callable[..., Watcher]
) -> None:
    root = tmp_path / "v"
    Cli(tmp_path).ok("init", str(root), "--ghost", "alice", "--no-examples", vault=False)
    config = root / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "auto"', 'backend = "none"'))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vault")
    w = start_watcher(root)
    ok(root, "note", "create", "--title", "Staged", "--type", "note", "--scope", "shared", "--body", "x",
       "--ghost", "alice")  # fmt: skip
    git(root, "add", "-A")
    served = w.ping()["served"]
    forwarded = ok(root, "review", "--staged")
    assert [c["title"] for c in forwarded["changes"]] == ["Staged"] and w.ping()["served"] == served + 1
    # as in a pre-commit hook: git's own index file, which the watcher would not read
    index = Path(git(root, "rev-parse", "--git-dir").strip())
    index = (root / index if not index.is_absolute() else index) / "index"
    res = vm(root, "review", "--staged", GIT_INDEX_FILE=str(index))
    assert res.returncode == 0 and w.ping()["served"] == served + 1  # not forwarded
    assert '"Staged"' in res.stdout
