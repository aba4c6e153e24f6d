"""A note the model reads whole is embedded as one chunk (index/chunking.note_chunks): the
chunk budget is an estimate kept below the window, so a 230-piece note used to become two
half-notes. Checked with the bundled model's own tokenizer and a real index."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration._vaults import index_contents, note

pytestmark = pytest.mark.slow


def _words(n: int) -> str:
    # "wing" is one word piece of all-MiniLM-L6-v2's vocabulary: n words, n pieces
    return " ".join(["wing"] * n)


def test_the_window_check_counts_the_models_pieces(real_model_available: None) -> None:
    from vaultmem.index.embedder import SentenceTransformerEmbedder, _bundled_path

    path = _bundled_path()
    assert path is not None
    fits = SentenceTransformerEmbedder(path, "all-MiniLM-L6-v2", dims=384).fits_window()
    assert fits is not None
    # 256 pieces with [CLS] and [SEP]: the whole window, and one more is past it
    assert fits(_words(254)) is True
    assert fits(_words(255)) is False
    assert fits(_words(400)) is False


def test_a_note_that_fits_the_window_is_one_chunk(model_cli: Cli, model_vault: Path) -> None:
    # Over the 200-token budget, so chunk_note alone splits both; only the first fits
    # the model's window with its title.
    note(model_vault, "shared/fits.md", _words(230) + "\n", title="Wing")
    note(model_vault, "shared/long.md", _words(300) + "\n", title="Wing")
    report = model_cli.ok("index")
    assert report["embedded_notes"] == 2
    (collection,) = index_contents(model_vault)["collections"].values()
    chunks = sorted((str(m["path"]), int(m["chunk"])) for m in collection["metadatas"])
    assert chunks == [("shared/fits.md", 0), ("shared/long.md", 0), ("shared/long.md", 1)]
    assert report["embedded_chunks"] == 3
