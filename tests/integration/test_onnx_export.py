"""The ONNX export of the model (index/onnx_export.py) against the model itself.

Wherever the export exists it embeds queries and chunks; where it cannot be made,
sentence-transformers does. The two must give the same vectors, or an index built on one
machine and searched on another (or before and after an export) would compare unlike
things. Slow: loads the real all-MiniLM-L6-v2 and exports it (once per session)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vaultmem.index import onnx_export
from vaultmem.index.embedder import _bundled_path, _exported, _load_sentence_transformer, choose, load

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


def test_exported_vectors_match_the_model(model_dir: Path) -> None:
    model = _load_sentence_transformer(str(model_dir))
    exported = _exported(str(model_dir))
    assert exported is not None, "the export should be made where the model is"
    ours = np.array(exported.embed(TEXTS))
    theirs = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.abs(ours - theirs).max() < 1e-5
    # one at a time as search does, and in a batch with padding: the same vectors
    singles = np.array([exported.embed([t])[0] for t in TEXTS])
    assert np.abs(singles - ours).max() < 1e-5


def test_the_embedder_embeds_through_the_export(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = load(choose("auto", "all-MiniLM-L6-v2"))
    assert embedder is not None and embedder.dims == 384
    # several batches of texts of mixed length: the export sorts them by length and back
    texts = [f"chunk {i} about heat transfer " + "and more words " * (i * 7 % 60) for i in range(70)]
    through_export = embedder.embed(texts)
    monkeypatch.setattr(type(embedder), "exported", lambda self: None)  # as where no export can be made
    through_torch = embedder.embed(texts)
    assert np.abs(np.array(through_export) - np.array(through_torch)).max() < 1e-5


def test_a_broken_export_is_made_again(model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTMEM_CACHE_DIR", str(tmp_path))
    target = onnx_export.onnx_path(model_dir)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not an onnx file")
    exported = onnx_export.open_exported(model_dir, lambda: _load_sentence_transformer(str(model_dir)))
    assert exported is not None
    assert target.stat().st_size > 1_000_000
    assert len(exported.embed(["x"])[0]) == 384


def test_no_export_without_the_export_tools(model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTMEM_CACHE_DIR", str(tmp_path))

    def no_onnx(model: object, target: Path) -> None:
        raise ImportError("No module named 'onnx'")

    monkeypatch.setattr(onnx_export, "export", no_onnx)
    assert onnx_export.open_exported(model_dir, lambda: _load_sentence_transformer(str(model_dir))) is None
    assert not onnx_export.onnx_path(model_dir).exists()


def test_an_export_that_disagrees_with_the_model_is_not_used(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTMEM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(onnx_export, "agrees", lambda exported, reference: 0.5)
    assert onnx_export.open_exported(model_dir, lambda: _load_sentence_transformer(str(model_dir))) is None
    assert not onnx_export.onnx_path(model_dir).exists()
