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


def test_a_session_run_holds_a_bounded_number_of_tokens(model_dir: Path) -> None:
    # onnxruntime keeps the memory of its largest run: full-window texts go fewer at a time
    exported = _exported(str(model_dir))
    assert exported is not None
    shapes: list[tuple[int, int]] = []
    session = exported._session

    class Spy:
        def run(self, outputs: object, feeds: dict[str, np.ndarray]) -> object:
            shapes.append(feeds["input_ids"].shape)
            return session.run(outputs, feeds)

    texts = ["long " * 400] * 20 + ["short text"] * 20
    exported._session = Spy()
    try:
        ours = np.array(exported.embed(texts))
    finally:
        exported._session = session
    assert [w for _, w in shapes][:1] == [256]  # longest first, at the full window
    assert all(n * w <= onnx_export.RUN_TOKENS for n, w in shapes)
    assert sum(n for n, _ in shapes) == len(texts)
    theirs = _load_sentence_transformer(str(model_dir)).encode(texts, normalize_embeddings=True)
    assert np.abs(ours - theirs).max() < 1e-5


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


# --- int8 ([embedding] precision = "int8") ------------------------------------------------


def test_the_int8_model_is_quantized_locally_next_to_the_export(model_dir: Path) -> None:
    exported = _exported(str(model_dir))
    int8 = _exported(str(model_dir), "int8")
    assert exported is not None and int8 is not None
    assert int8.precision == "int8" and int8.file == onnx_export.quantized_path(model_dir)
    assert int8.file.parent == exported.file.parent and int8.file != exported.file
    assert int8.file.stat().st_size < exported.file.stat().st_size * 0.75  # int8 MatMul weights
    ours = np.array(int8.embed(TEXTS))
    theirs = np.array(exported.embed(TEXTS))
    cosines = (ours * theirs).sum(axis=1)
    assert ours.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    # close to the float vectors (measured 0.970 for the empty text, >= 0.984 for the rest)...
    assert cosines.min() > 0.95 and np.median(cosines) > onnx_export.MIN_COSINE
    assert np.abs(ours - theirs).max() > 1e-4  # ...but not the same: hence a fingerprint of their own


def test_choosing_int8_gives_an_int8_embedder_with_its_own_fingerprint(model_dir: Path) -> None:
    from vaultmem.index.embedder import fingerprint

    choice = choose("auto", "all-MiniLM-L6-v2", "int8")
    assert choice.precision == "int8" and choice.dims == 384
    embedder = load(choice)
    assert embedder is not None and getattr(embedder, "precision", None) == "int8"
    assert embedder.exported().precision == "int8"  # type: ignore[attr-defined]
    float_choice = choose("auto", "all-MiniLM-L6-v2")
    assert float_choice.precision == "float32"
    assert fingerprint(choice.backend, choice.model, 384, "c4", choice.precision) != fingerprint(
        float_choice.backend, float_choice.model, 384, "c4", float_choice.precision
    )


def test_int8_never_falls_back_to_float_vectors(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultmem.index.embedder import EmbeddingUnavailable

    embedder = load(choose("auto", "all-MiniLM-L6-v2", "int8"))
    assert embedder is not None
    monkeypatch.setattr(type(embedder), "exported", lambda self: None)  # the int8 model could not be made
    with pytest.raises(EmbeddingUnavailable):
        embedder.embed(["x"])


def test_an_int8_model_that_disagrees_is_not_used(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    float_file = _exported(str(model_dir)).file  # type: ignore[union-attr]
    monkeypatch.setenv("VAULTMEM_CACHE_DIR", str(tmp_path))
    # the float export is already made: copy it where this cache dir expects it
    target = onnx_export.onnx_path(model_dir)
    target.parent.mkdir(parents=True)
    target.write_bytes(float_file.read_bytes())
    monkeypatch.setattr(onnx_export, "cosine_agreement", lambda model, reference: 0.5)
    assert onnx_export.open_quantized(model_dir, lambda: _load_sentence_transformer(str(model_dir))) is None
    assert not onnx_export.quantized_path(model_dir).exists()
