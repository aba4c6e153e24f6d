"""Files are the truth, `.vaultmem/` is derived (SPEC §4): deleting it, or one index inside
it, loses nothing — the next `index` rebuilds what is missing and search gives the same
results as before. With vectors, each step runs in a subprocess of the real CLI, so each
has its own Chroma client (slow); without, in-process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests._embedders import hook_env
from tests.conftest import Cli
from tests.integration._vaults import generate, make_vault, note, paths_of, run, search_many

N = 30
QUERIES = ["vector index search", "crash recovery fingerprint", "Generated note 00003"]
MODES = ("bm25", "vector", "hybrid")


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, dict[str, str], dict[str, object]]:
    root = make_vault(tmp_path / "d", backend="auto")
    generate(root, N)
    env = hook_env(tmp_path)
    report = json.loads(run("index", "--vault", str(root), "--json", env=env).stdout)
    assert report["added"] == N and report["embedded_notes"] == N
    return root, env, search_many(root, env, MODES, QUERIES)


def _index(root: Path, env: dict[str, str]) -> dict[str, object]:
    return json.loads(run("index", "--vault", str(root), "--json", env=env).stdout)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_deleting_vaultmem_or_its_lexical_index_loses_nothing(
    indexed: tuple[Path, dict[str, str], dict[str, object]],
) -> None:
    root, env, before = indexed
    shutil.rmtree(root / ".vaultmem" / "whoosh")
    report = _index(root, env)
    assert report["fulltext_docs"] == N and report["embedded_notes"] == 0
    assert search_many(root, env, MODES, QUERIES) == before
    shutil.rmtree(root / ".vaultmem")
    report = _index(root, env)
    assert report["added"] == N and report["embedded_notes"] == N
    assert search_many(root, env, MODES, QUERIES) == before


@pytest.mark.slow
def test_a_deleted_vector_store_is_rebuilt_by_the_next_index(
    indexed: tuple[Path, dict[str, str], dict[str, object]],
) -> None:
    root, env, before = indexed
    shutil.rmtree(root / ".vaultmem" / "chroma")
    report = _index(root, env)
    assert report["embedded_notes"] == N
    assert search_many(root, env, MODES, QUERIES) == before


def _bm25(cli: Cli) -> dict[str, object]:
    return {q: cli.ok("search", q, "--mode", "bm25")["results"] for q in QUERIES}


def test_deleting_vaultmem_or_its_lexical_index_loses_nothing_bm25(bcli: Cli, bvault: Path) -> None:
    """The same, in-process, without vectors: the fast version of the test above."""
    generate(bvault, N)
    bcli.ok("index")
    before = _bm25(bcli)
    assert any(before.values())
    shutil.rmtree(bvault / ".vaultmem" / "whoosh")
    report = bcli.ok("index")
    assert (report["added"], report["fulltext_docs"]) == (0, N)
    assert _bm25(bcli) == before
    shutil.rmtree(bvault / ".vaultmem")
    assert bcli.ok("index")["added"] == N
    assert _bm25(bcli) == before


def test_a_lexical_index_in_an_old_layout_is_rebuilt(bcli: Cli, bvault: Path) -> None:
    """What an upgrade of the Whoosh schema looks like: the first search already sees it all."""
    note(bvault, "shared/a.md", "Walruses bask on ice floes.\n", title="Walrus")
    bcli.ok("index")
    (bvault / ".vaultmem" / "whoosh" / "VAULTMEM_SCHEMA").write_text("w0-old")
    assert paths_of(bcli.ok("search", "walruses", "--mode", "bm25")) == ["shared/a.md"]
    assert bcli.ok("index")["fulltext_docs"] == 0
