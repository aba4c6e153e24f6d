"""docs/BENCHMARKS.md is written by several tools, each owning the sections between its own
markers (`<!-- bench:start -->` … `<!-- bench:end -->`, `<!-- eval:start -->` …): a tool
replaces its section and leaves every other byte of the file as it was."""

from __future__ import annotations

import os
from pathlib import Path

NEW_DOCUMENT = "# Benchmarks\n\n"


def replace_section(document: str, section: str, markers: tuple[str, str]) -> str:
    """`document` with the text between `markers` (inclusive) swapped for `section`, which
    holds the markers itself; appended when the document has none yet."""
    section = section.rstrip("\n")
    start, end = document.find(markers[0]), document.find(markers[1])
    if start != -1 and end > start:
        return document[:start] + section + document[end + len(markers[1]) :]
    if not document.strip():
        return NEW_DOCUMENT + section + "\n"
    return document.rstrip("\n") + "\n\n" + section + "\n"


def write_section(path: Path, section: str, markers: tuple[str, str]) -> None:
    """Read, replace, write at once (through a temporary file): another tool may have
    rewritten its own section since this one started."""
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(replace_section(existing, section, markers), encoding="utf-8")
    os.replace(tmp, path)
