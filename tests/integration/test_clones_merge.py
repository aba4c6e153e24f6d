"""Issue 27, item 1: two clones of one vault (a bare repository as the remote) both write
memory — creates, updates of the same notes, validations, tags, comments — and sync both
ways through git with `vaultmem git setup`'s merge driver: no conflict marker in any front
matter, every write of both sides present, versions up; a true body conflict leaves
markers in the body only, and lint names it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration.test_git_review import new_vault
from vaultmem.vault.comments import read as comments_of
from vaultmem.vault.frontmatter import load_yaml, split_document
from vaultmem.vault.merge import has_conflict_markers

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Pat", "GIT_AUTHOR_EMAIL": "pat@example.com",
           "GIT_COMMITTER_NAME": "Pat", "GIT_COMMITTER_EMAIL": "pat@example.com"}  # fmt: skip
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    assert out.returncode == 0 or not ok, (args, out.stdout, out.stderr)
    return out


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path]:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    first = new_vault(tmp_path / "one")
    git(first, "init", "-q", "-b", "main")
    Cli(first).ok("git", "setup")
    git(first, "add", "-A")
    git(first, "commit", "-qm", "new vault")
    git(first, "remote", "add", "origin", str(origin))
    git(first, "push", "-q", "origin", "main")
    second = tmp_path / "two"
    git(tmp_path, "clone", "-q", "-b", "main", str(origin), str(second))
    Cli(second).ok("git", "setup")  # the driver lives in each clone's config
    return first, second


def front(path: Path) -> dict[str, Any]:
    split = split_document(path.read_text())
    assert split.fm_text is not None and not has_conflict_markers(split.fm_text)
    return load_yaml(split.fm_text)


def sync(root: Path) -> subprocess.CompletedProcess[str]:
    Cli(root).ok("commit")
    pulled = git(root, "pull", "-q", "--no-rebase", "origin", "main", ok=False)
    if pulled.returncode == 0:
        git(root, "push", "-q", "origin", "HEAD:main")
    return pulled


def test_fifty_writes_on_each_side_merge_without_markers(clones: tuple[Path, Path]) -> None:
    one, two = clones
    a, b = Cli(one), Cli(two)
    shared = [a.ok("note", "create", "--title", f"Fact {i}", "--type", "fact", "--scope", "shared", "--body",
                   f"# Fact {i}\n\nFirst.\n\n## Middle\n\nMiddle.\n\n## End\n\nLast.", "--source", "x",
                   ghost="alice")["id"]
              for i in range(5)]  # fmt: skip
    assert sync(one).returncode == 0
    assert sync(two).returncode == 0
    for i in range(10):  # 5 x 10 = 50 writes on each side, many to the same notes
        note = shared[i % 5]
        a.ok("note", "update", note, "--add-tag", f"one-{i}", ghost="alice")
        b.ok("note", "update", note, "--add-tag", f"two-{i}", ghost="bob")
        a.ok("note", "comment", note, "--text", f"alice {i}", ghost="alice")
        b.ok("note", "comment", note, "--text", f"bob {i}", ghost="bob")
        a.ok("note", "validate", note, "--by", "alice/x", ghost="alice")
        b.ok("note", "create", "--title", f"Bob {i}", "--type", "fact", "--scope", "shared", "--body", "B.",
             "--source", "x", ghost="bob")  # fmt: skip
        a.ok("note", "create", "--title", f"Alice {i}", "--type", "fact", "--scope", "shared", "--body", "A.",
             "--source", "x", ghost="alice")  # fmt: skip
        if i % 5 == 0:
            a.ok("note", "update", note, "--append", "Alice adds a line.", ghost="alice")
            b.ok("note", "update", note, "--replace-section", "Middle", "--body", "Middle, by bob.",
                 ghost="bob")  # fmt: skip
            b.ok("note", "update", note, "--append", "Bob adds a line too.", ghost="bob")
        b.ok("note", "validate", note, "--by", "bob/y", ghost="bob")
    assert sync(one).returncode == 0
    assert sync(two).returncode == 0  # merges one's writes into two's, by the driver
    assert sync(one).returncode == 0  # and back
    assert git(one, "rev-parse", "HEAD").stdout == git(two, "rev-parse", "HEAD").stdout
    for root in (one, two):
        assert git(root, "status", "--porcelain").stdout == ""
        for i in range(10):
            assert (root / "shared" / f"Bob {i}.md").exists() and (root / "shared" / f"Alice {i}.md").exists()
        for k, note in enumerate(shared):
            path = root / "shared" / f"Fact {k}.md"
            fm = front(path)
            assert fm["id"] == note
            tags = set(fm["tags"])
            assert {f"one-{i}" for i in range(k, 10, 5)} | {f"two-{i}" for i in range(k, 10, 5)} <= tags
            # comments are items of a List property (vault/comments.py), each once
            assert all(isinstance(c, str) for c in fm["comments"])
            assert len(fm["comments"]) == len(set(fm["comments"]))
            texts = {c.text for c in comments_of(fm["comments"])}
            assert {f"alice {i}" for i in range(k, 10, 5)} | {f"bob {i}" for i in range(k, 10, 5)} <= texts
            # 1 + 2 rounds x 3 writes on a side, + 1 for the merge; a validation by the same
            # validator in the same second as its last changes nothing and is no new version
            assert fm["version"] >= 7
            body = split_document(path.read_text()).body
            assert not has_conflict_markers(body)
            if k == 0:  # both sides' edits of the same body: both there
                assert "Middle, by bob." in body and "Alice adds a line." in body and "Bob adds a line too." in body
        assert Cli(root)("lint").exit_code == 0
        # the derived state agrees with a fresh build
        cli = Cli(root)
        cli.ok("index")
        before = {n["path"] for n in cli.ok("list", "-n", "1000")["notes"]}
        cli.ok("index", "--full")
        assert {n["path"] for n in cli.ok("list", "-n", "1000")["notes"]} == before


def test_a_true_body_conflict_is_marked_in_the_body_and_lint_names_it(clones: tuple[Path, Path]) -> None:
    one, two = clones
    made = Cli(one).ok("note", "create", "--title", "Plan", "--type", "note", "--scope", "shared", "--body",
                       "# Plan\n\nMeet on Monday.", ghost="alice")  # fmt: skip
    assert sync(one).returncode == 0
    assert sync(two).returncode == 0
    Cli(one).ok("note", "update", made["id"], "--body", "# Plan\n\nMeet on Tuesday.", ghost="alice")
    Cli(two).ok("note", "update", made["id"], "--body", "# Plan\n\nMeet on Friday.", ghost="bob")
    assert sync(one).returncode == 0
    pulled = sync(two)
    assert pulled.returncode != 0  # a real conflict: git stops for a person
    path = two / made["path"]
    fm = front(path)  # the front matter is whole
    body = split_document(path.read_text()).body
    assert has_conflict_markers(body) and "Tuesday" in body and "Friday" in body
    assert fm["version"] >= 3
    lint = Cli(two)("lint")
    assert lint.exit_code == 1
    assert [p["code"] for p in lint.data["problems"] if p["path"] == made["path"]] == ["merge_conflict"]
