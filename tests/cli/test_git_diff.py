"""Acceptance 6: in git, `note validate` and `note comment` change exactly their lines.

Runs real git in a temporary repository and reads `git diff -U0`.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.cli._util import body_of, changed_lines, front_matter, git, keys_of, write
from tests.conftest import Cli
from vaultmem.services import notes as notes_service
from vaultmem.services import revisions

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


class Clock:
    """Moves vaultmem's clock forward a minute per write, so `updated` always changes."""

    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


@pytest.fixture
def repo(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    clock = Clock()  # one clock for every write: creates and read-modify-writes
    monkeypatch.setattr(notes_service, "utc_now", clock)
    monkeypatch.setattr(revisions, "utc_now", clock)
    git(vault, "init", "-q")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "init")
    yield vault


def _commit(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "step")


def _diff(repo: Path, relpath: str) -> tuple[list[str], list[str]]:
    changed = [c for c in git(repo, "status", "--porcelain", "-z", "-uall").split("\0") if c]
    journal = [c for c in changed if c[3:].startswith(".vaultmem-journal/")]
    assert [c for c in changed if c not in journal] == [f" M {relpath}"], "only the named note changed"
    # and the write journal got one line: who wrote it (vault/journal.py)
    removed, added = changed_lines(git(repo, "diff", "-U0", "--", ".vaultmem-journal"))
    if not added:  # the journal file is new since the last commit
        added = [line for c in journal for line in (repo / c[3:]).read_text().splitlines()]
    assert removed == [] and len(added) == 1 and f'"path":"{relpath}"' in added[0]
    return changed_lines(git(repo, "diff", "-U0", "--", relpath))


BODY = "# Steps\n\nRun it.  \nTrailing spaces above and a blank line below.\n\n    indented code\n"


def _make(cli: Cli, repo: Path) -> dict[str, str]:
    out = cli.ok(
        "note",
        "create",
        "--title",
        "Deploy Steps",
        "--type",
        "skill",
        "--scope",
        "shared",
        "--tag",
        "ops",
        "--body",
        BODY,
    )
    _commit(repo)
    return out


def test_validate_changes_exactly_the_validation_lines(repo: Path, cli: Cli) -> None:
    made = _make(cli, repo)
    path = repo / made["path"]
    body_before = body_of(path)
    out = cli.ok("note", "validate", made["id"], "--by", "alice/gpt-x", "--trust", "0.9")
    assert {"id", "version", "last_validated_at", "trust_score"} <= set(out)
    assert (out["id"], out["version"], out["trust_score"]) == (made["id"], 2, 0.9)
    removed, added = _diff(repo, made["path"])
    assert sorted(keys_of(removed)) == ["trust_score", "updated", "version"]
    assert sorted(keys_of(added)) == ["last_validated_at", "last_validated_by", "trust_score", "updated", "version"]
    assert len(removed) == 3 and len(added) == 5  # one line each, no continuation lines
    assert "last_validated_by: alice/gpt-x" in added
    assert "trust_score: 0.9" in added and "version: 2" in added
    assert f"last_validated_at: {out['last_validated_at']}" in added
    assert body_of(path) == body_before
    assert path.read_bytes().endswith(BODY.encode())
    fm = front_matter(path)
    assert list(fm)[-2:] == ["last_validated_at", "last_validated_by"]  # added after the existing keys


def test_validate_without_trust_leaves_trust_alone(repo: Path, cli: Cli) -> None:
    made = _make(cli, repo)
    out = cli.ok("note", "validate", "Deploy Steps", "--by", "bob/claude")
    assert out["trust_score"] == 0.5
    removed, added = _diff(repo, made["path"])
    assert sorted(keys_of(removed)) == ["updated", "version"]
    assert sorted(keys_of(added)) == ["last_validated_at", "last_validated_by", "updated", "version"]
    _commit(repo)
    # validating again only moves the existing lines
    cli.ok("note", "validate", "Deploy Steps", "--by", "alice/gpt-x", "--trust", "0.7")
    removed, added = _diff(repo, made["path"])
    assert sorted(keys_of(removed)) == sorted(keys_of(added)) == [
        "last_validated_at", "last_validated_by", "trust_score", "updated", "version",
    ]  # fmt: skip


def test_comment_changes_only_comments_updated_version(repo: Path, cli: Cli) -> None:
    made = _make(cli, repo)
    path = repo / made["path"]
    body_before = path.read_bytes().split(b"\n---\n", 1)[1]
    out = cli.ok("note", "comment", made["id"], "--text", "Looks right: verified", "--model", "gpt-x", ghost="alice")
    assert (out["id"], out["version"]) == (made["id"], 2)
    assert [(c["by"], c["model"], c["text"]) for c in out["comments"]] == [("alice", "gpt-x", "Looks right: verified")]
    removed, added = _diff(repo, made["path"])
    assert sorted(keys_of(removed)) == ["updated", "version"]
    assert sorted(keys_of(added)) == ["comments", "updated", "version"]
    _commit(repo)
    out = cli.ok("note", "comment", made["id"], "--text", "second", ghost="bob")
    assert [c["text"] for c in out["comments"]] == ["Looks right: verified", "second"]
    removed, added = _diff(repo, made["path"])
    # the first comment's lines stay put; only the new entry is added
    assert sorted(keys_of(removed)) == ["updated", "version"]
    assert sorted(keys_of(added)) == ["updated", "version"]
    # one comment is one line: an item of Obsidian's List property, `<time> <by>: <text>`
    items = [line.strip() for line in added if line.startswith(" ")]
    assert len(items) == 1 and items[0].startswith("- ") and items[0].endswith(" bob: second'")
    assert path.read_bytes().split(b"\n---\n", 1)[1] == body_before
    doc = cli.ok("get", made["id"])
    assert [c["text"] for c in doc["comments"]] == ["Looks right: verified", "second"]


HAND_WRITTEN = (
    "---\n"
    "# written in Obsidian\n"
    "title: Hand Written\n"
    "status: draft   # workflow\n"
    "tags: [one, two]\n"
    "custom:\n"
    "  nested: [1, 2]\n"
    "trust_score: 0.3\n"
    'zzz: "quoted: yes"\n'
    "---\n"
    "Body line one.  \n"  # trailing spaces: a markdown line break that must survive
    "Body line two.\n"
    "\n"
)


def test_validate_hand_written_note_keeps_unknown_keys_in_place(repo: Path, cli: Cli) -> None:
    path = write(repo, "shared/hand.md", HAND_WRITTEN)
    _commit(repo)
    cli.ok("note", "validate", "Hand Written", "--by", "alice/gpt-x", "--trust", "0.9")
    removed, added = _diff(repo, "shared/hand.md")
    assert removed == ["trust_score: 0.3"]
    assert sorted(keys_of(added)) == ["last_validated_at", "last_validated_by", "trust_score", "updated", "version"]
    fm = front_matter(path)
    assert list(fm) == [
        "title", "status", "tags", "custom", "trust_score", "zzz",  # where they were
        "updated", "version", "last_validated_at", "last_validated_by",  # added, canonical order
    ]  # fmt: skip
    text = path.read_text()
    for line in HAND_WRITTEN.splitlines():
        if line != "trust_score: 0.3":
            assert line in text.splitlines()
    assert text.endswith("---\nBody line one.  \nBody line two.\n\n")
    _commit(repo)
    cli.ok("note", "comment", "Hand Written", "--text", "ok", ghost="bob")
    removed, added = _diff(repo, "shared/hand.md")
    assert sorted(keys_of(removed)) == ["updated", "version"]
    assert sorted(keys_of(added)) == ["comments", "updated", "version"]
    assert list(front_matter(path))[:6] == ["title", "status", "tags", "custom", "trust_score", "zzz"]


def test_validate_keeps_bom_and_crlf(repo: Path, cli: Cli) -> None:
    original = "\ufeff---\r\ntitle: Windows Note\r\nodd:   spacing   # c\r\n---\r\nline 1\r\nline 2\r\n"
    path = repo / "shared/win.md"
    path.write_bytes(original.encode("utf-8"))
    _commit(repo)
    cli.ok("note", "validate", "Windows Note", "--by", "alice/gpt-x")
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\ntitle: Windows Note\r\nodd:   spacing   # c\r\n")
    assert data.endswith(b"\r\n---\r\nline 1\r\nline 2\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")  # no bare LF sneaked in


def test_validate_keeps_file_mode(repo: Path, cli: Cli) -> None:
    made = _make(cli, repo)
    path = repo / made["path"]
    path.chmod(0o600)
    cli.ok("note", "validate", made["id"], "--by", "alice/gpt-x")
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--by", "alice"], 5),
        (["--by", "alice/"], 5),
        (["--by", "/gpt"], 5),
        (["--by", "../bob/gpt"], 5),
        (["--by", "alice/gpt-x", "--trust", "7"], 5),
        (["--by", "alice/gpt-x", "--trust", "-0.1"], 5),
        (["--by", "alice/gpt-x", "--trust", "nan"], 5),
    ],
)
def test_bad_validate_input_changes_nothing(repo: Path, cli: Cli, args: list[str], code: int) -> None:
    made = _make(cli, repo)
    res = cli("note", "validate", made["id"], *args)
    assert res.exit_code == code
    assert res.data["error"]["code"] == "invalid_input"
    assert git(repo, "status", "--porcelain").strip() == ""


def test_empty_comment_is_refused(repo: Path, cli: Cli) -> None:
    made = _make(cli, repo)
    assert cli("note", "comment", made["id"], "--text", "  ").exit_code == 5
    assert git(repo, "status", "--porcelain").strip() == ""
