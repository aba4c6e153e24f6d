"""Where git's index lock is, and when the watcher takes git for busy writing the tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmem.daemon.events import git_writing
from vaultmem.vault.git import index_lock_path


@pytest.mark.parametrize(
    ("lock_mtime", "now", "busy"),
    [
        (None, 100.0, False),  # no lock: git is not writing
        (99.5, 100.0, True),  # a pull under way
        (100.0, 100.0, True),
        (0.0, 100.0, True),  # 100 s: a long checkout is still git's
        (0.0, 120.0, False),  # older than the stale limit: a crashed git's lock, ignored
        (-50.0, 100.0, False),
    ],
)
def test_git_writing(lock_mtime: float | None, now: float, busy: bool) -> None:
    assert git_writing(lock_mtime, now, stale_s=120.0) is busy


def test_index_lock_of_a_repository_a_subfolder_a_worktree_and_none(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "notes" / "vault").mkdir(parents=True)
    assert index_lock_path(repo) == repo / ".git" / "index.lock"
    assert index_lock_path(repo / "notes" / "vault") == repo / ".git" / "index.lock"
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: ../repo/.git/worktrees/wt\n")
    assert index_lock_path(worktree) == worktree / "../repo/.git/worktrees/wt" / "index.lock"
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / ".git").write_text("not a gitdir line")
    assert index_lock_path(odd) is None
