"""tools/evalkit/linkcheck.py's own model of Obsidian's link paths (no corpus needed)."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def linkcheck() -> ModuleType:
    return importlib.import_module("tools.evalkit.linkcheck")


@pytest.mark.parametrize(
    ("inside", "path"),
    [
        ("Target", "Target"),
        ("Target|alias", "Target"),
        ("Target\\|alias", "Target"),
        ("Target#Heading\\|alias", "Target"),
        ("Folder/Target \\| x", "Folder/Target"),
        ("Engelbart.jpg\\|100", "Engelbart.jpg"),
        ("#Heading\\|alias", ""),
    ],
)
def test_link_path_reads_an_escaped_pipe_as_the_label_separator(linkcheck: ModuleType, inside: str, path: str) -> None:
    assert linkcheck.link_path(inside) == path


def test_obsidian_target_of_an_escaped_pipe_link(linkcheck: ModuleType) -> None:
    paths = ["shared/a/Permalinks.md", "shared/b/Other.md"]
    assert linkcheck.obsidian_target("Permalinks\\|Permalinks", "shared/b/Other.md", paths) == "shared/a/Permalinks.md"
    assert linkcheck.obsidian_target("Engelbart.jpg\\|100", "shared/b/Other.md", paths) is None
