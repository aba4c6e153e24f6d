"""An edit that keeps a note's size and mtime (two saves in one clock tick, a disk with
coarse timestamps, a tool that puts the mtime back) is still seen: a file whose mtime is not
safely older than the scan that recorded it is read again by the next scan (git's "racy
clean" rule, index/catalog.py), and trusted by its stat again once a later scan read it.

The tick is made deterministic, not raced for: the scans are told they happen at the note's
mtime (racy.now_ns, the clock compared with mtimes), and the edit puts the
recorded mtime back with os.utime to the nanosecond."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli._util import write
from tests.conftest import Cli
from vaultmem.vault import racy

NOTE = "shared/tick.md"


def _scans_at(monkeypatch: pytest.MonkeyPatch, moment_ns: int) -> None:
    monkeypatch.setattr(racy, "now_ns", lambda: moment_ns)


def _rewrite_in_the_same_tick(path: Path, old: str, new: str) -> None:
    """Other words of the same byte length, and the size and mtime the scan recorded."""
    assert len(old.encode()) == len(new.encode())
    before = path.stat()
    path.write_bytes(path.read_bytes().replace(old.encode(), new.encode()))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def _bm25(cli: Cli, text: str) -> list[str]:
    return [r["summary"]["path"] for r in cli.ok("search", text, "--mode", "bm25")["results"]]


def test_a_same_size_edit_in_the_same_tick_is_indexed(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(cli.vault, NOTE, "# Tick\n\nThe quokkaaaa migration plan.\n")
    _scans_at(monkeypatch, path.stat().st_mtime_ns)  # the scan reads the note in the tick it was saved
    cli.ok("index")
    version = cli.ok("get", NOTE)["note"]["version"]
    _rewrite_in_the_same_tick(path, "quokkaaaa", "wombatzzz")
    report = cli.ok("index")
    assert (report["added"], report["updated"], report["deleted"]) == (0, 1, 0)
    assert report["fulltext_docs"] == 1
    assert _bm25(cli, "wombatzzz") == [NOTE]
    assert _bm25(cli, "quokkaaaa") == []
    got = cli.ok("get", NOTE)
    assert "wombatzzz" in got["body"] and "quokkaaaa" not in got["body"]
    assert got["note"]["version"] == version + 1  # a hand edit is one more version


def test_get_sees_a_same_tick_edit_without_an_index(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """`get` catches up by itself: the version it reports is the edited file's."""
    path = write(cli.vault, NOTE, "# Tick\n\nThe quokkaaaa migration plan.\n")
    _scans_at(monkeypatch, path.stat().st_mtime_ns)
    cli.ok("index")
    version = cli.ok("get", NOTE)["note"]["version"]
    _rewrite_in_the_same_tick(path, "quokkaaaa", "wombatzzz")
    assert cli.ok("get", NOTE)["note"]["version"] == version + 1
    assert _bm25(cli, "wombatzzz") == [NOTE]


def test_a_note_read_safely_after_its_mtime_is_trusted_by_its_stat_again(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cost stays small: once a scan has read a note a window after its mtime, later
    scans trust its (size, mtime) and do not open it. (An edit that then puts back an old
    mtime to the nanosecond is the one change a stat cannot see; `index --full` reads all.)"""
    path = write(cli.vault, NOTE, "# Tick\n\nThe quokkaaaa migration plan.\n")
    mtime = path.stat().st_mtime_ns
    _scans_at(monkeypatch, mtime)
    cli.ok("index")
    _scans_at(monkeypatch, mtime + racy.RACY_WINDOW_NS + 1)
    assert cli.ok("index")["updated"] == 0  # read again (it was racy): unchanged
    _rewrite_in_the_same_tick(path, "quokkaaaa", "wombatzzz")
    assert cli.ok("index")["updated"] == 0  # not read: its stat is trusted
    assert cli.ok("index", "--full")["added"] >= 1
    assert _bm25(cli, "wombatzzz") == [NOTE]


def test_a_write_over_a_same_tick_hand_edit_is_a_conflict(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes never trusted the stat: they hash the file they read (services/revisions.py,
    vault/store.py replace_file). Kept so: an agent stating the version it read, or none,
    does not replace the person's words, and is told the version they made."""
    made = cli.ok("note", "create", "--title", "Tick", "--type", "note", "--scope", "shared", "--body", "quokkaaaa")
    path = cli.vault / made["path"]
    _scans_at(monkeypatch, path.stat().st_mtime_ns)
    cli.ok("index")
    version = cli.ok("get", made["path"])["note"]["version"]
    _rewrite_in_the_same_tick(path, "quokkaaaa", "wombatzzz")
    for extra in (["--expect-version", str(version)], []):
        res = cli("note", "update", made["path"], "--body", "An agent's text.", *extra, ghost="alice")
        assert res.exit_code == 4 and res.data["error"]["current_version"] == version + 1
    assert b"wombatzzz" in path.read_bytes()
