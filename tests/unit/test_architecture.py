"""Layers import downwards only: errors/config/models -> vault -> index -> search ->
services -> cli, daemon. Parsed from the source, so a violation fails before it runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "vaultmem"
RANK = {"base": 0, "vault": 1, "index": 2, "search": 3, "services": 4, "cli": 5, "daemon": 5}
# cli and daemon sit side by side at the top: the watcher serves requests by running the
# CLI's own commands, and the CLI's entry point forwards to a running watcher.
PEERS = {("cli", "daemon"), ("daemon", "cli")}


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in RANK:
        return "base"  # vaultmem, vaultmem.errors, .config, .models
    return parts[1]


def imports_of(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.startswith("vaultmem")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("vaultmem"):
            found.append((node.module, node.lineno))
    return found


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "vault_template" not in p.parts)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    module = "vaultmem." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    mine = layer(module)
    for target, line in imports_of(path):
        theirs = layer(target)
        if theirs == mine or (mine, theirs) in PEERS:
            continue
        assert RANK[theirs] < RANK[mine], f"{path.relative_to(PACKAGE)}:{line} imports {target} ({mine} -> {theirs})"


def test_heavy_libraries_are_imported_lazily() -> None:
    """chromadb, torch, sentence_transformers, networkx, watchdog and numpy are imported
    inside the functions that need them, never at module level."""
    heavy = ("chromadb", "torch", "sentence_transformers", "networkx", "watchdog", "numpy")
    allowed: set[str] = set()
    for path in SOURCES:
        rel = str(path.relative_to(PACKAGE))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in heavy:
                    assert rel in allowed, f"{rel}:{node.lineno} imports {name} at module level"
