"""The scale rows of the bench (issue 14): the same figures as at 10k notes, on the whole
tldr-pages collection (every language, ~38k real notes), a generated 50k vault and the 10k
vault beside them for the curve; vectors on the English tldr pages (~7.4k notes) and on the
10k vault; the watcher's memory under 2,000 edits. Written between `<!-- scale:start -->`
and `<!-- scale:end -->` of docs/BENCHMARKS.md, apart from the main bench section, so either
can be rerun alone (`python -m tools.bench --only scale`).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import string
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tools.bench.model import BIN, Row, VaultInfo
from tools.bench.report import area_rank, area_tables, machine_line
from tools.bench.util import NA, Run, lat, mb, median, pid_alive, proc_rss_mb, run, secs
from tools.evalkit.tasks import TLDR_QUERIES
from tools.machine import loadavg

if TYPE_CHECKING:
    from tools.bench.runner import Bench

SCALE_START, SCALE_END = "<!-- scale:start -->", "<!-- scale:end -->"
# The rows with vectors (an hour of embedding to redo) have a section of their own, so the
# rows without can be rerun alone (`--scale-vectors ""`) and the others stay.
VECTORS_START, VECTORS_END = "<!-- scale-vectors:start -->", "<!-- scale-vectors:end -->"
# Vectors over the 38k and 50k vaults take an hour or more of embedding each: a run of only
# those (`--scale-vectors tldr,50000`) writes a section of its own and leaves the other.
LARGE_START, LARGE_END = "<!-- scale-vectors-large:start -->", "<!-- scale-vectors-large:end -->"
TITLES = {
    "lexical": "## Scale: 10k → 38k (tldr, every language) → 50k notes, backend none (`python -m tools.bench --only scale`)",
    "vectors": "## Scale with vectors: tldr English, the 10k vault, and the watcher under churn (`python -m tools.bench --only scale`)",
    "vectors-large": "## Scale with vectors: tldr every language (38k notes) and 50k notes (`python -m tools.bench --only scale --scale-vectors tldr,50000`)",
}
MARKERS = {
    "lexical": (SCALE_START, SCALE_END),
    "vectors": (VECTORS_START, VECTORS_END),
    "vectors-large": (LARGE_START, LARGE_END),
}


def is_large(kind: str) -> bool:
    """A vault of the large vectors section: the whole tldr collection, or 20k notes and more."""
    return kind == "tldr" or (kind.isdigit() and int(kind) >= 20_000)


WATCHER_RSS_LIMIT_MB = 1536.0  # issue 14: < 1.5 GB with vectors
CHURN_ROUND = 100  # edits between two memory readings; the first reading is the baseline
CHURN_TOLERANCE = 0.15
STOP = {"what", "which", "there", "have", "been", "does", "that", "with", "from", "when", "this", "about",
        "your", "into", "using", "given", "specific", "file", "files"}  # fmt: skip


@dataclass(slots=True)
class Curve:
    """Full-index rates by vault for the 10k → 38k → 50k line."""

    label: str
    notes: int
    seconds: float


def tldr_pages(archive: Path, english_only: bool) -> dict[str, bytes]:
    """vault path -> bytes of every tldr page (`shared/tldr/<pages dir>/<platform>/<name>.md`,
    the layout of tools/evalkit/multilingual.py); with `english_only`, `tldr/pages/` alone."""
    out: dict[str, bytes] = {}
    with tarfile.open(archive) as tar:
        for member in tar:
            parts = member.name.split("/")
            if not (member.isfile() and len(parts) == 4 and parts[3].endswith(".md")):
                continue
            if not parts[1].startswith("pages") or (english_only and parts[1] != "pages"):
                continue
            fh = tar.extractfile(member)
            if fh is not None:
                out[f"shared/tldr/{parts[1]}/{parts[2]}/{parts[3]}"] = fh.read()
    return out


class Scale:
    def __init__(self, bench: Bench) -> None:
        self.b = bench
        self.curve: list[Curve] = []
        self.started = time.time()
        self.load_start = loadavg()
        self.described: list[str] = []
        self.ran: list[str] = []
        # Where the rows, memory rows and vault descriptions of the part with vectors start.
        self.split: tuple[int, int, int] | None = None
        self.vector_part = "vectors"  # or "vectors-large" (is_large): which section the rows with vectors go to
        self.started_vectors = self.started
        self.load_vectors = self.load_start

    # --- vaults -------------------------------------------------------------------------

    def tldr_source(self, english_only: bool) -> Path:
        """A pristine vault holding the tldr pages, cached by the archive's size and mtime."""
        archive = self.b.corpora / "tldr-pages.tar.gz"
        if not archive.is_file():
            raise NA(f"{archive} not found")
        st = archive.stat()
        key = hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:10]
        path = self.b.work / "tldr" / f"{'en' if english_only else 'all'}-{key}"
        if (path / ".tldr.json").is_file():
            return path
        shutil.rmtree(path, ignore_errors=True)
        self.b.log(f"unpacking tldr ({'English' if english_only else 'all languages'}) into {path}")
        r = run([str(self.b_bin()), "init", str(path), "--ghost", "alice", "--json"], self.b.env, timeout=120)
        if not r.ok:
            raise NA(f"`vaultmem init`: {r.reason()}")
        shutil.rmtree(path / ".vaultmem", ignore_errors=True)
        pages = tldr_pages(archive, english_only)
        for rel, data in pages.items():
            target = path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (path / ".tldr.json").write_text(json.dumps({"pages": len(pages), "bytes": sum(map(len, pages.values()))}))
        return path

    def b_bin(self) -> Path:
        return BIN / "vaultmem"

    def tldr_vault(self, english_only: bool, backend: str, reuse: bool = False) -> VaultInfo:
        src = self.tldr_source(english_only)
        name = f"scale-tldr-{'en' if english_only else 'all'}-{backend}"
        path = self.b.work / "runs" / name
        fresh = reuse and self.catch_up_lexical(path)
        if not fresh:
            path = self.b.working_copy(src, name, backend)
        info = json.loads((src / ".tldr.json").read_text(encoding="utf-8"))
        # Notes as vaultmem counts them: `..md` pages are hidden files (as in Obsidian).
        from vaultmem.vault.layout import walk_notes

        notes = sum(1 for _ in walk_notes(path))
        queries, keywords = self.tldr_queries()
        rng = random.Random(14)
        english = sorted(
            p.relative_to(path).as_posix() for p in (path / "shared" / "tldr" / "pages" / "common").glob("*.md")
        )
        sample = [{"path": p, "scope": "shared"} for p in rng.sample(english, min(5, len(english)))]
        label = f"tldr {'English' if english_only else 'all languages'} ({notes:,} notes)"
        self.described.append(
            f"{label}: every `tldr/pages{'' if english_only else '*'}/<platform>/<name>.md` of `corpora/tldr-pages.tar.gz` "
            f"({info['pages']:,} files, {info['bytes'] / 1e6:.1f} MB) under `shared/tldr/` of a new `vaultmem init` vault"
        )
        return VaultInfo(
            label, path, notes, backend, {"sample": sample}, queries, keywords,
            "shared/tldr/pages/common/tar.md", indexed=fresh,
        )  # fmt: skip

    def tldr_queries(self) -> tuple[list[str], list[str]]:
        """Known-item questions over the English pages (tools/evalkit/data, test split) and
        keyword queries made of their content words."""
        data = json.loads(TLDR_QUERIES.read_text(encoding="utf-8"))
        qs = [q["query"] for q in data["questions"] if q.get("split") == "test"][: self.b.n_queries]
        keywords = []
        for q in qs[: self.b.n_keywords]:
            words = [w for w in re.findall(r"[a-z][a-z-]+", q) if len(w) >= 4 and w not in STOP]
            keywords.append(" ".join(words[:2]) or q.split()[0])
        return qs, keywords

    def catch_up_lexical(self, path: Path) -> bool:
        """Whether the working copy at `path` has every vector in step; if so, a plain `index`
        brings the rest (a lexical index of an older schema, say) in step too, in seconds
        instead of the hour of a full index with vectors."""
        if not (path / ".vaultmem").is_dir():
            return False
        self.b.stop_stray_watcher(path)
        try:
            status = self.b.vm("status", vault=path, ghost=False, timeout=120).json()
        except NA:
            return False
        index = status.get("index") or {}
        detail = index.get("pending_detail") or {}
        if detail.get("vectors") or not (index.get("embedding") or {}).get("fingerprint"):
            return False
        if not index.get("fresh"):
            self.b.log(f"catching up the lexical side of {path.name} (vectors kept)")
            r = self.b.vm("index", vault=path, ghost=False, timeout=self.b.args.index_timeout)
            if not r.ok:
                return False
        return self.b.index_fresh(path)

    def generated(self, n: int, backend: str, reuse: bool = False) -> VaultInfo:
        if reuse:
            self.catch_up_lexical(self.b.work / "runs" / f"n{n}-{backend}")
        v = self.b.synthetic_vault(n, backend, reuse=reuse)
        if v.manifest:
            man = v.manifest
            self.described.append(
                f"{v.label}: `tools/genvault.py --seed {self.b.args.seed}` ({man.get('words', 0):,} words, "
                f"{man.get('bytes', 0) / 1e6:.1f} MB, {man.get('links', 0):,} links)"
            )
        return v

    # --- the run ------------------------------------------------------------------------

    def run(self) -> None:
        """Every vault without vectors first (the curve), then the vectors, then churn."""
        b = self.b
        args = b.args
        b.discover()
        lexical: list[VaultInfo] = []
        for kind in args.scale_vaults:
            try:
                v = self.generated(int(kind), "none") if kind.isdigit() else self.tldr_vault(False, "none")
            except Exception as exc:  # one vault that cannot be made must not lose the others
                b.rows.append(self.row("Scale: vaults", str(kind), f"n/a ({type(exc).__name__}: {exc})"))
                continue
            lexical.append(v)
            self.cold_rows(v)
        self.curve_row()
        if not args.no_watch:
            for v in lexical:
                self.watcher_rows(v)
        if args.no_vectors or not args.scale_vectors:
            return
        self.split = (len(b.rows), len(b.memory), len(self.described))
        self.vector_part = "vectors-large" if all(is_large(k) for k in args.scale_vectors) else "vectors"
        self.load_vectors = loadavg()
        self.started_vectors = time.time()
        dense: list[VaultInfo] = []
        for kind in args.scale_vectors:
            try:
                if kind == "tldr-en":
                    v = self.tldr_vault(True, "auto", reuse=args.scale_reuse_vectors)
                elif kind == "tldr":
                    v = self.tldr_vault(False, "auto", reuse=args.scale_reuse_vectors)
                else:
                    v = self.generated(int(kind), "auto", reuse=True)
            except Exception as exc:
                b.rows.append(self.row("Scale: vaults", f"{kind} with vectors", f"n/a ({type(exc).__name__}: {exc})"))
                continue
            dense.append(v)
            if not v.indexed:
                b.full_index(v)
            else:
                self.ran.append(
                    f"{v.label}, backend auto: the working copy of an earlier run reused with its vectors "
                    "(the full index with vectors is not rerun here; see the section above for it)"
                )
            if not args.no_watch:
                self.watcher_rows(v)
        if not args.no_watch and self.vector_part == "vectors":
            # Issue 14 states the churn for 10k notes: the generated vault of that size.
            churn_v = next((v for v in dense if v.manifest.get("topics")), dense[0] if dense else None)
            if churn_v is not None:
                self.churn(churn_v)

    def row(self, area: str, name: str, figure: str, target: str = "", peer: str = "", notes: str = "",
            ok: bool | None = None) -> Row:  # fmt: skip
        return Row(area, name, figure, target, peer, notes, ok)

    # --- rows without the watcher --------------------------------------------------------

    def cold_rows(self, v: VaultInfo) -> None:
        b = self.b
        before = len(b.rows)
        b.full_index(v, target="≥ 500 notes/s; no slowdown 10k → 50k")
        full = b.raw.get("index_full", {}).get(f"{v.label}/{v.backend}")
        if isinstance(full, dict) and full.get("wall_s"):
            count = int(full.get("added", 0)) + int(full.get("updated", 0)) + int(full.get("unchanged", 0))
            self.curve.append(Curve(v.label, count, float(full["wall_s"])))
        b.noop(v, target="< 1 s")
        b.get_status(v)
        b.query(v, target="< 2 s", limit_s=2.0)
        b.search(v, "bm25")
        for r in b.rows[before:]:
            r.area = "Scale: " + r.area

    def curve_row(self) -> None:
        if len(self.curve) < 2:
            return
        rates = [(c.label, c.notes / c.seconds) for c in self.curve]
        first = rates[0][1]
        worst = min(r for _, r in rates)
        parts = [f"{label}: {rate:,.0f} notes/s" for label, rate in rates]
        slowdown = 1 - worst / first if first else 0.0
        ok = worst >= 500 and slowdown <= 0.15
        self.b.rows.append(
            self.row(
                "Scale: Full index, BM25 + graph (backend none)",
                "the curve",
                " → ".join(parts),
                "≥ 500 notes/s at every size; no slowdown",
                "",
                f"slowest {worst:,.0f} notes/s, {slowdown * 100:+.0f}% below the first size"
                if slowdown > 0
                else "no size slower than the first",
                ok,
            )
        )

    # --- with the watcher -------------------------------------------------------------------

    def watcher_rows(self, v: VaultInfo) -> None:
        b = self.b
        area = f"Scale: with the watcher running ({v.label}, backend {v.backend})"
        vectors = v.backend != "none"
        try:
            b.require("watch")
            if not v.indexed:
                raise NA("index failed")
            pid, ready_s, note = b.start_watcher(v)
            if vectors:
                b.wait_model_ready(v, timeout=300)
        except NA as exc:
            b.rows.append(self.row(area, "all", f"n/a ({exc})"))
            return
        try:
            b.rows.append(
                self.row(area, "start to ready (catch-up, model, posting lists)", secs(ready_s), "", "", note)
            )
            if vectors:
                b.add(area, "`search --mode hybrid`", "p50 < 50 ms", lambda: b.watched_search(v, "hybrid"))
            b.add(area, "`search --mode bm25`", "", lambda: b.watched_search(v, "bm25"))
            b.add(area, "`query`", "< 2 s", lambda: self.watched_query(v))
            b.add(area, "`get ID`", "", lambda: b.watched_get(v))
            b.add(area, "saved edit → searchable", "< 2 s", lambda: b.edit_latency(v, new=False))
            b.add(area, "new file → searchable", "< 2 s", lambda: b.edit_latency(v, new=True))
            b.add(area, "watcher RSS", "< 1.5 GB with vectors", lambda: self.watcher_rss(pid, v))
        finally:
            stop_s = b.stop_watcher(v.path, pid)
            b.rows.append(
                self.row(
                    area,
                    "`watch --stop` to exit",
                    secs(stop_s) if stop_s is not None else "n/a (did not exit within 15 s; sent SIGTERM)",
                    "a few seconds",
                    ok=stop_s is not None and stop_s < 10,
                )
            )

    def watched_query(self, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        b = self.b
        kws = v.keywords
        runs = b.repeat(lambda i: b.vm_argv(v.path, "query", kws[max(0, i - 1)]), len(kws), timeout=120)
        t = [r.seconds for r in runs]
        inner = [float(r.json().get("search_time_ms", 0.0)) for r in runs]
        return (
            lat(t),
            "",
            f"{len(t)} keyword queries answered by the watcher; search_time_ms p50 {median(inner):.0f}",
            max(t) < 2.0,
        )

    def tree_rss(self, pid: int) -> tuple[float, float, int]:
        cur = peak = 0.0
        pids = [p for p in self.b.tree(pid) if pid_alive(p)]
        for p in pids:
            c, h = proc_rss_mb(p)
            cur, peak = cur + c, peak + h
        return cur, peak, len(pids)

    def watcher_rss(self, pid: int, v: VaultInfo) -> tuple[str, str, str, bool | None]:
        cur, peak, n = self.tree_rss(pid)
        vectors = v.backend != "none"
        self.b.mem(f"watcher (VmHWM) · {v.label} · backend {v.backend}", peak, "< 1.5 GB with vectors")
        notes = f"{n} process(es); /proc VmRSS and VmHWM" + ("" if vectors else "; no model loaded (backend none)")
        return f"{mb(cur)} now · {mb(peak)} peak", "", notes, peak < WATCHER_RSS_LIMIT_MB

    # --- churn ----------------------------------------------------------------------------

    def churn(self, v: VaultInfo) -> None:
        area = f"Scale: watcher memory under churn ({v.label}, backend {v.backend})"
        edits = self.b.args.churn_edits
        self.b.add(area, f"{edits:,} saved edits, RSS after each {CHURN_ROUND}", "end within 15% of after the first 100",
                   lambda: self.churn_measure(v, edits))  # fmt: skip

    def churn_measure(self, v: VaultInfo, edits: int) -> tuple[str, str, str, bool | None]:
        b = self.b
        b.no_watcher(v)
        pid, _, _ = b.start_watcher(v)
        try:
            if v.backend != "none":
                b.wait_model_ready(v, timeout=300)
            rss, took = churn(v.path, pid, b, edits, CHURN_ROUND)
        finally:
            b.stop_watcher(v.path, pid)
        base, end = rss[0], rss[-1]
        growth = end / base - 1
        b.raw["churn"] = {"rss_mb": rss, "round_s": took}
        curve = " ".join(f"{x:.0f}" for x in rss)
        notes = (
            f"editor-style saves (temp file + rename) of {CHURN_ROUND} notes at a time, waiting after each "
            f"round until `status` reports the index fresh (every edit re-indexed"
            + (", re-embedded" if v.backend != "none" else "")
            + f"); round p50 {secs(median(took))}; VmRSS after each round (MB): {curve}; peak {mb(max(rss))}"
        )
        return f"{mb(base)} → {mb(end)} ({growth * 100:+.1f}%)", "", notes, abs(growth) <= CHURN_TOLERANCE

    # --- the report -----------------------------------------------------------------------

    def header(self, part: str) -> list[str]:
        split = self.split[2] if self.split is not None else len(self.described)
        if part != "lexical":
            started, load, described = self.started_vectors, self.load_vectors, self.described[split:]
            ended = time.time()
        else:
            started, load, described = self.started, self.load_start, self.described[:split]
            ended = self.started_vectors if self.split is not None else time.time()
        how = "--only scale" if self.b.args.only else "(the scale rows of a full run)"
        lines = [
            f"_Written by `python -m tools.bench {how}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
            f"these rows took {(ended - started) / 60:.1f} min._",
            "",
            machine_line(load),
            "- **Vaults:** " + "; ".join(dict.fromkeys(described)) + ".",
            "- **Method:** as in the section above: every figure is a fresh CLI process (the installed `vaultmem`, "
            "`--json`, ghost alice) timed from spawn to exit after an uncounted warm-up, each beside its peer measured "
            "in the same run. Search queries over tldr are the known-item questions of `tools/evalkit/data/tldr_queries.json` "
            "(test split), keyword queries their content words; over generated vaults Cranfield's."
            + (f" Churn: {self.b.args.churn_edits:,} saves in rounds of {CHURN_ROUND}." if part == "vectors" else ""),
        ]
        lines += [f"- {line}" for line in self.ran]
        if part != "lexical":
            lines += [f"- {line}" for line in self.b.args.scale_note]
        return [*lines, ""]


def churn(vault: Path, pid: int, b: Bench, edits: int, per_round: int) -> tuple[list[float], list[float]]:
    """Save `edits` edits the way editors do, `per_round` at a time over distinct notes,
    waiting after each round until the watcher has indexed them all; the watcher's VmRSS
    after each round and each round's seconds."""
    rng = random.Random(6)
    notes = sorted(p for p in (vault / "shared").rglob("*.md") if not p.name.startswith("."))
    if len(notes) < per_round:
        raise NA(f"only {len(notes)} shared notes to edit")
    originals: dict[Path, str] = {}
    rss: list[float] = []
    took: list[float] = []
    done = 0
    while done < edits:
        t0 = time.perf_counter()
        for path in rng.sample(notes, per_round):
            text = originals.setdefault(path, path.read_text(encoding="utf-8"))
            token = "".join(rng.choice(string.ascii_lowercase) for _ in range(12))
            tmp = path.with_name(f".{path.name}.churn~")
            tmp.write_text(f"{text.rstrip()}\n\nChurn edit {done}: {token} {' '.join(rng.sample(STOP_WORDS, 6))}.\n")
            os.replace(tmp, path)
            done += 1
        wait_fresh(b, vault, pid)
        took.append(time.perf_counter() - t0)
        rss.append(proc_rss_mb(pid)[0])
        b.log(f"  churn: {done} edits, watcher RSS {rss[-1]:.0f} MB, round {took[-1]:.1f} s")
    return rss, took


STOP_WORDS = sorted(STOP | {"pressure", "flow", "boundary", "layer", "heat", "shock", "wing", "plate"})


def wait_fresh(b: Bench, vault: Path, pid: int, timeout: float = 600.0) -> None:
    """Until the watcher reports its index fresh (nothing pending, vectors included)."""
    deadline = time.monotonic() + timeout
    time.sleep(0.5)  # past the watcher's debounce, so the round's events are seen
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            raise NA("the watcher exited during the churn")
        r: Run = b.vm("status", vault=vault, ghost=False, timeout=60)
        try:
            if r.json().get("index", {}).get("fresh"):
                return
        except NA:
            pass
        time.sleep(0.25)
    raise NA(f"index not fresh {timeout:.0f} s after a round of edits")


def sections(scale: Scale, rows: list[Row], memory: list[Row]) -> list[tuple[tuple[str, str], str]]:
    """(markers, text) of each part that ran: the rows without vectors, the rows with."""
    cut = scale.split or (len(rows), len(memory), 0)
    out = []
    for part, (part_rows, part_memory) in {
        "lexical": (rows[: cut[0]], memory[: cut[1]]),
        scale.vector_part: (rows[cut[0] :], memory[cut[1] :]),
    }.items():
        if part_rows:
            out.append((MARKERS[part], render(scale, part_rows, part_memory, part)))
    return out


def render(scale: Scale, rows: list[Row], memory: list[Row], part: str) -> str:
    lines = [MARKERS[part][0], TITLES[part], "", *scale.header(part)]
    lines += area_tables(rows, memory, lambda a: area_rank(a.removeprefix("Scale: ")))
    lines.append(MARKERS[part][1])
    return "\n".join(lines) + "\n"
