"""The bench's vaults: generated ones (tools/genvault.py, cached by size, seed and generator
version) copied to a working copy per backend, and the real Obsidian Help vault."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

from tools.bench.base import BenchBase
from tools.bench.model import BIN, GHOST, OBSIDIAN_KEYWORDS, OBSIDIAN_QUESTIONS, Row, VaultInfo
from tools.bench.util import (
    NA,
    run,
)
from tools.repo import REPO


class Vaults(BenchBase):
    def generated(self, n: int) -> Path:
        """A pristine generated vault, cached by size, seed and generator version."""
        digest = hashlib.sha256((REPO / "tools" / "genvault.py").read_bytes()).hexdigest()[:10]
        path = self.work / "gen" / f"n{n}-s{self.args.seed}-{digest}"
        if (path / ".genvault.json").is_file():
            return path
        # Vaults from an older generator version are stale: drop them rather than pile up.
        for stale in path.parent.glob(f"n{n}-s{self.args.seed}-*"):
            shutil.rmtree(stale, ignore_errors=True)
        self.log(f"generating {n} notes into {path}")
        corpus = self.corpora / "cranfield" / "cran.all.1400"
        argv = [
            sys.executable,
            "-m",
            "tools.genvault",
            str(path),
            "--notes",
            str(n),
            "--seed",
            str(self.args.seed),
            "--embedding",
            "none",
            "--corpus",
            str(corpus),
            "--json",
        ]
        r = run(argv, self.env, timeout=1800, cwd=REPO)
        if not r.ok:
            raise RuntimeError(f"genvault failed: {r.reason()}")
        self.raw.setdefault("generation", {})[str(n)] = json.loads(r.stdout)
        return path

    def working_copy(self, src: Path, name: str, backend: str) -> Path:
        """A fresh copy to index and edit; the cached vault stays pristine."""
        dst = self.work / "runs" / name
        self.stop_stray_watcher(dst)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".vaultmem"))
        toml = dst / "vaultmem.toml"
        text = re.sub(r'(?m)^backend = "[^"]*"', f'backend = "{backend}"', toml.read_text(encoding="utf-8"), count=1)
        toml.write_text(text, encoding="utf-8")
        return dst

    def cran_queries(self) -> list[str]:
        path = self.corpora / "cranfield" / "cran.qry"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        out = []
        for part in text.split(".W\n")[1:]:
            q = " ".join(part.split(".I ")[0].split()).rstrip(" .")
            if q:
                out.append(q)
        return out

    def synthetic_vault(self, n: int, backend: str, reuse: bool = False) -> VaultInfo:
        """`reuse` (--only): keep the working copy of an earlier run when its index is fresh."""
        gen = self.generated(n)
        path = self.work / "runs" / f"n{n}-{backend}"
        fresh = reuse and (path / ".vaultmem").is_dir() and self.index_fresh(path)
        if not fresh:
            path = self.working_copy(gen, f"n{n}-{backend}", backend)
        manifest = json.loads((gen / ".genvault.json").read_text(encoding="utf-8"))
        queries = self.cran_queries()[: self.n_queries]
        if len(queries) < self.n_queries:  # no corpus: topic words still carry signal
            queries += [" ".join(t["words"][:4]) for t in manifest["topics"]][: self.n_queries - len(queries)]
        stop = {
            "what",
            "which",
            "there",
            "have",
            "been",
            "does",
            "that",
            "with",
            "from",
            "when",
            "this",
            "about",
            "available",
            "problems",
            "possible",
        }
        keywords = []
        for q in queries[: self.n_keywords]:
            words = [w for w in re.findall(r"[a-z][a-z-]+", q) if len(w) >= 4 and w not in stop]
            keywords.append(" ".join(words[:3]))
        sample = manifest.get("sample") or []
        ref = sample[0]["id"] if sample else None
        return VaultInfo(f"{n:,} notes", path, n, backend, manifest, queries, keywords, ref, indexed=fresh)

    def index_fresh(self, vault: Path) -> bool:
        self.stop_stray_watcher(vault)
        r = self.vm("status", vault=vault, ghost=False, timeout=120)
        try:
            return bool(r.json().get("index", {}).get("fresh"))
        except NA:
            return False

    def obsidian(self) -> VaultInfo | None:
        src = self.corpora / "obsidian-help-en"
        if not src.is_dir():
            self.rows.append(Row("Obsidian Help vault", "all", f"n/a ({src} not found)"))
            return None
        dst = self.work / "runs" / "obsidian-help"
        self.stop_stray_watcher(dst)
        shutil.rmtree(dst, ignore_errors=True)
        r = run([str(BIN / "vaultmem"), "init", str(dst), "--ghost", GHOST, "--json"], self.env, timeout=60)
        if not r.ok:
            self.rows.append(Row("Obsidian Help vault", "`vaultmem init`", f"n/a ({r.reason()})"))
            return None
        shutil.copytree(src, dst / "shared", dirs_exist_ok=True)
        toml = dst / "vaultmem.toml"
        toml.write_text(
            re.sub(r'(?m)^backend = "[^"]*"', 'backend = "auto"', toml.read_text(encoding="utf-8"), count=1),
            encoding="utf-8",
        )
        count = sum(1 for p in dst.rglob("*.md") if ".vaultmem" not in p.parts)
        first = sorted((dst / "shared").rglob("*.md"))[0].relative_to(dst).as_posix()
        return VaultInfo(
            f"Obsidian Help ({count} notes)",
            dst,
            count,
            "auto",
            {},
            OBSIDIAN_QUESTIONS[: self.n_queries],
            OBSIDIAN_KEYWORDS[: self.n_keywords],
            first,
        )
