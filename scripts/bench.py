#!/usr/bin/env python3
"""`make bench`: vaultmem's performance figures (SPEC §7), each beside a peer measured in the
same run, written to docs/BENCHMARKS.md between `<!-- bench:start -->` and `<!-- bench:end -->`.

    bench.py --corpora ../shared/corpora --out docs/BENCHMARKS.md
             [--sizes 1000,10000] [--work bench-work/bench] [--quick]
    bench.py --only mcp,autostart    # just those rows, on the largest vault; printed, not written
    bench.py --only scale [--scale-vectors ""]   # the scale rows (scripts/_bench_scale.py):
                                     # 10k, tldr (38k) and 50k notes; written to their own sections

Vaults come from scripts/genvault.py (cached in the work folder) and from the real Obsidian
Help vault in the corpora. Every command runs as a fresh process, timed from spawn to exit,
with its own peak RSS from wait4(2). A figure that cannot be measured (command missing,
failing, timing out) is reported as "n/a (reason)"; the bench itself never stops for it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import string
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_scale import Scale
from _bench_scale import sections as scale_sections
from _bench_util import (
    NA,
    Run,
    lat,
    loadavg,
    machine,
    mb,
    median,
    ms,
    pid_alive,
    proc_cpu_seconds,
    proc_rss_mb,
    rate,
    run,
    secs,
)

# Run as a script, this module is __main__: scripts/_bench_scale.py imports its classes as
# `bench`, which must be this very module, not a second copy with classes of its own.
sys.modules.setdefault("bench", sys.modules[__name__])

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
BIN = Path(sys.executable).parent
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
GHOST = "alice"

# Obsidian Help: questions a user asks, for `search`; keywords for `query`.
OBSIDIAN_QUESTIONS = [
    "how do I embed one note inside another",
    "link to a heading in another note",
    "sync my vault between phone and desktop",
    "publish notes as a website with a custom domain",
    "keyboard shortcut to open the command palette",
    "change the theme and appearance",
    "create a canvas with cards",
    "search for files with a tag",
    "daily notes template",
    "recover a deleted file",
    "use properties in front matter",
    "graph view filters",
    "install community plugins safely",
    "aliases for a note",
    "import notes from Evernote",
    "format tables in markdown",
    "split the workspace into panes",
    "bookmarks for searches",
    "configure attachments folder",
    "math and diagrams with mermaid",
]
OBSIDIAN_KEYWORDS = [
    "embed",
    "canvas card",
    "sync vault",
    "publish domain",
    "command palette",
    "template daily",
    "properties",
    "graph filter",
    "plugin",
    "alias",
]


@dataclass(slots=True)
class Row:
    area: str
    name: str
    figure: str
    target: str = ""
    peer: str = ""
    notes: str = ""
    ok: bool | None = None


@dataclass(slots=True)
class VaultInfo:
    label: str
    path: Path
    notes: int
    backend: str
    manifest: dict[str, Any] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    ref: str | None = None  # a note reference for `get`
    indexed: bool = False


def short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:180]


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.quick: bool = args.quick
        self.work: Path = args.work.resolve()
        self.corpora: Path = args.corpora.resolve()
        self.rows: list[Row] = []
        self.raw: dict[str, Any] = {}
        self.memory: list[Row] = []
        self.vaults: list[VaultInfo] = []
        self.peer_cache: dict[str, dict[str, Any] | NA] = {}
        self.commands: set[str] = set()
        self.started = time.time()
        self.load_start = loadavg()
        self.watchers: list[int] = []  # pids of watchers this bench started, stopped at exit
        self.env = self.child_env()
        self.reps = 5 if self.quick else 15
        self.n_queries = 8 if self.quick else 20
        self.n_keywords = 5 if self.quick else 10

    # --- plumbing -----------------------------------------------------------------------

    def child_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
        env.update(
            HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", NO_COLOR="1", COLUMNS="120", TOKENIZERS_PARALLELISM="false"
        )
        # A cold CLI figure stays cold: no read command starts a watcher (cli/autostart.py).
        # The always-warm rows (`autostart`) measure autostart on purpose, without this.
        env["VAULTMEM_NO_AUTOSTART"] = "1"
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        return env

    def log(self, msg: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        print(f"[bench {stamp}] {msg}", file=sys.stderr, flush=True)

    def vm(
        self,
        *args: str,
        vault: Path | None = None,
        ghost: bool = True,
        timeout: float = 300.0,
        env: dict[str, str] | None = None,
    ) -> Run:
        argv = [str(BIN / "vaultmem"), *args]
        if vault is not None:
            argv += ["--vault", str(vault)]
        if ghost:
            argv += ["--ghost", GHOST]
        argv.append("--json")
        return run(argv, env or self.env, timeout=timeout)

    def discover(self) -> None:
        """The CLI's commands right now: engines are being written while the bench runs."""
        r = run([str(BIN / "vaultmem"), "--help"], self.env, timeout=60)
        names = re.findall(r"^\s{2}([a-z][a-z-]+)\s", r.stdout, flags=re.MULTILINE)
        self.commands = set(names)

    def require(self, command: str) -> None:
        if command not in self.commands:
            self.discover()
        if command not in self.commands:
            raise NA(f"`vaultmem {command}` not available yet")

    def add(self, area: str, name: str, target: str, fn: Callable[[], tuple[str, str, str, bool | None]]) -> None:
        """Measure one figure; any failure becomes "n/a (reason)" and the bench goes on."""
        self.log(f"{area}: {name}")
        try:
            figure, peer, notes, ok = fn()
        except NA as exc:
            figure, peer, notes, ok = f"n/a ({short(exc)})", "", "", None
        except Exception as exc:  # a bug in a measurement must not lose the others
            traceback.print_exc()
            figure, peer, notes, ok = f"n/a (bench error: {type(exc).__name__}: {short(exc)})", "", "", None
        self.rows.append(Row(area, name, figure, target, peer, notes, ok))
        self.log(f"  -> {figure} | {peer}")

    def peer(self, key: str, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """A peer result, measured once per vault and reused; a failure is remembered too."""
        if key not in self.peer_cache:
            try:
                self.peer_cache[key] = fn()
            except NA as exc:
                self.peer_cache[key] = exc
            except Exception as exc:
                traceback.print_exc()
                self.peer_cache[key] = NA(f"{type(exc).__name__}: {short(exc)}")
        value = self.peer_cache[key]
        if isinstance(value, NA):
            raise value
        return value

    def peer_text(self, fn: Callable[[], str]) -> str:
        try:
            return fn()
        except NA as exc:
            return f"n/a ({short(exc)})"
        except Exception as exc:
            traceback.print_exc()
            return f"n/a ({type(exc).__name__}: {short(exc)})"

    def mem(
        self, name: str, rss: float, target: str = "", peer: str = "", notes: str = "", ok: bool | None = None
    ) -> None:
        self.memory.append(Row("Peak memory", name, mb(rss), target, peer, notes, ok))

    def repeat(
        self, make: Callable[[int], list[str]], count: int, timeout: float = 300.0, warmup: int = 1
    ) -> list[Run]:
        """Run a command `warmup + count` times (warm-ups fill the page cache and byte-code
        caches, as on any machine where the CLI was used before); failures raise NA."""
        runs = []
        for i in range(warmup + count):
            r = run(make(i), self.env, timeout=timeout)
            if not r.ok:
                raise NA(r.reason())
            if i >= warmup:
                runs.append(r)
        return runs

    def vm_argv(self, vault: Path, *args: str, ghost: bool = True) -> list[str]:
        argv = [str(BIN / "vaultmem"), *args, "--vault", str(vault)]
        if ghost:
            argv += ["--ghost", GHOST]
        return [*argv, "--json"]

    # --- vaults -------------------------------------------------------------------------

    def generated(self, n: int) -> Path:
        """A pristine generated vault, cached by size, seed and generator version."""
        digest = hashlib.sha256((SCRIPTS / "genvault.py").read_bytes()).hexdigest()[:10]
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
            str(SCRIPTS / "genvault.py"),
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
        r = run(argv, self.env, timeout=1800)
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

    # --- measurements -------------------------------------------------------------------

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

    # --- peers --------------------------------------------------------------------------

    def peer_run(self, kind: str, v: VaultInfo) -> dict[str, Any]:
        def go() -> dict[str, Any]:
            qfile = self.work / f"queries-{v.path.name}.json"
            qfile.write_text(json.dumps(v.queries), encoding="utf-8")
            argv = [
                sys.executable,
                str(SCRIPTS / "_bench_peers.py"),
                kind,
                "--vault",
                str(v.path),
                "--queries",
                str(qfile),
            ]
            if kind == "dense":
                argv += ["--max-encode", str(self.args.peer_encode)]
            r = run(argv, self.env, timeout=self.args.index_timeout)
            data = r.json()
            data["rss_mb"] = r.maxrss_mb
            data["wall_s"] = r.seconds
            self.raw.setdefault("peers", {})[f"{kind}/{v.label}/{v.backend}"] = data
            return data

        # Both working copies of a size hold the same notes: one peer run serves both.
        return self.peer(f"{kind}:{v.label}", go)

    def bm25_build_text(self, v: VaultInfo) -> str:
        d = self.peer_run("bm25", v)
        return f"bm25s (tokenize + index): {rate(d['notes'], d['index_s'], 'notes')} ({secs(d['index_s'])}; reading files {secs(d['read_s'])})"

    def dense_build_text(self, v: VaultInfo) -> str:
        d = self.peer_run("dense", v)
        per = d["encode_s"] / max(1, d["encoded"])
        est = per * d["chunks"]
        sample = "all" if d["encoded"] >= d["chunks"] else f"a sample of {d['encoded']:,} of {d['chunks']:,}"
        return f"sentence-transformers encode, batch 64: {rate(d['encoded'], d['encode_s'], 'chunks')} ({sample} chunks); exact-cosine build ≈ {secs(est)} + model load {secs(d['load_s'])}"

    def peer_rss(self, v: VaultInfo, vectors: bool) -> str:
        d = self.peer_run("dense" if vectors else "bm25", v)
        return f"{'sentence-transformers' if vectors else 'bm25s'} process: {mb(d['rss_mb'])}"

    def search_peer_text(self, v: VaultInfo, mode: str) -> str:
        if mode == "bm25":
            d = self.peer_run("bm25", v)
            return f"bm25s in-process, index prebuilt: {lat(d['query_s'])}"
        d = self.peer_run("dense", v)
        total = [a + b for a, b in zip(d["query_encode_s"], d["query_search_s"], strict=True)]
        return f"exact cosine in-process (query encode + top-10 over {d['chunks']:,} vectors): {lat(total)}; top-10 alone p50 {ms(median(d['query_search_s']))}"

    # --- the watcher --------------------------------------------------------------------

    def watcher_pid(self, vault: Path) -> int | None:
        r = self.vm("status", vault=vault, ghost=False, timeout=60)
        try:
            w = r.json().get("watcher") or {}
        except NA:
            return None
        pid = w.get("pid")
        return int(pid) if w.get("running") and pid else None

    def stop_stray_watcher(self, vault: Path) -> None:
        """A watcher left on a bench vault by an interrupted earlier run would hold its files."""
        if (vault / ".vaultmem").is_dir() and "watch" in self.commands:
            pid = self.watcher_pid(vault)
            if pid:
                self.log(f"stopping a watcher left from an earlier run (pid {pid})")
                self.vm("watch", "--stop", vault=vault, ghost=False, timeout=60)
                self.wait_gone(pid, 15)

    def wait_gone(self, pid: int, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return True
            time.sleep(0.05)
        return not pid_alive(pid)

    def stop_watcher(self, vault: Path, pid: int) -> float | None:
        """`watch --stop`, then SIGTERM/SIGKILL to that one pid if it is still there."""
        t0 = time.perf_counter()
        self.vm("watch", "--stop", vault=vault, ghost=False, timeout=60)
        if self.wait_gone(pid, 15):
            if pid in self.watchers:
                self.watchers.remove(pid)
            return time.perf_counter() - t0
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
            if self.wait_gone(pid, 10):
                break
        if pid in self.watchers and not pid_alive(pid):
            self.watchers.remove(pid)
        return None

    def tree(self, pid: int) -> list[int]:
        """The watcher and its descendants (it may run helpers)."""
        children: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                raw = stat.read_text()
                ppid = int(raw[raw.rindex(")") + 2 :].split()[1])
                children.setdefault(ppid, []).append(int(stat.parent.name))
            except (OSError, ValueError):
                continue
        out, todo = [], [pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(children.get(p, []))
        return out

    def watcher(self, v: VaultInfo) -> None:
        area = f"With the watcher running ({v.label}, backend {v.backend})"
        names = [
            "start to ready (catch-up, model, posting lists)",
            "`search --mode hybrid` p50",
            "`search --mode bm25` p50",
            "`get ID` p50",
            "saved edit → searchable",
            "new file → searchable",
            "watcher RSS",
            "idle CPU over 10 s",
            "`watch --stop` to exit",
        ]
        targets = [
            "",
            "< 50 ms",
            "",
            "",
            "< 2 s",
            "< 2 s",
            "< 1 GB (10k notes)",
            "≈ 0 (no busy polling)",
            "a few seconds",
        ]
        try:
            self.require("watch")
            if not v.indexed:
                raise NA("index failed")
            pid, ready_s, ready_note = self.start_watcher(v)
        except NA as exc:
            for name, target in zip(names, targets, strict=True):
                self.rows.append(Row(area, name, f"n/a ({short(exc)})", target))
            return
        try:
            self.rows.append(Row(area, names[0], secs(ready_s), "", "", ready_note))
            self.add(area, names[1], targets[1], lambda: self.watched_search(v, "hybrid"))
            self.add(area, names[2], targets[2], lambda: self.watched_search(v, "bm25"))
            self.add(area, names[3], targets[3], lambda: self.watched_get(v))
            self.add(area, names[4], targets[4], lambda: self.edit_latency(v, new=False))
            self.add(area, names[5], targets[5], lambda: self.edit_latency(v, new=True))
            self.add(area, names[6], targets[6], lambda: self.watcher_rss(pid))
            self.add(area, names[7], targets[7], lambda: self.idle_cpu(pid))
        finally:
            stop_s = self.stop_watcher(v.path, pid)
            fig = (
                secs(stop_s) if stop_s is not None else "n/a (did not exit within 15 s of `watch --stop`; sent SIGTERM)"
            )
            self.rows.append(Row(area, names[8], fig, targets[8], "", "", stop_s is not None and stop_s < 10))

    def start_watcher(self, v: VaultInfo) -> tuple[int, float, str]:
        self.stop_stray_watcher(v.path)
        t0 = time.perf_counter()
        r = self.vm("watch", "--detach", vault=v.path, ghost=False, timeout=900)
        if not r.ok:
            raise NA(f"`watch --detach`: {r.reason()}")
        pid = None
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            pid = int(json.loads(r.stdout).get("pid"))
        deadline = time.monotonic() + 900
        fresh = False
        while time.monotonic() < deadline:
            st = self.vm("status", vault=v.path, ghost=False, timeout=60)
            with contextlib.suppress(NA):
                data = st.json()
                w = data.get("watcher") or {}
                if w.get("running") and w.get("pid"):
                    pid = int(w["pid"])
                    if pid not in self.watchers:
                        self.watchers.append(pid)
                    # Warm: caught up, the model loaded and the posting lists decoded.
                    warm = w.get("model", "ready") == "ready" and w.get("postings", "ready") == "ready"
                    if data.get("index", {}).get("fresh") and warm:
                        fresh = True
                        break
            time.sleep(0.2)
        if pid is None:
            raise NA("watcher did not report running within 900 s")
        if pid not in self.watchers:
            self.watchers.append(pid)
        note = f"`watch --detach` returned in {secs(r.seconds)}; pid {pid}; " + (
            "status fresh, model and posting lists ready" if fresh else "status never reported fresh and warm"
        )
        return pid, time.perf_counter() - t0, note

    def watched_search(self, v: VaultInfo, mode: str) -> tuple[str, str, str, bool | None]:
        runs, _, returned = self.searches(v, mode, timeout=120)
        t = [r.seconds for r in runs]
        peer = self.peer_text(lambda: self.search_peer_text(v, mode))
        rss = max(r.maxrss_mb for r in runs)
        self.mem(f"`search --mode {mode}` client · watcher running · {v.label}", rss)
        ok = median(t) < 0.050 if mode == "hybrid" else None
        return (
            lat(t),
            peer,
            f"{len(t)} queries; mean results {sum(returned) / len(returned):.1f}; client peak RSS {mb(rss)}",
            ok,
        )

    def watched_get(self, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        if not v.ref:
            raise NA("no note reference")
        runs = self.repeat(lambda _: self.vm_argv(v.path, "get", v.ref or ""), self.reps)
        return lat([r.seconds for r in runs]), "", f"{len(runs)} runs", None

    def edit_latency(self, v: VaultInfo, new: bool) -> tuple[str, str, str, bool | None]:
        """Save the way editors do (temp file + rename), then poll `search` until the note
        shows. Each poll is a CLI process, so the latency is only known between the start
        of the last poll that missed it and the end of the first poll that found it."""
        rng = random.Random(len(self.rows))
        trials = 1 if new else 3
        sample = [s for s in v.manifest.get("sample", []) if s.get("scope") == "shared"]
        upper: list[float] = []
        lower: list[float] = []
        for k in range(trials):
            token = "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(10))
            if new:
                rel = f"shared/bench-new-note-{token}.md"
                text = f"---\ntitle: Bench new note {token}\ntype: note\nscope: shared\n---\nA new note written by the benchmark: {token}.\n"
            else:
                if k >= len(sample):
                    break
                rel = sample[k]["path"]
                old = (v.path / rel).read_text(encoding="utf-8")
                text = old.rstrip("\n") + f"\n\nEdited by the benchmark: {token}.\n"
            lo, hi = self.save_and_poll(v, rel, text, token)
            lower.append(lo)
            upper.append(hi)
        if not upper:
            raise NA("no shared note to edit")
        first_poll = max(lower) == 0.0
        # When the very first search (issued right after the save) already returns the note,
        # that search waited for the watcher's batch: its answer time is what an agent sees.
        ok = True if max(upper) < 2.0 else (False if first_poll or max(lower) >= 2.0 else None)
        figure = f"p50 ≤ {secs(median(upper))} · max ≤ {secs(max(upper))}"
        how = (
            "the first search after the save returned it every time (it waited for the pending batch)"
            if first_poll
            else f"last miss at p50 {secs(median(lower))}, max {secs(max(lower))}"
        )
        notes = f"{len(upper)} trial(s), polling with `search --mode bm25` from the moment of the save; {how}"
        return figure, "", notes, ok

    def save_and_poll(self, v: VaultInfo, rel: str, text: str, token: str) -> tuple[float, float]:
        target = v.path / rel
        tmp = target.with_name(f".{target.name}.bench~")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        t0 = time.perf_counter()
        os.replace(tmp, target)
        last_miss = 0.0
        while True:
            started = time.perf_counter() - t0
            r = self.vm("search", token, "--mode", "bm25", "--limit", "5", vault=v.path, timeout=60)
            if r.ok and rel in r.stdout:
                return last_miss, time.perf_counter() - t0
            last_miss = started
            if time.perf_counter() - t0 > 30:
                raise NA(f"not searchable 30 s after the save ({r.reason() if not r.ok else 'not in results'})")

    def watcher_rss(self, pid: int) -> tuple[str, str, str, bool | None]:
        pids = [p for p in self.tree(pid) if pid_alive(p)]
        cur = peak = 0.0
        for p in pids:
            c, h = proc_rss_mb(p)
            cur, peak = cur + c, peak + h
        self.mem("watcher process (VmHWM)", peak, "< 1 GB", ok=peak < 1024)
        return f"{mb(cur)} now · {mb(peak)} peak", "", f"{len(pids)} process(es); /proc VmRSS and VmHWM", peak < 1024

    def idle_cpu(self, pid: int) -> tuple[str, str, str, bool | None]:
        time.sleep(3)  # let the last batch settle
        pids = [p for p in self.tree(pid) if pid_alive(p)]
        before = sum(proc_cpu_seconds(p) for p in pids)
        time.sleep(10)
        after = sum(proc_cpu_seconds(p) for p in pids if pid_alive(p))
        used = after - before
        return (
            f"{used / 10 * 100:.1f}% of a core ({used * 1000:.0f} ms CPU in 10 s)",
            "",
            "utime + stime from /proc/PID/stat",
            used / 10 < 0.02,
        )

    # --- agents: the always-warm CLI and the MCP server ---------------------------------

    def autostart_env(self) -> dict[str, str]:
        return {k: val for k, val in self.env.items() if k != "VAULTMEM_NO_AUTOSTART"}

    def no_watcher(self, v: VaultInfo) -> None:
        self.require("watch")
        if not v.indexed:
            raise NA("index failed")
        self.stop_stray_watcher(v.path)
        if self.watcher_pid(v.path) is not None:
            raise NA("a watcher is still running on the vault")

    def stop_started_watcher(self, v: VaultInfo) -> None:
        """Stop the watcher a measurement started on demand (it would idle for 30 minutes)."""
        pid = self.watcher_pid(v.path)
        if pid is not None:
            if pid not in self.watchers:
                self.watchers.append(pid)
            self.stop_watcher(v.path, pid)

    def autostart(self, v: VaultInfo) -> None:
        area = f"Always-warm CLI ({v.label}, backend {v.backend})"
        self.add(
            area,
            "20 consecutive `search --json`, no watcher beforehand",
            "p50 < 100 ms",
            lambda: self.autostart_searches(v),
        )

    def autostart_searches(self, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        self.no_watcher(v)
        queries = [v.queries[i % len(v.queries)] for i in range(20)]
        env = self.autostart_env()
        runs: list[Run] = []
        try:
            for q in queries:
                r = run(self.vm_argv(v.path, "search", q), env, timeout=300)
                if not r.ok:
                    raise NA(r.reason())
                runs.append(r)
        finally:
            self.stop_started_watcher(v)
        docs = [r.json() for r in runs]
        lexical = sum(1 for d in docs if d.get("mode") == "bm25")
        rest = [r.seconds for r in runs[1:]]
        ok = at_target_size(v, median(rest) < 0.100)
        notes = (
            f"the first call starts a watcher (cli/autostart.py) and is answered by it; the other 19 are forwarded to it. "
            f"{lexical} of 20 answered with BM25 + graph while the watcher was still loading the model; "
            "the watcher was stopped after"
        )
        return f"first {secs(runs[0].seconds)} · rest {lat(rest)}", "", notes, ok

    def mcp(self, v: VaultInfo) -> None:
        area = f"MCP server ({v.label}, backend {v.backend})"
        names = ["`initialize` with no watcher running", "`initialize` with a watcher running", "memory_search p50"]
        self.add(area, names[0], "< 2 s", lambda: self.mcp_cold(v))
        try:
            self.no_watcher(v)
            pid, _, _ = self.start_watcher(v)
            self.wait_model_ready(v)
        except NA as exc:
            for name, target in zip(names[1:], ["< 1 s", ""], strict=True):
                self.rows.append(Row(area, name, f"n/a ({short(exc)})", target))
            return
        try:
            self.add(area, names[1], "< 1 s", lambda: self.mcp_initialize(v))
            self.add(area, names[2], "", lambda: self.mcp_searches(v))
        finally:
            self.stop_watcher(v.path, pid)

    def wait_model_ready(self, v: VaultInfo, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(NA):
                if (self.vm("status", vault=v.path, ghost=False, timeout=60).json().get("watcher") or {}).get(
                    "model"
                ) != "loading":
                    return
            time.sleep(0.2)
        raise NA(f"the watcher's model was not ready within {timeout:.0f} s")

    def mcp_process(self, v: VaultInfo, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], float, float]:
        """`vaultmem mcp` spoken to in raw JSON-RPC: (process, spawn time, seconds until the
        `initialize` answer). No client library in the way of the figure."""
        env = {**env, "VAULTMEM_GHOST": GHOST}
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [str(BIN / "vaultmem"), "mcp", "--vault", str(v.path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "vaultmem-bench", "version": "0"},
        }
        self.rpc_send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        self.rpc_reply(proc, 1)
        return proc, t0, time.perf_counter() - t0

    def rpc_send(self, proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def rpc_reply(self, proc: subprocess.Popen[bytes], ident: int) -> dict[str, Any]:
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline()
            if not line:
                raise NA(f"`vaultmem mcp` exited ({proc.poll()}) before answering")
            message = json.loads(line)
            if message.get("id") == ident:
                if "error" in message:
                    raise NA(f"JSON-RPC error: {message['error']}")
                return dict(message["result"])

    def end_mcp(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def mcp_cold(self, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        """Spawn → `initialize` with no watcher (the server starts one in the background),
        then the first memory_search, which waits for that watcher."""
        reps = 3 if self.quick else 5
        inits: list[float] = []
        firsts: list[float] = []
        modes: list[str] = []
        for i in range(reps):
            self.no_watcher(v)
            proc, t0, init_s = self.mcp_process(v, self.autostart_env())
            try:
                inits.append(init_s)
                self.rpc_send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
                call = {"name": "memory_search", "arguments": {"query": v.queries[i % len(v.queries)]}}
                self.rpc_send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
                result = self.rpc_reply(proc, 2)
                firsts.append(time.perf_counter() - t0)
                if result.get("isError"):
                    raise NA(f"memory_search failed: {result.get('content')}")
                modes.append(str((result.get("structuredContent") or {}).get("mode")))
            finally:
                self.end_mcp(proc)
                self.stop_started_watcher(v)
        ok = at_target_size(v, max(inits) < 2.0)
        notes = (
            f"{reps} runs, raw JSON-RPC over stdio, timed from spawn; the server starts a watcher in the background "
            f"and answers meanwhile. First memory_search answered {lat(firsts)} after spawn, in mode "
            f"{', '.join(sorted(set(modes)))} (bm25: the watcher was still loading the model, and said so)"
        )
        return lat(inits), "", notes, ok

    def mcp_initialize(self, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        reps = 3 if self.quick else 5
        inits = []
        for _ in range(reps):
            proc, _, init_s = self.mcp_process(v, self.env)
            self.end_mcp(proc)
            inits.append(init_s)
        notes = f"{reps} runs, raw JSON-RPC over stdio, timed from spawn (the `mcp` SDK import is most of it)"
        return lat(inits), "", notes, at_target_size(v, max(inits) < 1.0)

    def mcp_searches(self, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        """One stdio session of the official client: memory_search for each query, timed
        from call to result (after one uncounted warm-up call)."""
        import anyio
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=str(BIN / "vaultmem"),
            args=["mcp", "--vault", str(v.path)],
            env={**self.env, "VAULTMEM_GHOST": GHOST},
        )
        times: list[float] = []
        modes: list[str] = []
        returned: list[int] = []
        listed: dict[str, int] = {}

        async def session() -> None:
            with open(os.devnull, "w") as devnull:
                async with Client(stdio_client(params, errlog=devnull), mode="legacy") as client:
                    tools = (await client.list_tools()).tools
                    text = json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools])
                    listed.update(tools=len(tools), tokens=len(text) // 4)
                    for i, q in enumerate([v.queries[0], *v.queries]):
                        t0 = time.perf_counter()
                        result = await client.call_tool("memory_search", {"query": q})
                        took = time.perf_counter() - t0
                        if result.is_error:
                            raise NA(f"memory_search failed: {result.content[0]}")
                        if i:
                            doc = result.structured_content or {}
                            times.append(took)
                            modes.append(str(doc.get("mode")))
                            returned.append(int(doc.get("returned", 0)))

        anyio.run(session)
        notes = (
            f"{len(times)} queries in one stdio session (the official `mcp` client), watcher running and warm; "
            f"mode {', '.join(sorted(set(modes)))}; mean results {sum(returned) / len(returned):.1f}. "
            f"tools/list: {listed['tools']} tools, {listed['tokens']:,} tokens (characters / 4)"
        )
        return lat(times), "", notes, None

    # --- the real vault -----------------------------------------------------------------

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

    # --- the run ------------------------------------------------------------------------

    def run_all(self) -> None:
        self.discover()
        self.raw["commands_at_start"] = sorted(self.commands)
        self.startup()
        sizes = [1000] if self.quick else self.args.sizes
        last_auto: VaultInfo | None = None
        for n in sizes:
            try:
                none_v = self.synthetic_vault(n, "none")
            except Exception as exc:
                traceback.print_exc()
                self.rows.append(Row("Vault generation", f"{n:,} notes", f"n/a ({short(exc)})"))
                continue
            self.vaults.append(none_v)
            self.full_index(none_v)
            self.noop(none_v)
            self.get_status(none_v)
            self.query(none_v)
            self.search(none_v, "bm25")
            if self.args.no_vectors:
                continue
            auto_v = self.synthetic_vault(n, "auto")
            self.full_index(auto_v)
            self.noop(auto_v)
            self.get_status(auto_v)
            self.search(auto_v, "bm25")
            self.search(auto_v, "hybrid")
            last_auto = auto_v
        if not self.args.no_watch:
            if last_auto is not None:
                self.watcher(last_auto)
                self.autostart(last_auto)
                self.mcp(last_auto)
            else:
                why = "skipped: --no-vectors" if self.args.no_vectors else "no vault with vectors was built"
                self.rows.append(Row("With the watcher running", "all", f"n/a ({why})"))
        if not self.args.no_obsidian:
            ob = self.obsidian()
            if ob is not None:
                self.vaults.append(ob)
                area = f"Obsidian Help vault ({ob.notes} notes, backend auto)"
                self.full_index_obsidian(ob, area)
                self.noop(ob, area)
                self.query(ob, area)
                self.search(ob, "bm25", area)
                self.search(ob, "hybrid", area)
        self.raw["commands_at_end"] = sorted(self.commands)

    def run_only(self, groups: list[str]) -> None:
        """`--only`: just these rows, on the largest generated vault with vectors; its
        working copy from an earlier run is kept when its index is fresh (else rebuilt)."""
        self.discover()
        n = 1000 if self.quick else max(self.args.sizes)
        v = self.synthetic_vault(n, "auto", reuse=True)
        self.vaults.append(v)
        if not v.indexed:
            self.full_index(v)
        if "autostart" in groups:
            self.autostart(v)
        if "mcp" in groups:
            self.mcp(v)

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

    def cleanup(self) -> None:
        """Never leave a watcher behind, whatever happened."""
        for pid in list(self.watchers):
            if pid_alive(pid):
                self.log(f"stopping watcher pid {pid}")
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, sig)
                    if self.wait_gone(pid, 10):
                        break

    # --- the report ---------------------------------------------------------------------

    def header(self) -> list[str]:
        sha, dirty = git_state()
        vault_lines = []
        for v in self.vaults:
            if v.manifest:
                man = v.manifest
                made = man.get("seconds")
                vault_lines.append(
                    f"{v.notes:,} notes ({man.get('words', 0):,} words, {man.get('bytes', 0) / 1e6:.1f} MB, "
                    f"{man.get('links', 0):,} links of which {man.get('dangling_links', 0):,} dangling; scopes {man.get('scopes')}"
                    + (f"; generated in {made:.1f} s" if isinstance(made, (int, float)) else "")
                    + ")"
                )
            else:
                vault_lines.append(
                    f"{v.label}: `corpora/obsidian-help-en` copied into the `shared/` folder of a new `vaultmem init` vault"
                )
        elapsed = time.time() - self.started
        return [
            f"_Written by `scripts/bench.py{' --quick' if self.quick else ''}` on {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; the run took {elapsed / 60:.1f} min._",
            "",
            machine_line(self.load_start),
            f"- **Code:** vaultmem at git {sha or '?'}{' plus uncommitted changes' if dirty else ''}; commands present: {', '.join(sorted(self.commands))}.",
            f"- **Vaults:** generated by `scripts/genvault.py --seed {self.args.seed}` (text from Cranfield bigram chains; ghosts alice, bob, carol; 3 projects): "
            + "; ".join(vault_lines)
            + ". Generated vaults are cached in the work folder between runs.",
            "- **Method:** every vaultmem figure is a fresh CLI process timed from spawn to exit (`--json`, ghost alice), after one uncounted warm-up run; p50/p90 are over the runs or queries stated. "
            "The command is the installed `vaultmem`: the native launcher `make install` builds (launcher/vaultmem.c), which forwards to a running watcher itself and starts the Python CLI for everything else. "
            "Search queries are Cranfield's own (`cran.qry`), keyword queries their content words. Peak RSS comes from wait4(2) for each child. Peers run in the same bench run, in a child process of their own: "
            "bm25s (English stemmer and stop words), sentence-transformers with the same all-MiniLM-L6-v2 and exact cosine top-10 in numpy, and ripgrep.",
            "",
        ]

    def render(self) -> str:
        lines = [START, "## Performance (`make bench`)", "", *self.header()]
        # Areas in a fixed reading order (SPEC §7's list), then any others as they came.
        lines += area_tables(self.rows, self.memory, area_rank)
        lines.append(END)
        return "\n".join(lines) + "\n"


def git_state() -> tuple[str, bool]:
    """The short commit of the code measured, and whether tracked files were changed."""
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True
    ).stdout
    return sha.strip(), bool(dirty.strip())


def machine_line(load_start: str) -> str:
    m = machine()
    sha, dirty = git_state()
    return (
        f"- **Machine:** {m['cores']} cores ({m['cpu']}), {m['ram_gb']:.1f} GiB RAM, {m['os']}, Python {m['python']}. "
        f"Load average at start {load_start}, at end {loadavg()} (a shared machine: other work ran alongside, so absolute "
        f"times are noisy). Code: git {sha or '?'}{' plus uncommitted changes' if dirty else ''}."
    )


AREA_ORDER = (
    "Startup",
    "Full index, BM25",
    "Full index with vectors",
    "No-op",
    "`query`",
    "`search`",
    "With the watcher",
    "Always-warm CLI",
    "MCP server",
    "Obsidian",
    "Vault generation",
    "Run",
)


def at_target_size(v: VaultInfo, ok: bool) -> bool | None:
    """SPEC §7 states these targets for 10k notes; smaller vaults get no pass/fail mark."""
    return ok if v.notes >= 10_000 else None


def area_tables(rows: Sequence[Any], memory: Sequence[Any], rank: Callable[[str], Any]) -> list[str]:
    """The rows as one markdown table per area, areas in `rank` order, peak memory last."""
    lines: list[str] = []
    areas = sorted(dict.fromkeys(r.area for r in rows), key=rank)
    for area in [*areas, "Peak memory"]:
        group = [r for r in rows if r.area == area] if area != "Peak memory" else list(memory)
        if not group:
            continue
        lines += [
            f"### {area}",
            "",
            "| measurement | figure | target | peer (same run) | notes |",
            "|---|---|---|---|---|",
        ]
        for r in group:
            mark = {True: " ✅", False: " ❌", None: ""}[r.ok]
            cells = [r.name, r.figure, (r.target or "—") + mark, r.peer or "—", r.notes or ""]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        lines.append("")
    return lines


def area_rank(area: str) -> int:
    return next((k for k, prefix in enumerate(AREA_ORDER) if area.startswith(prefix)), len(AREA_ORDER))


def write_section(path: Path, section: str, markers: tuple[str, str] = (START, END)) -> None:
    """Replace the section between `markers` (the bench section unless told), or add it;
    every other part of the file (the eval section written by scripts/eval.py, the scale
    section, …) stays byte-for-byte."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    start, end = text.find(markers[0]), text.find(markers[1])
    if start != -1 and end > start:
        new = text[:start] + section.rstrip("\n") + text[end + len(markers[1]) :]
    else:
        new = text.rstrip("\n") + "\n\n" + section
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, path)


ONLY_GROUPS = ("autostart", "mcp", "scale")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark vaultmem against the SPEC §7 targets, each figure beside a peer measured in the same run.",
        epilog="Writes the section between <!-- bench:start --> and <!-- bench:end --> of --out and prints it.",
    )
    parser.add_argument(
        "--corpora",
        type=Path,
        default=REPO.parent / "shared" / "corpora",
        help="folder with cranfield/ and obsidian-help-en/",
    )
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "BENCHMARKS.md", help="markdown file to update")
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",") if x.strip()],
        default=[1000, 10000],
        help="generated vault sizes (default 1000,10000)",
    )
    parser.add_argument(
        "--work", type=Path, default=REPO / "bench-work" / "bench", help="cache of generated vaults and working copies"
    )
    parser.add_argument("--quick", action="store_true", help="smoke test: the 1k vault only, fewer repetitions")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--peer-encode",
        type=int,
        default=0,
        help="encode at most N chunks for the dense peer's rate (0 = 1000, or 300 with --quick)",
    )
    parser.add_argument("--index-timeout", type=float, default=7200.0, help="seconds allowed for one full index")
    parser.add_argument("--no-vectors", action="store_true", help="skip the embedding backend (and the watcher)")
    parser.add_argument("--no-watch", action="store_true", help="skip the watcher measurements")
    parser.add_argument("--no-obsidian", action="store_true", help="skip the Obsidian Help vault")
    parser.add_argument("--no-write", action="store_true", help="print the report only")
    parser.add_argument(
        "--only",
        type=lambda s: [g.strip() for g in s.split(",") if g.strip()],
        default=[],
        help=f"run only these groups of rows ({', '.join(ONLY_GROUPS)}); autostart and mcp run on the largest "
        "vault and print their rows without writing --out (the bench section is written whole by a full run); "
        "scale writes its own sections (<!-- scale:start --> … <!-- scale:end --> without vectors, "
        "<!-- scale-vectors:start --> … with; a part that did not run keeps its section)",
    )
    parser.add_argument(
        "--scale-vaults",
        type=lambda s: [g.strip() for g in s.split(",") if g.strip()],
        default=["10000", "tldr", "50000"],
        help="scale rows without vectors: generated sizes and `tldr` (every page, all languages), in curve order",
    )
    parser.add_argument(
        "--scale-vectors",
        type=lambda s: [g.strip() for g in s.split(",") if g.strip()],
        default=["tldr-en", "10000"],
        help="scale rows with vectors: `tldr-en` (the ~7.4k English pages), `tldr` (all, ~38k: about an hour "
        "of embedding here) or a generated size (its working copy is reused when its index is fresh); "
        "the churn runs on the generated one; a run of only large vaults (tldr, 20k notes and more) writes "
        "<!-- scale-vectors-large:start --> … instead, without the churn",
    )
    parser.add_argument(
        "--scale-reuse-vectors",
        action="store_true",
        help="reuse a tldr working copy with vectors from an earlier run when its index is fresh",
    )
    parser.add_argument(
        "--scale-note",
        action="append",
        default=[],
        help="a line for the header of the scale section with vectors (how a reused working copy was built, say)",
    )
    parser.add_argument("--churn-edits", type=int, default=2000, help="edits of the churn row (issue 14: 2,000)")
    parser.add_argument("--no-scale", action="store_true", help="a full run without the scale rows")
    args = parser.parse_args(argv)
    unknown = set(args.only) - set(ONLY_GROUPS)
    if unknown:
        parser.error(f"--only: unknown group(s) {', '.join(sorted(unknown))}; known: {', '.join(ONLY_GROUPS)}")
    if not args.peer_encode:
        args.peer_encode = 300 if args.quick else 1000
    return args


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    bench = Bench(args)
    # SIGTERM ends the run like Ctrl-C does, so the finally clause stops any watcher.
    signal.signal(signal.SIGTERM, _interrupt)
    interrupted = False
    main_groups = [g for g in args.only if g != "scale"]
    scale_wanted = "scale" in args.only or not (args.only or args.no_scale or args.quick)
    scale: Scale | None = None
    scale_rows: list[Row] = []
    scale_memory: list[Row] = []
    try:
        if main_groups:
            bench.run_only(main_groups)
        elif not args.only:
            bench.run_all()
        if scale_wanted:
            # The scale rows go to a section of their own: collected apart from the others.
            kept = bench.rows, bench.memory
            bench.rows, bench.memory = scale_rows, scale_memory
            scale = Scale(bench)
            try:
                scale.run()
            finally:
                bench.rows, bench.memory = kept
    except KeyboardInterrupt:
        interrupted = True
        partial = Row("Run", "interrupted", "n/a (interrupted; the figures above are partial)")
        (scale_rows if scale is not None else bench.rows).append(partial)
    finally:
        bench.cleanup()
    if main_groups or not args.only:
        report = bench.render()
        print(report)
        (args.work / ("results-only.json" if args.only else "results.json")).write_text(
            json.dumps(
                {"rows": [asdict(r) for r in bench.rows + bench.memory], "raw": bench.raw}, indent=1, default=str
            ),
            encoding="utf-8",
        )
        if not args.no_write and not args.only:
            write_section(args.out, report)
            print(f"bench: wrote {args.out}", file=sys.stderr)
    if scale is not None:
        (args.work / "results-scale.json").write_text(
            json.dumps(
                {"rows": [asdict(r) for r in scale_rows + scale_memory], "raw": bench.raw}, indent=1, default=str
            ),
            encoding="utf-8",
        )
        for markers, section in scale_sections(scale, scale_rows, scale_memory):
            print(section)
            if not args.no_write:
                write_section(args.out, section, markers)
                print(f"bench: wrote {markers[0]} … {markers[1]} of {args.out}", file=sys.stderr)
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
