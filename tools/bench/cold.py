"""Rows of a cold CLI process: startup, full and no-op index, `query` and `search`, each
beside its peer (bm25s, exact cosine, ripgrep) measured in the same run."""

from __future__ import annotations

import re
import shutil
import sys
from typing import Any

from tools.bench.model import BIN, VaultInfo
from tools.bench.report import at_target_size
from tools.bench.util import (
    NA,
    Run,
    lat,
    mb,
    median,
    ms,
    rate,
    run,
    secs,
)
from tools.bench.vaults import Vaults


class ColdRows(Vaults):
    def startup(self) -> None:
        area = "Startup (cold CLI process)"

        def help_() -> tuple[str, str, str, bool | None]:
            runs = self.repeat(lambda _: [str(BIN / "vaultmem"), "--help"], self.reps)
            t = [r.seconds for r in runs]
            floor = self.repeat(lambda _: [sys.executable, "-c", "pass"], self.reps)
            peer = f"`python -c pass`: p50 {ms(median([r.seconds for r in floor]))}"
            rss = max(r.maxrss_mb for r in runs)
            self.mem("`vaultmem --help`", rss)
            heavy = self.heavy_imports(["--help"])
            notes = f"{len(t)} runs; peak RSS {mb(rss)}; heavy imports: {', '.join(heavy) or 'none'}"
            return lat(t), peer, notes, median(t) < 0.150 and not heavy

        self.add(area, "`vaultmem --help`", "< 150 ms; no chromadb/model import", help_)

    def heavy_imports(self, args: list[str]) -> list[str]:
        """Which of chromadb, torch, sentence-transformers and onnxruntime a command imports
        (SPEC §7: `--help` and `get` never do), from one run of the installed command with
        PYTHONPROFILEIMPORTTIME (the native launcher hands these commands to Python, which
        reports its imports the same way)."""
        r = run([str(BIN / "vaultmem"), *args], {**self.env, "PYTHONPROFILEIMPORTTIME": "1"}, timeout=120)
        if not r.ok:
            raise NA(f"importtime run: {r.reason()}")
        found = set(
            re.findall(
                r"\|\s+(chromadb|torch|sentence_transformers|onnxruntime|transformers)(?:\.|\s*$)",
                r.stderr,
                flags=re.MULTILINE,
            )
        )
        return sorted(found)

    def get_status(self, v: VaultInfo) -> None:
        area = "Startup (cold CLI process)"

        def get() -> tuple[str, str, str, bool | None]:
            if not v.ref:
                raise NA("no note reference in the manifest")
            runs = self.repeat(lambda _: self.vm_argv(v.path, "get", v.ref or ""), self.reps)
            t = [r.seconds for r in runs]
            rss = max(r.maxrss_mb for r in runs)
            self.mem(f"`get` · {v.label} · backend {v.backend}", rss)
            heavy = self.heavy_imports(self.vm_argv(v.path, "get", v.ref)[1:])
            notes = (
                f"{len(t)} runs on an indexed vault; peak RSS {mb(rss)}; heavy imports: {', '.join(heavy) or 'none'}"
            )
            return lat(t), "", notes, not heavy

        def status() -> tuple[str, str, str, bool | None]:
            self.require("status")
            runs = self.repeat(lambda _: self.vm_argv(v.path, "status", ghost=False), max(3, self.reps // 3))
            t = [r.seconds for r in runs]
            fresh = runs[-1].json().get("index", {}).get("fresh")
            return lat(t), "", f"{len(t)} runs; index fresh: {fresh}", None

        self.add(area, f"`get ID --json` · {v.label} · backend {v.backend}", "no model/chromadb import", get)
        self.add(area, f"`status --json` · {v.label} · backend {v.backend}", "", status)

    def full_index(self, v: VaultInfo, target: str = "") -> None:
        vectors = v.backend != "none"
        area = (
            "Full index with vectors (backend auto, all-MiniLM-L6-v2)"
            if vectors
            else "Full index, BM25 + graph (backend none)"
        )
        target = "model-bound; reported" if vectors else (target or "≥ 500 notes/s (10k notes)")

        def measure() -> tuple[str, str, str, bool | None]:
            self.require("index")
            shutil.rmtree(v.path / ".vaultmem", ignore_errors=True)  # from nothing, as after a clone
            r = self.vm("index", "--full", vault=v.path, ghost=False, timeout=self.args.index_timeout)
            data = r.json()
            v.indexed = True
            self.raw.setdefault("index_full", {})[f"{v.label}/{v.backend}"] = {
                **data,
                "wall_s": r.seconds,
                "rss_mb": r.maxrss_mb,
            }
            notes = int(data.get("added", 0)) + int(data.get("unchanged", 0)) + int(data.get("updated", 0))
            figure = f"{rate(notes, r.seconds, 'notes')} ({secs(r.seconds)})"
            extra = [
                f"added {data.get('added')}",
                f"errors {len(data.get('errors') or [])}",
                f"peak RSS {mb(r.maxrss_mb)}",
            ]
            if vectors:
                chunks = int(data.get("embedded_chunks") or 0) + int(data.get("kept_chunks") or 0)  # stored
                if isinstance(chunks, int) and chunks:
                    figure += f" · {rate(chunks, r.seconds, 'chunks')}"
                    extra.insert(1, f"{chunks:,} chunks")
                peer = self.peer_text(lambda: self.dense_build_text(v))
            else:
                peer = self.peer_text(lambda: self.bm25_build_text(v))
            self.mem(
                f"`index --full` · {v.label} · backend {v.backend}",
                r.maxrss_mb,
                peer=self.peer_text(lambda: self.peer_rss(v, vectors)),
            )
            ok = None if vectors else at_target_size(v, notes / r.seconds >= 500)
            return figure, peer, "; ".join(extra), ok

        self.add(area, f"{v.label}", target, measure)

    def noop(
        self,
        v: VaultInfo,
        area: str = "No-op reconcile (`index` with nothing changed)",
        target: str = "< 1 s (10k notes)",
    ) -> None:
        def measure() -> tuple[str, str, str, bool | None]:
            self.require("index")
            if not v.indexed:
                raise NA("full index failed")
            runs = self.repeat(
                lambda _: self.vm_argv(v.path, "index", ghost=False), max(3, self.reps // 3), timeout=600
            )
            data = runs[-1].json()
            changed = {k: data.get(k) for k in ("added", "updated", "deleted", "moved") if data.get(k)}
            t = [r.seconds for r in runs]
            walk = self.repeat(
                lambda _: [str(BIN / "rg"), "--files", "-g", "*.md", str(v.path)], max(3, self.reps // 3)
            )
            peer = f"stat walk `rg --files`: p50 {ms(median([r.seconds for r in walk]))}"
            rss = max(r.maxrss_mb for r in runs)
            self.mem(f"no-op `index` · {v.label} · backend {v.backend}", rss)
            notes = f"{len(t)} runs; changes reported: {changed or 'none'}; peak RSS {mb(rss)}"
            return lat(t), peer, notes, at_target_size(v, median(t) < 1.0)

        self.add(area, f"no-op `index` · {v.label} · backend {v.backend}", target, measure)

    def query(
        self,
        v: VaultInfo,
        area: str = "`query` (grep-style QueryMemory over the files)",
        target: str = "< 1 s (10k notes)",
        limit_s: float = 1.0,
    ) -> None:
        def measure() -> tuple[str, str, str, bool | None]:
            self.require("query")
            kws = v.keywords
            runs = self.repeat(lambda i: self.vm_argv(v.path, "query", kws[max(0, i - 1)]), len(kws), timeout=120)
            t = [r.seconds for r in runs]
            matches = [len(r.json().get("matches", [])) for r in runs]
            rg = self.repeat(
                lambda i: [
                    str(BIN / "rg"),
                    "-i",
                    "-c",
                    *[a for w in kws[max(0, i - 1)].split() for a in ("-e", w)],
                    "-g",
                    "*.md",
                    str(v.path),
                ],
                len(kws),
            )
            peer = f"`rg -i -c` (same keywords): {lat([r.seconds for r in rg])}"
            rss = max(r.maxrss_mb for r in runs)
            self.mem(f"`query` · {v.label}", rss)
            return (
                lat(t),
                peer,
                f"{len(t)} keyword queries; mean matches {sum(matches) / len(matches):.1f}; peak RSS {mb(rss)}",
                at_target_size(v, median(t) < limit_s),
            )

        self.add(area, f"`query` · {v.label}", target, measure)

    def searches(self, v: VaultInfo, mode: str, timeout: float) -> tuple[list[Run], list[Any], list[int]]:
        """Each of the vault's queries once (after the uncounted warm-up run): the runs,
        their JSON and how many results each returned."""
        qs = v.queries
        runs = self.repeat(
            lambda i: self.vm_argv(v.path, "search", qs[max(0, i - 1)], "--mode", mode), len(qs), timeout=timeout
        )
        out = [r.json() for r in runs]
        return runs, out, [len(o.get("results", [])) for o in out]

    def search(
        self, v: VaultInfo, mode: str, area: str = "`search`, cold CLI (process start to JSON out)", target: str = ""
    ) -> None:
        def measure() -> tuple[str, str, str, bool | None]:
            self.require("search")
            if not v.indexed:
                raise NA("index failed; searching would time the catch-up")
            runs, out, returned = self.searches(v, mode, timeout=300)
            t = [r.seconds for r in runs]
            modes = sorted({str(o.get("mode")) for o in out})
            inner = [float(o["search_time_ms"]) for o in out if isinstance(o.get("search_time_ms"), (int, float))]
            rss = max(r.maxrss_mb for r in runs)
            self.mem(f"`search --mode {mode}` · {v.label} · backend {v.backend}", rss)
            peer = self.peer_text(lambda: self.search_peer_text(v, mode))
            notes = [
                f"{len(t)} queries",
                f"mean results {sum(returned) / len(returned):.1f}",
                f"mode reported {', '.join(modes)}",
            ]
            if inner:
                notes.append(f"search_time_ms p50 {median(inner):.0f}")
            notes.append(f"peak RSS {mb(rss)}")
            return lat(t), peer, "; ".join(notes), None

        self.add(
            area,
            f"`search --mode {mode}` · {v.label} · backend {v.backend}",
            target or "reported (SPEC target is with the watcher)",
            measure,
        )

    def full_index_obsidian(self, v: VaultInfo, area: str) -> None:
        def measure() -> tuple[str, str, str, bool | None]:
            self.require("index")
            shutil.rmtree(v.path / ".vaultmem", ignore_errors=True)
            r = self.vm("index", "--full", vault=v.path, ghost=False, timeout=self.args.index_timeout)
            data = r.json()
            v.indexed = True
            added = int(data.get("added", 0))
            chunks = int(data.get("embedded_chunks") or 0) + int(data.get("kept_chunks") or 0)  # stored
            figure = f"{rate(added, r.seconds, 'notes')} ({secs(r.seconds)})"
            if isinstance(chunks, int) and chunks:
                figure += f" · {rate(chunks, r.seconds, 'chunks')}"
            peer = self.peer_text(lambda: self.dense_build_text(v))
            self.mem(f"`index --full` · {v.label}", r.maxrss_mb)
            errors = data.get("errors") or []
            return (
                figure,
                peer,
                f"added {added} of {v.notes} .md files; errors {len(errors)}; peak RSS {mb(r.maxrss_mb)}",
                added == v.notes,
            )

        self.add(area, "`index --full`", "exit 0; added = notes", measure)
