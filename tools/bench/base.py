"""The bench's plumbing: running the installed CLI, measuring one figure without ever
stopping for a failure, peers measured once and reused, and the watcher processes a run
starts (always stopped at the end)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.bench.model import BIN, GHOST, Row, VaultInfo, short
from tools.bench.util import (
    NA,
    Run,
    lat,
    mb,
    median,
    ms,
    pid_alive,
    rate,
    run,
    secs,
)
from tools.machine import loadavg
from tools.repo import REPO


class BenchBase:
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

    # --- peers --------------------------------------------------------------------------

    def peer_run(self, kind: str, v: VaultInfo) -> dict[str, Any]:
        def go() -> dict[str, Any]:
            qfile = self.work / f"queries-{v.path.name}.json"
            qfile.write_text(json.dumps(v.queries), encoding="utf-8")
            argv = [
                sys.executable,
                "-m",
                "tools.bench.peers",
                kind,
                "--vault",
                str(v.path),
                "--queries",
                str(qfile),
            ]
            if kind == "dense":
                argv += ["--max-encode", str(self.args.peer_encode)]
            r = run(argv, self.env, timeout=self.args.index_timeout, cwd=REPO)
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
