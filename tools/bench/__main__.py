"""`make bench`: vaultmem's performance figures (SPEC §7), each beside a peer measured in the
same run, written to docs/BENCHMARKS.md between `<!-- bench:start -->` and `<!-- bench:end -->`.

    python -m tools.bench --corpora ../shared/corpora --out docs/BENCHMARKS.md
                          [--sizes 1000,10000] [--work bench-work/bench] [--quick]
    python -m tools.bench --only mcp,autostart   # those rows, on the largest vault; printed
    python -m tools.bench --only mcp-http --sizes 1000   # 50 MCP clients over HTTP, on the 1k vault
    python -m tools.bench --only scale [--scale-vectors ""]   # the scale rows (scale.py): 10k,
                                          # tldr (38k) and 50k notes; in their own sections

Vaults come from tools/genvault.py (cached in the work folder) and from the real Obsidian
Help vault in the corpora. Every command runs as a fresh process, timed from spawn to exit,
with its own peak RSS from wait4(2). A figure that cannot be measured (command missing,
failing, timing out) is reported as "n/a (reason)"; the bench itself never stops for it.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tools.bench.model import END, START, Row
from tools.bench.runner import Bench
from tools.bench.scale import Scale
from tools.bench.scale import sections as scale_sections
from tools.repo import CORPORA, REPO, WORK
from tools.sections import write_section

ONLY_GROUPS = ("watcher", "autostart", "mcp", "mcp-http", "review", "scale")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark vaultmem against the SPEC §7 targets, each figure beside a peer measured in the same run.",
        epilog="Writes the section between <!-- bench:start --> and <!-- bench:end --> of --out and prints it.",
    )
    parser.add_argument(
        "--corpora",
        type=Path,
        default=CORPORA,
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
        "--work", type=Path, default=WORK / "bench", help="cache of generated vaults and working copies"
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
        help=f"run only these groups of rows ({', '.join(ONLY_GROUPS)}); watcher, autostart, mcp and mcp-http run on the largest "
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
            write_section(args.out, report, (START, END))
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
