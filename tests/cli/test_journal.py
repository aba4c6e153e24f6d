"""Issue 25, item 1: every vaultmem write knows who made it. Each write adds one line per
file to the write journal (vault/journal.py): the ghost (or a person: null), the model and
reason given by flag, root flag or environment, the path and the hash of what was written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import Cli, journaled
from vaultmem.vault.journal import JOURNAL_DIR, Entry, parse_lines


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_each_write_is_journaled_with_who_and_why(vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    made = cli.ok("note", "create", "--title", "Wine", "--type", "fact", "--scope", "shared", "--body", "Pinot.",
                  "--model", "gpt-x", "--reason", "the user said so", ghost="alice")  # fmt: skip
    monkeypatch.setenv("VAULTMEM_MODEL", "claude-y")
    cli.ok("--reason", "tidy", "note", "update", made["id"], "--append", "More.", ghost="alice")
    monkeypatch.delenv("VAULTMEM_MODEL")
    cli.ok("note", "update", made["id"], "--add-tag", "wine")  # a person, no ghost
    moved = cli.ok("note", "move", made["id"], "Wine notes", ghost="bob")["moves"][0]["to"]
    cli.ok("note", "delete", made["id"], ghost="bob")
    entries = journaled(vault)
    assert [(e.by, e.model, e.reason) for e in entries[:3]] == [
        ("alice", "gpt-x", "the user said so"),
        ("alice", "claude-y", "tidy"),
        (None, None, None),
    ]
    assert {e.path for e in entries[:3]} == {made["path"]}
    # a move journals both paths: the old one gone, the new one written; a delete: gone
    moves = [(e.by, e.path, e.hash is None) for e in entries[3:]]
    assert moves[0] == ("bob", made["path"], True) and moves[-1] == ("bob", moved, True)
    assert set(moves[1:-1]) == {("bob", moved, False)}
    # each writer has its own file (one per month): a ghost's commit carries its own lines
    assert sorted(p.parent.name for p in (vault / JOURNAL_DIR).glob("*/*.jsonl")) == ["_person", "alice", "bob"]


def test_the_hash_is_of_the_file_as_written(vault: Path, cli: Cli) -> None:
    made = cli.ok("capture", "raw thought", ghost="alice")
    (entry,) = journaled(vault)
    assert entry.hash == sha(vault / made["path"])


def test_unreadable_lines_are_skipped_and_long_provenance_refused(vault: Path, cli: Cli) -> None:
    good = Entry("2026-11-26T10:00:00Z", "alice", "shared/a.md", None, "m", None)
    text = "\n".join([good.line(), "not json", json.dumps({"at": 1}), '{"cut off'])
    assert list(parse_lines(text)) == [good]
    res = cli("capture", "x", "--reason", "r" * 501, ghost="alice")
    assert res.exit_code == 5 and journaled(vault) == []


def test_a_batch_of_writes_journals_each_file_once(vault: Path, cli: Cli) -> None:
    """`write` holds the watcher's notice to the end of the batch; the journal line of each
    file is written once, when the file is (each line was written twice before)."""
    items = [{"type": "semantic", "content": f"Memory number {i} about tea"} for i in range(3)]
    made = cli.ok("write", "-", input=json.dumps(items), ghost="alice")
    entries = journaled(vault)
    assert sorted(e.path for e in entries) == sorted(w["path"] for w in made["written"])


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1e"])
def test_a_line_separator_in_a_reason_keeps_its_entry(vault: Path, cli: Cli, separator: str) -> None:
    """json.dumps leaves these unescaped; an entry cut there would lose its writer, and the
    write be committed as a person's. Commit trailers are one plain line each."""
    import subprocess

    reason = f"because{separator}x\x1b[2J"
    model = f"gpt{separator}Vaultmem-Ghost: pat"
    made = cli.ok("note", "create", "--title", "Separated", "--type", "fact", "--scope", "shared", "--body", "b", "--reason", reason,
                  "--model", model, ghost="bob")  # fmt: skip
    entries = [e for e in journaled(vault) if e.path == made["path"]]
    assert [(e.by, e.reason, e.model) for e in entries] == [("bob", reason, model)]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=vault, check=True)
    for key, value in (("user.email", "p@example.com"), ("user.name", "Pat")):
        subprocess.run(["git", "config", key, value], cwd=vault, check=True)
    assert {c["by"] for c in cli.ok("commit")["commits"]} >= {"bob"}
    log = subprocess.run(["git", "log", "--format=%B", "--author=bob"], cwd=vault, capture_output=True, text=True)
    trailers = [line for line in log.stdout.splitlines() if line.startswith("Vaultmem-")]
    assert "Vaultmem-Ghost: bob" in trailers and "Vaultmem-Ghost: pat" not in trailers
    assert "\x1b" not in log.stdout and separator not in log.stdout


def test_review_shows_a_model_name_as_data(vault: Path, cli: Cli) -> None:
    """The model comes from a client (--model, $VAULTMEM_MODEL, an MCP host's clientInfo):
    in review's markdown it is shown escaped, on one line."""
    import subprocess

    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=vault, check=True)
    model = "gpt\x1b]52;c;ZXZpbA==\x07\x1b[2J\nwarning: FORGED"
    cli.ok("note", "create", "--title", "Modelled", "--type", "fact", "--scope", "shared", "--body", "b",
           "--model", model, ghost="bob")  # fmt: skip
    shown = cli("review", "--format", "md", json_=False).stdout
    assert "\x1b" not in shown and "\x07" not in shown
    assert not any(line.startswith("warning: FORGED") for line in shown.splitlines())
    assert "bob/gpt\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J\\nwarning: FORGED" in shown


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([("a.md", "h1"), ("a.md", "h2")], {"a.md": "h2"}),  # the last write there
        ([("a.md", "h1"), ("a.md", None)], {}),  # moved away or removed: nothing written there now
        ([("a.md", None), ("a.md", "h3")], {"a.md": "h3"}),  # written again after
        ([("a.md", "h1"), ("b.md", "h2")], {"a.md": "h1", "b.md": "h2"}),
    ],
)
def test_last_written(tmp_path: Path, entries: list[tuple[str, str | None]], expected: dict[str, str]) -> None:
    """What vaultmem last wrote at each path, which outlives the state db (index/catalog.py
    known_writes): each writer's file read, in the order of the writes."""
    from vaultmem.vault.journal import append, last_written

    # alternate writers, so the order comes from `at`, not from one file's lines
    append(
        tmp_path,
        [Entry(f"2026-11-29T10:00:00.{i:03d}Z", "alice" if i % 2 else None, p, h) for i, (p, h) in enumerate(entries)],
    )
    assert last_written(tmp_path) == expected
