"""Issue 3, acceptance 8: one writer at a time. Two `index` processes at once: one waits or
exits 6 with a clear message, and the index is not corrupted. A lock left by a dead
process does not block anyone."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests._embedders import hook_env
from tests.conftest import Cli
from tests.integration._vaults import comparable, fresh_copy, generate, make_vault, note, spawn

QUERIES = ["crash recovery fingerprint", "vector index search", "Generated note 00007"]


def _searches(cli: Cli) -> dict[str, object]:
    return {q: comparable(cli.ok("search", q, "--limit", "10")) for q in QUERIES}


def test_two_index_processes_at_once_leave_a_sound_index(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "two", backend="none")
    n = 150
    generate(root, n)
    env = hook_env(tmp_path, embedder=None)
    procs = [spawn("index", "--full", "--vault", str(root), "--json", env=env) for _ in range(2)]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        outcomes.append((proc.returncode, out, err))
    codes = sorted(code for code, _, _ in outcomes)
    assert codes in ([0, 0], [0, 6]), outcomes
    for code, out, err in outcomes:
        assert "Traceback" not in err
        data = json.loads(out)
        if code == 0:
            assert data["added"] == n and data["errors"] == []
        else:
            assert data["error"]["code"] == "index_busy"
            assert "busy" in data["error"]["message"]
    cli = Cli(root)
    status = cli.ok("status")
    assert status["index"]["fresh"] is True and status["notes"]["total"] == n
    assert cli.ok("index")["fulltext_docs"] == 0
    fresh = Cli(fresh_copy(root, tmp_path / "fresh"))
    fresh.ok("index")
    assert _searches(cli) == _searches(fresh)


@pytest.fixture
def short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultmem.index import lock

    monkeypatch.setattr(lock, "DEFAULT_WAIT_S", 0.3)


def test_second_writer_gives_up_with_exit_6_and_says_who_holds_the_lock(
    bcli: Cli, bvault: Path, short_wait: None
) -> None:
    from vaultmem.index.lock import IndexLock

    note(bvault, "shared/a.md", "Alpha text.\n", title="A")
    bcli.ok("index")
    note(bvault, "shared/b.md", "Beta text.\n", title="B")
    with IndexLock(bvault / ".vaultmem" / "index.lock", role="watch"):
        res = bcli("index")
        assert res.exit_code == 6
        err = res.data["error"]
        assert err["code"] == "index_busy"
        assert "watch" in err["message"] and "busy" in err["message"]
        plain = bcli("index", json_=False)
        assert plain.exit_code == 6 and plain.stderr.startswith("vaultmem: error: the index is busy")
        assert plain.stdout == ""
        # search catches up first, so it waits for the writer too
        assert bcli("search", "beta").exit_code == 6
    # nothing was half-done while it waited
    report = bcli.ok("index")
    assert (report["added"], report["errors"]) == (1, [])
    assert [r["summary"]["path"] for r in bcli.ok("search", "beta")["results"]] == ["shared/b.md"]


def test_a_dead_writers_lock_file_blocks_nobody(bcli: Cli, bvault: Path, short_wait: None) -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    lock = bvault / ".vaultmem" / "index.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps({"pid": proc.pid, "role": "index", "since": 0}))
    note(bvault, "shared/a.md", "Alpha text.\n", title="A")
    assert bcli.ok("index")["added"] == 1


def test_a_waiting_writer_proceeds_when_the_lock_is_released(bcli: Cli, bvault: Path, tmp_path: Path) -> None:
    """The waiting side of 'one waits': a subprocess holds the lock briefly; index waits."""
    note(bvault, "shared/a.md", "Alpha text.\n", title="A")
    (bvault / ".vaultmem").mkdir()
    holder = subprocess.Popen(
        ["python3", "-c", (
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(1.0)\n"
            "print(time.time(), flush=True)\n"  # the moment it lets go
            "os.close(fd)\n"
        ), str(bvault / ".vaultmem" / "index.lock")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        report = bcli.ok("index")  # waits up to 15 s by default
        done = time.time()
        assert report["added"] == 1
        released = float(holder.stdout.readline())
        assert done >= released, "index ran while another process held the lock"
    finally:
        holder.wait(timeout=30)
        if holder.stdout:
            holder.stdout.close()
