"""What the bench measures and reports: its rows, its vaults, and the fixed inputs."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
