"""The edge table stays exact whether a reconcile recomputes every note's links or, when
no name changed, only the edited notes' own links."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.conftest import Cli
from vaultmem.config import load_config
from vaultmem.index.catalog import catch_up
from vaultmem.index.resolve import LinkSource, NameEntry, Resolver, compute_edges
from vaultmem.index.statedb import Edge, StateDB


def _vault(root: Path) -> Cli:
    root.mkdir()
    (root / "vaultmem.toml").write_text('[vault]\nghosts = ["alice"]\n\n[embedding]\nbackend = "none"\n')
    (root / "shared").mkdir()
    (root / "shared" / "hub.md").write_text("---\ntitle: Hub\n---\nThe hub.\n")
    (root / "shared" / "spoke.md").write_text("---\ntitle: Spoke\n---\nNo links yet.\n")
    (root / "shared" / "fan.md").write_text("---\ntitle: Fan\n---\nI like [[Wheel]].\n")
    return Cli(root)


def _in(cli: Cli, ref: str) -> list[str]:
    return sorted(n["path"] for n in cli.ok("get", ref)["links"]["in"])


def test_body_edit_updates_only_its_links(tmp_path: Path) -> None:
    root = tmp_path / "v"
    cli = _vault(root)
    assert _in(cli, "Hub") == []
    (root / "shared" / "spoke.md").write_text("---\ntitle: Spoke\n---\nNow see [[Hub]].\n")
    assert _in(cli, "Hub") == ["shared/spoke.md"]
    (root / "shared" / "spoke.md").write_text("---\ntitle: Spoke\n---\nLinks removed.\n")
    assert _in(cli, "Hub") == []


def test_a_new_name_resolves_other_notes_dangling_links(tmp_path: Path) -> None:
    root = tmp_path / "v"
    cli = _vault(root)
    assert cli.ok("get", "Fan")["links"]["dangling"][0]["target"] == "Wheel"
    # Hub takes the alias "Wheel": Fan's link, untouched, now resolves to it.
    (root / "shared" / "hub.md").write_text("---\ntitle: Hub\naliases: [Wheel]\n---\nThe hub.\n")
    assert _in(cli, "Hub") == ["shared/fan.md"]
    assert cli.ok("get", "Fan")["links"]["dangling"] == []


def _full_edges(db: StateDB) -> list[Edge]:
    resolver = Resolver(NameEntry(*row) for row in db.names())
    return compute_edges(resolver, [LinkSource(r.path, r.links, r.parent) for r in db.notes()])


def _key(e: Edge) -> tuple[str, ...]:
    return (e.src, e.dst or "", e.kind, e.target, e.heading or "", e.label or "")


@pytest.mark.parametrize("seed", range(6))
def test_incremental_edges_equal_a_full_recompute(tmp_path: Path, seed: int) -> None:
    """Random adds, deletes, moves, renames (title, alias, id) and link edits on notes whose
    names collide across folders; after every reconcile the edges table must equal what
    resolving every link from scratch gives."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    (root / "vaultmem.toml").write_text('[vault]\nghosts = ["alice"]\n\n[embedding]\nbackend = "none"\n')
    folders = ["shared", "shared/a", "shared/b", "shared/a/deep", "project/p1"]
    stems = ["wheel", "hub", "spoke", "Wheel", "notes"]
    names = ["Wheel", "Hub", "Axle", "Spoke", "Rim"]

    forms = [  # every way resolve.py can meet a name: stem, folder suffix, title, id, relative, path
        lambda: f"[[{rng.choice(stems)}]]",
        lambda: f"[[{rng.choice(folders).split('/')[-1]}/{rng.choice(stems)}]]",
        lambda: f"[[{rng.choice(names)}]]",
        lambda: f"[[id-{rng.randrange(4)}]]",
        lambda: f"[x](../{rng.choice(stems)}.md)",
        lambda: f"[x]({rng.choice(stems)}.md)",
        lambda: f"[[{rng.choice(folders)}/{rng.choice(stems)}]]",
    ]

    def target() -> str:
        return rng.choice(forms)()

    def write(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        head = [f"title: {rng.choice(names)}"]
        if rng.random() < 0.4:
            head.append(f"aliases: [{rng.choice(names)}]")
        if rng.random() < 0.4:
            head.append(f"id: id-{rng.randrange(4)}")
        if rng.random() < 0.3:
            head.append(f"parent: {rng.choice(names)}")
        links = " ".join(target() for _ in range(rng.randrange(4)))
        path.write_text("---\n" + "\n".join(head) + "\n---\nBody " + links + "\n")

    config = load_config(root, {})
    db = StateDB(root / ".vaultmem" / "state.db")
    files: list[Path] = []
    for _ in range(12):
        path = root / rng.choice(folders) / f"{rng.choice(stems)}{rng.randrange(3)}.md"
        write(path)
        files.append(path)
    for step in range(25):
        op = rng.randrange(5)
        live = [f for f in files if f.exists()]
        if op == 0 or not live:
            path = root / rng.choice(folders) / f"{rng.choice(stems)}.md"
            write(path)
            files.append(path)
        elif op == 1:
            rng.choice(live).unlink()
        elif op == 2:
            src = rng.choice(live)
            dst = root / rng.choice(folders) / f"{rng.choice(stems)}{rng.randrange(3)}.md"
            if not dst.exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                src.rename(dst)
                files.append(dst)
        else:
            write(rng.choice(live))
        catch_up(root, db, config)
        assert sorted(map(_key, db.all_edges())) == sorted(map(_key, _full_edges(db))), f"step {step}"
    db.close()
