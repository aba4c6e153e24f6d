"""Issue 3, acceptance 4: kill -9 during `index --full`, then `index`: search results are
identical to those of a fresh index of the same files (`.vaultmem/` deleted and rebuilt).

The writer is the real `.venv/bin/vaultmem` in a subprocess; the test watches the state db
from outside and kills it at a chosen stage: after the catalog committed and before the
lexical index recorded anything (BM25 + graph), or half-way through embedding (vectors,
with the tiny test embedder installed in the subprocess by an env-selected hook).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests._embedders import HashEmbedder, hook_env
from tests.conftest import Cli
from tests.integration._vaults import comparable, fresh_copy, generate, make_vault, run, search_many, spawn

N_NOTES = 150
QUERIES = [
    "crash recovery fingerprint",
    "vector index search",
    "sqlite chroma whoosh",
    "token budget pack",
    "Generated note 00042",
]


def _count(db: Path, where: str) -> int:
    if not db.exists():
        return -1
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2) as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM files WHERE {where}").fetchone()[0])
    except sqlite3.Error:
        return -1  # not created yet, or mid-schema


def kill_when(
    proc: subprocess.Popen[str], ready: Callable[[], bool], midway: Callable[[], bool], timeout: float = 120
) -> bool:
    """SIGKILL `proc` as soon as `ready()` holds; False if it finished first, or if (on a
    busy machine) it got past the stage before the signal landed and `midway()` fails."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            if ready():
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
                return midway()
            time.sleep(0.005)
        raise AssertionError("the indexer never reached the stage to kill it at")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


def _searches(cli: Cli, modes: tuple[str, ...]) -> dict[str, object]:
    out = {}
    for mode in modes:
        for q in QUERIES:
            out[f"{mode}:{q}"] = comparable(cli.ok("search", q, "--mode", mode, "--limit", "15"))
    return out


@pytest.mark.parametrize("stage", ["reading", "lexical"])
def test_kill_during_full_index_then_index_converges_bm25(tmp_path: Path, stage: str) -> None:
    root = make_vault(tmp_path / "crash", backend="none")
    generate(root, N_NOTES)
    env = hook_env(tmp_path, embedder=None)
    run("index", "--vault", str(root), "--json", env=env)
    db = root / ".vaultmem" / "state.db"

    def ready() -> bool:
        if stage == "reading":  # `--full` has wiped the state db and is reading the files
            return _count(db, "1") == 0
        # every file read and committed, before Whoosh has recorded any note
        return _count(db, "status='note'") == N_NOTES and _count(db, "ft_hash IS NULL") > 0

    def midway() -> bool:
        return _count(db, "ft_hash IS NULL") > 0 or _count(db, "1") == 0

    spawns = (spawn("index", "--full", "--vault", str(root), "--json", env=env) for _ in range(5))
    assert any(kill_when(proc, ready, midway) for proc in spawns), f"could not kill index --full at {stage}"

    cli = Cli(root)
    report = cli.ok("index")
    assert report["errors"] == []
    assert cli.ok("status")["index"]["fresh"] is True
    after_crash = _searches(cli, ("bm25",))

    fresh = Cli(fresh_copy(root, tmp_path / "fresh"))
    assert fresh.ok("index")["added"] == N_NOTES
    assert after_crash == _searches(fresh, ("bm25",))
    assert any(after_crash[f"bm25:{q}"] for q in QUERIES)


# --- with vectors: subprocesses all the way (each process has its own Chroma) --------------------


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["lexical", "embedding-start", "embedding-middle"])
def test_kill_during_full_index_then_index_converges_with_vectors(tmp_path: Path, stage: str) -> None:
    root = make_vault(tmp_path / "crash", backend="auto")
    n = 80
    generate(root, n)
    env = hook_env(tmp_path)
    env["VMTEST_EMBED_GROUP_NOTES"] = "16"  # several groups, each committed: something to kill between
    first = json.loads(run("index", "--vault", str(root), "--json", env=env).stdout)
    assert first["embedded_notes"] == n and first["vectors"].startswith(HashEmbedder.backend)
    db = root / ".vaultmem" / "state.db"

    def ready() -> bool:
        notes, ft_null = _count(db, "status='note'"), _count(db, "ft_hash IS NULL")
        embedded = _count(db, "vec_hash IS NOT NULL AND vec_hash != 'gone'")
        if stage == "lexical":
            return notes == n and ft_null > 0
        if stage == "embedding-start":
            return notes == n and ft_null == 0 and embedded == 0
        return notes == n and ft_null == 0 and n // 4 <= embedded < n

    def midway() -> bool:
        return _count(db, "vec_hash IS NULL") > 0

    spawns = (spawn("index", "--full", "--vault", str(root), "--json", env=env) for _ in range(5))
    assert any(kill_when(proc, ready, midway) for proc in spawns), f"could not kill index --full at {stage}"

    recovered = json.loads(run("index", "--vault", str(root), "--json", env=env).stdout)
    assert recovered["errors"] == []
    status = json.loads(run("status", "--vault", str(root), "--json", env=env).stdout)
    assert status["index"]["fresh"] is True
    after_crash = search_many(root, env, ("bm25", "vector", "hybrid"), QUERIES)

    # the reference: delete .vaultmem/ and index again
    shutil.rmtree(root / ".vaultmem")
    rebuilt = json.loads(run("index", "--vault", str(root), "--json", env=env).stdout)
    assert rebuilt["added"] == n
    assert after_crash == search_many(root, env, ("bm25", "vector", "hybrid"), QUERIES)
