#!/usr/bin/env python3
"""Embedding throughput: `vaultmem index` with vectors against the raw model (issue 14).

Two figures on the same chunks, in the same process and run:
- raw: the exported model alone (ExportedModel.embed: the model's tokenizer, the onnxruntime
  session at the indexer's batch size, pooling) over every chunk a full index embeds, in one
  call, sorted by length as that call does; also the session alone on pre-tokenized batches;
- index: a full reconcile of the vault (catalog, BM25, vectors into Chroma) with the model
  loaded and the vector store opened beforehand (both once per process): embedded chunks /
  seconds of the whole reconcile, and of its vector stage.
Wall-clock figures and per-CPU-second figures (this process's CPU time, all threads) are
both printed: on a machine shared with other work the CPU figures are the steadier ones.
The ratio raw / index is what indexing loses to everything that is not the model.

Usage:
  python -m tools.bench.embed --vault PATH [--precision float32|int8] [--repeat 2]
  python -m tools.bench.embed --corpora ../shared/corpora [--corpus obsidian|cranfield] [--notes 1000]
                         [--work bench-work/embed] [--precision int8]

With --corpora a vault is built under --work (per corpus and precision) from the Obsidian Help
vault or the first --notes Cranfield abstracts; with --precision the vault's
`[embedding] precision` is set before indexing (a --vault of your own is left as it is unless
--precision is given).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from tools.corpora import load_cranfield, load_vault_notes
from tools.evalkit.vaults import set_precision
from tools.repo import WORK


def _log(message: str) -> None:
    print(f"[embed_bench] {message}", file=sys.stderr, flush=True)


def _cli(*args: str) -> None:
    exe = Path(sys.executable).parent / "vaultmem"
    subprocess.run([str(exe) if exe.exists() else "vaultmem", *args], check=True, capture_output=True)


def corpus_files(corpora: Path, corpus: str, notes: int) -> dict[str, str]:
    if corpus == "obsidian":
        return {f"shared/{rel}": text for rel, text in load_vault_notes(corpora / "obsidian-help-en").items()}
    data = load_cranfield(corpora / "cranfield")
    docs = sorted(data.docs.values(), key=lambda d: int(d.id))[:notes]
    out = {}
    for doc in docs:
        front = f"title: {json.dumps(doc.title)}\n" if doc.title else ""
        out[f"shared/cran-{int(doc.id):04d}.md"] = f"---\n{front}---\n{doc.text.strip()}\n"
    return out


def build_vault(vault: Path, files: Mapping[str, str]) -> None:
    if not (vault / "vaultmem.toml").exists():
        vault.parent.mkdir(parents=True, exist_ok=True)
        _cli("init", str(vault))
        for path in list(vault.rglob("*.md")):  # the template's example notes
            if not any(part.startswith(".") for part in path.relative_to(vault).parts):
                path.unlink()
    for rel, text in files.items():
        target = vault / rel
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def session_only(exported: Any, texts: Sequence[str], batch: int) -> float:
    """Seconds of the onnxruntime session alone over `texts` (tokenized and padded first)."""
    import numpy as np

    from vaultmem.index.onnx_export import INPUTS

    enc = [e.ids for e in exported._tokenizer.encode_batch(list(texts))]
    enc.sort(key=len, reverse=True)
    feeds = []
    for first in range(0, len(enc), batch):
        group = enc[first : first + batch]
        width = len(group[0])
        ids = np.zeros((len(group), width), dtype=np.int64)
        mask = np.zeros((len(group), width), dtype=np.int64)
        for row, seq in enumerate(group):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feeds.append(dict(zip(INPUTS, (ids, mask, np.zeros_like(ids)), strict=True)))
    start = time.perf_counter()
    for feed in feeds:
        exported._session.run(None, feed)
    return time.perf_counter() - start


def measure(vault: Path, repeat: int) -> dict[str, Any]:
    from vaultmem.services.app import App

    app = App.open(vault, None)
    try:
        embedder = app.indexes.embedder()
        if embedder is None:
            raise SystemExit("embeddings are off for this vault (backend none or no model installed)")
        embedder.embed(["warm up"])  # the model loads (or is exported/quantized) here, not in a timing
        identity = app.indexes.vector_identity()
        if identity is not None:  # so is Chroma (import and client start, ~1.4 s): once per process too
            app.indexes.vector_index(identity[0])
        exported = embedder.exported() if hasattr(embedder, "exported") else None
        if exported is None:
            raise SystemExit("no ONNX export of the model: nothing to compare the index with")
        batch = getattr(exported, "BATCH", 16)
        results: dict[str, list[float]] = {"raw": [], "session": [], "index": [], "vectors": []}
        cpu: dict[str, list[float]] = {"raw": [], "index": []}
        model_embed = embedder.embed
        texts: list[str] = []

        def counting_embed(batch_texts: Sequence[str]) -> list[list[float]]:
            texts.extend(batch_texts)  # exactly what the index ran through the model
            return model_embed(batch_texts)

        embedder.embed = counting_embed  # type: ignore[method-assign,assignment]
        for round_ in range(repeat):
            # The index first (a fresh catalog and collection), then the raw runs over the
            # very texts it embedded.
            texts.clear()
            indexer = app.indexes.indexer(None)
            stage: list[float] = []
            sync = indexer.sync_vectors

            def timed_sync(bodies: dict[str, str], sync: Any = sync, stage: list[float] = stage) -> Any:
                start = time.perf_counter()
                out = sync(bodies)
                stage.append(time.perf_counter() - start)
                return out

            indexer.sync_vectors = timed_sync  # type: ignore[method-assign]
            with app.lock("index"):
                start, cpu_start = time.perf_counter(), time.process_time()
                report = indexer.run(full=True)
                results["index"].append(time.perf_counter() - start)
                cpu["index"].append(time.process_time() - cpu_start)
            results["vectors"].append(stage[0] if stage else float("nan"))
            chunks = len(texts)
            stored = (report.embedded_chunks or 0) + (report.kept_chunks or 0)
            if chunks != stored:
                _log(f"{stored} chunks stored, {chunks} embedded (repeated texts embed once)")
            snapshot = list(texts)
            cpu_start = time.process_time()

            def embed_all(snapshot: list[str] = snapshot) -> Any:
                return exported.embed(snapshot)

            results["raw"].append(timed(embed_all))
            cpu["raw"].append(time.process_time() - cpu_start)
            results["session"].append(session_only(exported, snapshot, batch))
            _log(
                f"round {round_ + 1}: index {results['index'][-1]:.1f} s (vectors {results['vectors'][-1]:.1f} s, "
                f"cpu {cpu['index'][-1]:.1f} s), raw {results['raw'][-1]:.1f} s (cpu {cpu['raw'][-1]:.1f} s), "
                f"session {results['session'][-1]:.1f} s, {chunks} chunks"
            )
        best = {k: min(v) for k, v in results.items()}
        out: dict[str, Any] = {
            "vault": str(vault),
            "precision": getattr(embedder, "precision", "float32"),
            "notes": report.embedded_notes,
            "chunks": chunks,
            "batch": batch,
            "threads": getattr(exported, "THREADS", None),
            "raw_chunks_per_s": chunks / best["raw"],
            "session_chunks_per_s": chunks / best["session"],
            "index_chunks_per_s": chunks / best["index"],
            "vector_stage_chunks_per_s": chunks / best["vectors"],
            "seconds": results,
            "cpu_seconds": cpu,
            "raw_chunks_per_cpu_s": chunks / min(cpu["raw"]),
            "index_chunks_per_cpu_s": chunks / min(cpu["index"]),
        }
        out["ratio"] = out["raw_chunks_per_s"] / out["index_chunks_per_s"]
        return out
    finally:
        app.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--vault", type=Path, help="an existing vault (its notes are indexed anew)")
    where.add_argument("--corpora", type=Path, help="folder with obsidian-help-en/ and cranfield/")
    parser.add_argument("--corpus", choices=("obsidian", "cranfield"), default="obsidian")
    parser.add_argument("--notes", type=int, default=1000, help="Cranfield abstracts to use")
    parser.add_argument("--work", type=Path, default=WORK / "embed")
    parser.add_argument("--precision", choices=("float32", "int8"), default=None)
    parser.add_argument("--repeat", type=int, default=1, help="rounds; the best of each figure is reported")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.vault is not None:
        vault = args.vault.resolve()
    else:
        suffix = f"-{args.notes}" if args.corpus == "cranfield" else ""
        vault = (args.work / f"{args.corpus}{suffix}-{args.precision or 'default'}").resolve()
        build_vault(vault, corpus_files(args.corpora, args.corpus, args.notes))
    if args.precision is not None:
        set_precision(vault, args.precision)
    figures = measure(vault, max(1, args.repeat))
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"{figures['chunks']} chunks of {figures['notes']} notes, precision {figures['precision']}, "
            f"batch {figures['batch']}, {figures['threads']} threads\n"
            f"raw model (tokenizer + session + pooling): {figures['raw_chunks_per_s']:.1f} chunks/s\n"
            f"session alone:                             {figures['session_chunks_per_s']:.1f} chunks/s\n"
            f"vaultmem index --full (whole reconcile):   {figures['index_chunks_per_s']:.1f} chunks/s\n"
            f"  its vector stage:                        {figures['vector_stage_chunks_per_s']:.1f} chunks/s\n"
            f"ratio raw / index: {figures['ratio']:.2f}x (wall); "
            f"per CPU second {figures['raw_chunks_per_cpu_s']:.1f} vs {figures['index_chunks_per_cpu_s']:.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
