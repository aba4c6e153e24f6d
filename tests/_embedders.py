"""A deterministic tiny embedder for plumbing tests, and the hooks that install it.

`HashEmbedder` is a hashed bag of words: every lower-cased word adds ±1 to one of `dims`
buckets (a stable blake2 hash, so the same text embeds the same in every process), then the
vector is normalised. Notes sharing words are near; that is all it knows. It exercises
Chroma, the fingerprint and every filter for real, at no cost, but it is never the only
test of search quality: those tests load the real all-MiniLM-L6-v2 (tests marked slow).

Two ways in:
- in-process: `install(monkeypatch, embedder)` replaces `choose`/`load` of
  vaultmem.index.embedder, so CLI calls run through CliRunner use it (a vault whose
  backend is `none` keeps embeddings off);
- in a subprocess of `.venv/bin/vaultmem`: `hook_env(tmp_path)` returns environment
  variables that put a generated `sitecustomize.py` on PYTHONPATH; it installs the embedder
  named by `VMTEST_EMBEDDER` before the CLI starts.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
_WORD_RE = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    backend = "test-hash"

    def __init__(self, dims: int = 128, model: str = "hash-bow-v1") -> None:
        self.dims = dims
        self.model = model
        self.calls = 0
        self.texts = 0

    def vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dims
        for word in _WORD_RE.findall(text.lower()):
            digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dims
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0.0:
            vec[0] = 1.0  # an empty text still gets a valid unit vector
            return vec
        return [v / norm for v in vec]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts += len(texts)
        return [self.vector(t) for t in texts]


def install(monkeypatch: Any, embedder: HashEmbedder) -> HashEmbedder:
    """Make every App in this process embed with `embedder`, whatever the vault config says."""
    from vaultmem.index import embedder as emb

    original = emb.choose

    def choose(backend: str, model: str, precision: str = "float32") -> emb.Choice:
        if backend == "none":
            return original(backend, model, precision)  # a vault with embeddings off keeps them off
        return emb.Choice(embedder.backend, embedder.model, reason="test hash embedder", dims=embedder.dims)

    def load(choice: emb.Choice) -> HashEmbedder | None:
        return embedder if choice.backend == embedder.backend else None

    monkeypatch.setattr(emb, "choose", choose)
    monkeypatch.setattr(emb, "load", load)
    return embedder


def install_from_env() -> None:
    """Called by the generated sitecustomize.py in subprocesses."""
    group = os.environ.get("VMTEST_EMBED_GROUP_NOTES")
    if group:  # smaller embedding groups: a crash test can kill an index between two of them
        from vaultmem.index import engine

        engine.EMBED_GROUP_NOTES = int(group)
    if os.environ.get("VMTEST_EMBEDDER") != "hash":
        return

    class _Patch:
        def setattr(self, target: Any, name: str, value: Any) -> None:
            setattr(target, name, value)

    install(_Patch(), HashEmbedder())


def hook_env(tmp: Path, embedder: str | None = "hash") -> dict[str, str]:
    """Environment for a subprocess of .venv/bin/vaultmem, with the test embedder if asked."""
    hook_dir = tmp / "vmtest_hook"
    hook_dir.mkdir(parents=True, exist_ok=True)
    (hook_dir / "sitecustomize.py").write_text("import tests._embedders as _e\n_e.install_from_env()\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("VAULTMEM_") or k in ("VAULTMEM_CACHE_DIR", "VAULTMEM_NO_AUTOSTART")
    }
    env["PYTHONPATH"] = os.pathsep.join([str(hook_dir), str(REPO)])
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["COLUMNS"] = "100"
    if embedder:
        env["VMTEST_EMBEDDER"] = embedder
    else:
        env.pop("VMTEST_EMBEDDER", None)
    return env
