"""The bench run: which rows on which vaults, in what order; the report of them."""

from __future__ import annotations

import contextlib
import os
import signal
import time
import traceback
from datetime import UTC, datetime

from tools.bench.model import END, START, Row, VaultInfo, short
from tools.bench.report import area_rank, area_tables, machine_line
from tools.bench.review import ReviewRows
from tools.bench.util import (
    pid_alive,
)
from tools.machine import git_state


class Bench(ReviewRows):
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
                self.mcp_http(last_auto)
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
        self.review()
        self.raw["commands_at_end"] = sorted(self.commands)

    def run_only(self, groups: list[str]) -> None:
        """`--only`: just these rows, on the largest generated vault with vectors; its
        working copy from an earlier run is kept when its index is fresh (else rebuilt)."""
        self.discover()
        if "review" in groups:
            self.review()
        if not {"watcher", "autostart", "mcp", "mcp-http"} & set(groups):
            return
        n = 1000 if self.quick else max(self.args.sizes)
        v = self.synthetic_vault(n, "auto", reuse=True)
        self.vaults.append(v)
        if not v.indexed:
            self.full_index(v)
        if "watcher" in groups:
            self.watcher(v)
        if "autostart" in groups:
            self.autostart(v)
        if "mcp" in groups:
            self.mcp(v)
        if "mcp-http" in groups:
            self.mcp_http(v)

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
            f"_Written by `python -m tools.bench{' --quick' if self.quick else ''}` on {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; the run took {elapsed / 60:.1f} min._",
            "",
            machine_line(self.load_start),
            f"- **Code:** vaultmem at git {sha or '?'}{' plus uncommitted changes' if dirty else ''}; commands present: {', '.join(sorted(self.commands))}.",
            f"- **Vaults:** generated by `tools/genvault.py --seed {self.args.seed}` (text from Cranfield bigram chains; ghosts alice, bob, carol; 3 projects): "
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
