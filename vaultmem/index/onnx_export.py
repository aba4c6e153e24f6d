"""A sentence-transformers BERT model (the bundled all-MiniLM-L6-v2) run by onnxruntime.

A search embeds one short query. Through sentence-transformers that costs ~14 ms on this
project's 2-core machines, mostly PyTorch's per-operator overhead; the same weights run by
onnxruntime take ~5 ms, and a process that embeds never imports torch at all (seconds of a
cold `search`, ~300 MB of the watcher). Batches of chunks are also a little faster (~19
against ~17 chunks/s measured on 1,200-character chunks).

The ONNX graph is exported from the loaded sentence-transformers model once per model and
kept in the user's cache directory (`$VAULTMEM_CACHE_DIR`, else `$XDG_CACHE_HOME/vaultmem`,
else `~/.cache/vaultmem`). An export is kept only if it reproduces the model's own vectors
(max abs difference 1e-4 on probe texts; measured ~1e-7), so a query vector means the same as
the document vectors it is compared with and the index fingerprint does not change. When
anything is missing (the `onnx` package for the export, onnxruntime, a writable cache) the
caller keeps using sentence-transformers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("vaultmem.embedder")

EXPORT_VERSION = "1"  # bump when the exported graph or its inputs change
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
PROBES = (
    "database migration plan",
    "Wikilinks: [[Note]] and #tags, ünïcödé, 日本語のテキスト, emoji 🚀",
    "a long passage " * 200,  # longer than max_seq_length: truncation must agree
)
MAX_DIFF = 1e-4


def cache_dir() -> Path:
    explicit = os.environ.get("VAULTMEM_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vaultmem"


def max_seq_length(model_dir: Path) -> int:
    try:
        data = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(data["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 256


def onnx_path(model_dir: Path) -> Path:
    """Where the export of the model in `model_dir` lives: named after its files' sizes and
    times, so a reinstalled or different model never meets an old export."""
    parts = [EXPORT_VERSION, str(model_dir.resolve()), str(max_seq_length(model_dir))]
    for name in ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json"):
        try:
            st = (model_dir / name).stat()
        except OSError:
            continue
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    digest = hashlib.sha1("\n".join(parts).encode("utf-8")).hexdigest()[:16]
    return cache_dir() / "onnx" / f"{model_dir.name}-{digest}.onnx"


class ExportedModel:
    """Tokenizer (the model's own tokenizer.json) + ONNX BERT + mean pooling + L2 norm: what
    the sentence-transformers pipeline of all-MiniLM-L6-v2 computes."""

    THREADS = min(4, os.cpu_count() or 1)

    def __init__(self, model_file: Path, model_dir: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_seq_length(model_dir))
        self._tokenizer.no_padding()  # tokenizer.json pads to 128; embed() pads per batch
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.THREADS
        options.inter_op_num_threads = 1
        # Worker threads sleep as soon as a run ends instead of spinning for the next one:
        # the watcher's idle CPU stays at zero, and a query's spare core goes to BM25.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str], batch: int = 16) -> list[list[float]]:
        """Unit vectors of `texts`, run `batch` at a time in order of length (as
        sentence-transformers does), so a batch pads its texts to a similar length: at
        batches of 32 in the given order, padding cost ~30% of the throughput."""
        import numpy as np

        encodings = [(e.ids, e.type_ids) for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(encodings)), key=lambda i: -len(encodings[i][0]))
        out: list[list[float]] = [[] for _ in encodings]
        for start in range(0, len(order), batch):
            group = order[start : start + batch]
            width = len(encodings[group[0]][0])
            ids = np.zeros((len(group), width), dtype=np.int64)  # [PAD] is token 0
            types = np.zeros((len(group), width), dtype=np.int64)
            mask = np.zeros((len(group), width), dtype=np.int64)
            for row, i in enumerate(group):
                n = len(encodings[i][0])
                ids[row, :n] = encodings[i][0]
                types[row, :n] = encodings[i][1]
                mask[row, :n] = 1
            (hidden,) = self._session.run(None, dict(zip(INPUTS, (ids, mask, types), strict=True)))
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            unit = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for row, i in enumerate(group):
                out[i] = unit[row].tolist()
        return out


def export(st_model: Any, target: Path) -> None:
    """Write the ONNX graph of a loaded sentence-transformers BERT to `target`, atomically."""
    import torch

    bert = st_model[0].auto_model.eval()

    class Hidden(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    sample = st_model.tokenizer(["warm up"], return_tensors="pt")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Hidden(bert),
                tuple(sample[k] for k in INPUTS),
                tmp,
                input_names=list(INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes={name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")},
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def agrees(exported: ExportedModel, reference: Callable[[list[str]], Any]) -> float:
    """The largest difference between the export's vectors and the model's own on PROBES."""
    import numpy as np

    ours = np.array(exported.embed(list(PROBES)), dtype=np.float32)
    theirs = np.array(reference(list(PROBES)), dtype=np.float32)
    return float(np.abs(ours - theirs).max())


def open_exported(model_dir: Path, load_model: Callable[[], Any]) -> ExportedModel | None:
    """The exported model in `model_dir`, exporting it first if there is no export
    yet (which loads the model through `load_model`); None when that cannot be done."""
    target = onnx_path(model_dir)
    if target.exists():
        try:
            return ExportedModel(target, model_dir)
        except Exception as exc:
            log.warning("cached ONNX export %s unreadable (%s); exporting again", target, exc)
            target.unlink(missing_ok=True)
    missing = [name for name in ("onnx", "onnxruntime") if importlib.util.find_spec(name) is None]
    if missing:
        log.info("no ONNX export (%s not installed); embedding with sentence-transformers", ", ".join(missing))
        return None
    # The one slow step of a first run (~20 s): say so while it happens, and how long it took.
    # Records marked `notice` are for the person at the terminal (cli/common.py shows them).
    log.info(
        "preparing the embedding model %s for first use (once per machine, about 20 s)…",
        model_dir.name,
        extra={"notice": True},
    )
    started = time.perf_counter()
    try:
        model = load_model()
        export(model, target)
        exported = ExportedModel(target, model_dir)
        diff = agrees(exported, lambda texts: model.encode(texts, normalize_embeddings=True, convert_to_numpy=True))
        if diff > MAX_DIFF:
            log.warning("ONNX export of %s differs from the model by %.2g; not used", model_dir.name, diff)
            target.unlink(missing_ok=True)
            return None
        log.info("exported %s to %s (max difference %.2g)", model_dir.name, target, diff)
        log.info("embedding model ready in %.1f s", time.perf_counter() - started, extra={"notice": True})
        return exported
    except ImportError as exc:
        log.info("no ONNX export (%s); embedding with sentence-transformers", exc)
    except Exception as exc:
        # torch.onnx, onnxruntime and the filesystem raise their own types; any of them
        # only means embedding takes the slower path.
        log.warning("no ONNX export (%s: %s); embedding with sentence-transformers", type(exc).__name__, exc)
    return None
