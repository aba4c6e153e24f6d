"""vault/racy.py: git's "racy clean" rule for one file a long-lived process keeps what it read
from (vaultmem.toml in the watcher, the token file in the HTTP server).

A stat proves the file unchanged only when it is the stat that was seen and its mtime is a
window older than when the file was read; otherwise the bytes are hashed again. The clock
is fixed through racy.now_ns; a file system whose ctime does not move either (the edit in
the same tick) is had by leaving the ctime out of racy.stat_key, so nothing races the clock.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultmem.vault import racy

W = racy.RACY_WINDOW_NS
T = 10 * W  # the mtime of the table's file
STAT = (1, 42, 100, T, T)  # (device, inode, size, mtime_ns, ctime_ns)


def seen(stat: tuple[int, int, int, int, int] = STAT, at: int = T + W + 1) -> racy.SeenFile:
    return racy.SeenFile(stat, "sha-of-what-was-read", at)


# (what was seen, the stat now) -> trusted without a read?
TRUST_CASES = [
    pytest.param(seen(at=T + W + 1), STAT, True, id="read-a-window-after-its-mtime-trusted"),
    pytest.param(seen(at=T + W), STAT, False, id="read-just-a-window-after-racy"),
    pytest.param(seen(at=T), STAT, False, id="read-in-the-tick-of-its-mtime-racy"),
    pytest.param(seen(at=T - W), STAT, False, id="mtime-ahead-of-the-clock-racy"),
    pytest.param(seen(), (1, 42, 101, T, T), False, id="size-differs"),
    pytest.param(seen(), (1, 42, 100, T + 1, T), False, id="mtime-differs"),
    pytest.param(seen(), (1, 43, 100, T, T), False, id="inode-differs-a-rename"),
    pytest.param(seen(), (1, 42, 100, T, T + 1), False, id="ctime-differs-mtime-put-back"),
    pytest.param(seen(), (2, 42, 100, T, T), False, id="device-differs"),
]


@pytest.mark.parametrize(("before", "now", "trusted"), TRUST_CASES)
def test_trusted(before: racy.SeenFile, now: tuple[int, int, int, int, int], trusted: bool) -> None:
    assert racy.trusted(before, now) is trusted


@pytest.mark.parametrize(
    ("mtime", "seen_at", "is_racy"),
    [(T, T + W + 1, False), (T, T + W, True), (T, T, True), (T, T - 1, True)],
)
def test_is_racy(mtime: int, seen_at: int, is_racy: bool) -> None:
    assert racy.is_racy(mtime, seen_at) is is_racy


@pytest.fixture
def same_tick_ctime(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a disk whose ctime too stays in one tick: only size, mtime, inode tell."""
    monkeypatch.setattr(racy, "stat_key", lambda st: (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, 0))


def _clock_at(monkeypatch: pytest.MonkeyPatch, moment: int) -> None:
    monkeypatch.setattr(racy, "now_ns", lambda: moment)


def _rewrite_keeping_the_stat(path: Path, text: str) -> None:
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def test_an_edit_in_the_tick_of_the_read_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, same_tick_ctime: None
) -> None:
    path = tmp_path / "vaultmem.toml"
    path.write_text('members = ["alice"]\n')
    _clock_at(monkeypatch, path.stat().st_mtime_ns)  # read in the tick of its mtime
    first = racy.look(path)
    _rewrite_keeping_the_stat(path, 'members = ["carol"]\n')
    assert first is not None and racy.trusted(first, racy.stat_key(path.stat())) is False
    now, changed = racy.look_again(first, path)
    assert changed and now is not None and now.sha256 != first.sha256


def test_a_stat_read_a_window_after_its_mtime_is_trusted_without_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "vaultmem.toml"
    path.write_text('members = ["alice"]\n')
    _clock_at(monkeypatch, path.stat().st_mtime_ns + W + 1)
    first = racy.look(path)

    def no_read(_: Path) -> None:
        raise AssertionError("a trusted stat is not read again")

    monkeypatch.setattr(racy, "look", no_read)
    assert racy.look_again(first, path) == (first, False)


def test_the_same_bytes_are_seen_again_until_the_stat_can_be_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{}\n")
    mtime = path.stat().st_mtime_ns
    _clock_at(monkeypatch, mtime)
    first = racy.look(path)
    assert first is not None
    _clock_at(monkeypatch, mtime + W + 1)
    again, changed = racy.look_again(first, path)  # racy: read, the same bytes
    assert not changed and again is not None and again.seen_ns == mtime + W + 1
    assert racy.look_again(again, path) == (again, False)  # now its stat answers
    os.utime(path, ns=(mtime + 5, mtime + 5))  # touched: read, still the same bytes
    touched, changed = racy.look_again(again, path)
    assert not changed and touched is not None and touched.sha256 == first.sha256


def test_a_file_that_comes_or_goes_is_a_change(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    assert racy.look(path) is None
    assert racy.look_again(None, path) == (None, False)
    path.write_text("{}\n")
    came, changed = racy.look_again(None, path)
    assert changed and came is not None
    path.unlink()
    assert racy.look_again(came, path) == (None, True)
