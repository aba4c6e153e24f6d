"""The bench report: the machine and code line, one markdown table per area."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tools.bench.model import VaultInfo
from tools.machine import git_state, loadavg, machine


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
