"""The commit of memory changes leaves the person's index as just committed
(services/commits.py `_index_as_committed`): left with the old versions, `git status` would
show the commit staged to be undone and a person's next `git commit` would undo it. Real
git; a lock held as a person's `git status` holds it, and one left behind."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from vaultmem.errors import Conflict
from vaultmem.services import commits
from vaultmem.vault.git import Git


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "config", "user.name", "t")
    _git(tmp_path, "config", "user.email", "t@example.com")
    (tmp_path / "a.md").write_text("one\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "a.md").write_text("two\n")
    return tmp_path


def test_a_lock_held_a_moment_is_waited_out(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commits, "INDEX_WAIT", (200, 0.05))
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    taken = threading.Event()

    def person_done() -> None:
        taken.wait(10)
        lock.unlink()

    helper = threading.Thread(target=person_done)
    helper.start()
    real_run = Git.run

    def run(self: Git, *args: str, **kw: object) -> str:
        if args[:1] == ("reset",):
            taken.set()  # the lock is there when the reset first tries
        return real_run(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "run", run)
    sha = commits.commit_paths(Git.of(repo), ["a.md"], "memory", None)
    helper.join()
    assert _git(repo, "rev-parse", "HEAD").strip() == sha
    assert _git(repo, "status", "--porcelain") == ""  # index, HEAD and file agree


def test_a_lock_left_behind_is_reported_with_what_to_run(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commits, "INDEX_WAIT", (3, 0.01))
    (repo / ".git" / "index.lock").write_bytes(b"")
    with pytest.raises(Conflict, match="git reset -q") as stopped:
        commits.commit_paths(Git.of(repo), ["a.md"], "memory", None)
    assert _git(repo, "log", "-1", "--format=%s").strip() == "memory"
    assert _git(repo, "rev-parse", "HEAD").strip()[:10] in stopped.value.message
    (repo / ".git" / "index.lock").unlink()
    _git(repo, "reset", "-q")  # as the message says
    assert _git(repo, "status", "--porcelain") == ""
