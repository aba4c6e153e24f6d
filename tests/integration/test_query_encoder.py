"""The ONNX query encoder (index/query_encoder.py) against the model it is exported from.

Queries are embedded through onnxruntime, documents through sentence-transformers; the two
must give the same vectors, or dense search would compare unlike things. Slow: loads the
real all-MiniLM-L6-v2 and exports it (once per session)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vaultmem.index import query_encoder
from vaultmem.index.embedder import _bundled_path, _load_sentence_transformer, _query_encoder, choose, load

pytestmark = pytest.mark.slow

TEXTS = [
    "",
    "boundary layer",
    "What similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft?",
    "Wikilinks [[Note]], #tags, code `x = 1`, ünïcödé, 日本語のテキスト, emoji 🚀",
    "long " * 400,  # beyond max_seq_length (256 tokens): both truncate
]


@pytest.fixture(scope="module")
def model_dir(real_model_available: None) -> Path:
    path = _bundled_path()
    assert path is not None
    return Path(path)


def test_query_vectors_match_the_model(model_dir: Path) -> None:
    model = _load_sentence_transformer(str(model_dir))
    encoder = _query_encoder(str(model_dir))
    assert encoder is not None, "the query encoder should be available where the model is"
    ours = np.array(encoder.embed(TEXTS))
    theirs = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.abs(ours - theirs).max() < 1e-5
    # one at a time as search does, and in a batch with padding: the same vectors
    singles = np.array([encoder.embed([t])[0] for t in TEXTS])
    assert np.abs(singles - ours).max() < 1e-5


def test_the_embedder_sends_queries_to_the_encoder_and_batches_to_the_model(model_dir: Path) -> None:
    embedder = load(choose("auto", "all-MiniLM-L6-v2"))
    assert embedder is not None and embedder.dims == 384
    query = embedder.embed(["heat transfer"])
    batch = embedder.embed(["heat transfer", "a", "b", "c", "d"])  # five: the model's path
    assert np.abs(np.array(query[0]) - np.array(batch[0])).max() < 1e-5


def test_a_broken_export_is_made_again(model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTMEM_CACHE_DIR", str(tmp_path))
    target = query_encoder.onnx_path(model_dir)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not an onnx file")
    encoder = query_encoder.open_encoder(model_dir, lambda: _load_sentence_transformer(str(model_dir)))
    assert encoder is not None
    assert target.stat().st_size > 1_000_000
    assert len(encoder.embed(["x"])[0]) == 384


def test_no_encoder_without_the_export_tools(model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTMEM_CACHE_DIR", str(tmp_path))

    def no_onnx(model: object, target: Path) -> None:
        raise ImportError("No module named 'onnx'")

    monkeypatch.setattr(query_encoder, "export", no_onnx)
    assert query_encoder.open_encoder(model_dir, lambda: _load_sentence_transformer(str(model_dir))) is None
    assert not query_encoder.onnx_path(model_dir).exists()


def test_an_export_that_disagrees_with_the_model_is_not_used(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTMEM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(query_encoder, "agrees", lambda encoder, reference: 0.5)
    assert query_encoder.open_encoder(model_dir, lambda: _load_sentence_transformer(str(model_dir))) is None
    assert not query_encoder.onnx_path(model_dir).exists()
