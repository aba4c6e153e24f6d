"""The synthetic vault generator behind `make bench`: deterministic, well-formed, linked."""

from __future__ import annotations

import importlib
import json
import posixpath
from pathlib import Path
from types import ModuleType

import pytest

from vaultmem.vault.layout import classify
from vaultmem.vault.note import ParsedNote, parse_note


@pytest.fixture(scope="module")
def genvault() -> ModuleType:
    return importlib.import_module("tools.genvault")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _notes(root: Path) -> list[ParsedNote]:
    notes = []
    for path in sorted(root.rglob("*.md")):
        parsed = parse_note(path.relative_to(root).as_posix(), path.read_bytes())
        assert isinstance(parsed, ParsedNote), parsed
        notes.append(parsed)
    return notes


# corpus=None: the built-in vocabulary keeps these tests independent of ../shared/corpora.
def test_same_seed_same_vault_other_seed_other_vault(genvault: ModuleType, tmp_path: Path) -> None:
    corpus = None
    a = genvault.generate(tmp_path / "a", 120, seed=7, corpus=corpus)
    b = genvault.generate(tmp_path / "b", 120, seed=7, corpus=corpus)
    c = genvault.generate(tmp_path / "c", 120, seed=8, corpus=corpus)
    assert a.notes == b.notes == 120
    files_a = _files(tmp_path / "a")
    files_b = _files(tmp_path / "b")
    # The manifest records the generation time; everything else must be byte-identical.
    manifest_a, manifest_b = (json.loads(f.pop(genvault.MANIFEST)) for f in (files_a, files_b))
    assert manifest_a.pop("seconds") >= 0 and manifest_b.pop("seconds") >= 0
    assert manifest_a == manifest_b
    assert files_a == files_b
    assert files_a != _files(tmp_path / "c")
    assert c.notes == 120


def test_notes_parse_with_scope_of_their_folder(genvault: ModuleType, tmp_path: Path) -> None:
    root = tmp_path / "v"
    genvault.generate(root, 300, seed=3, ghosts=["alice", "bob"], projects=2, embedding="none", corpus=None)
    notes = _notes(root)
    assert len(notes) == 300
    assert 'backend = "none"' in (root / "vaultmem.toml").read_text()
    ids = set()
    scopes = set()
    for note in notes:
        fm = note.front_matter
        assert note.fm_ok and not note.problems, (note.relpath, note.problems)
        loc = classify(note.relpath)
        assert loc.placed
        assert fm["scope"] == loc.scope, note.relpath
        assert fm.get("owner") == loc.owner, note.relpath
        assert fm.get("project") == loc.project, note.relpath
        assert fm["hash"] == note.body_hash()
        assert len(fm["id"]) == 26 and not note.id_derived
        assert fm["created"].endswith("Z") and fm["updated"] >= fm["created"]
        ids.add(note.id)
        scopes.add(loc.scope)
    assert len(ids) == 300
    assert scopes == {"shared", "private", "project", "diary", "inbox"}


def _resolver(notes: list[ParsedNote]) -> dict[str, str]:
    """Obsidian's resolution keys (SPEC §2): id, path, stem, title, alias; case-insensitive."""
    keys: dict[str, str] = {}
    for n in notes:
        stem = n.relpath.rsplit("/", 1)[-1][:-3]
        for key in (n.id, n.relpath, n.relpath[:-3], stem, n.title, *n.aliases):
            keys.setdefault(key.lower(), n.relpath)
    return keys


def test_links_mostly_resolve(genvault: ModuleType, tmp_path: Path) -> None:
    root = tmp_path / "v"
    summary = genvault.generate(root, 400, seed=11, corpus=None)
    notes = _notes(root)
    keys = _resolver(notes)
    total = resolved = 0
    kinds = set()
    for note in notes:
        for link in note.links:
            total += 1
            kinds.add(link.kind)
            target = link.target
            if link.kind == "markdown":
                target = posixpath.normpath(posixpath.join(posixpath.dirname(note.relpath), target))
            resolved += target.lower() in keys
    assert total > 400 and summary.links == total
    assert kinds == {"wiki", "embed", "markdown"}
    assert 0.85 <= resolved / total < 1.0  # some links dangle on purpose
