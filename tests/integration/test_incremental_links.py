"""The link graph, each reader's links and the names' Resolver are kept from one reconcile
to the next and updated for the notes whose edges changed (issue 14: edit -> searchable
at 50k notes). After any sequence of changes they must equal what computing them from
scratch gives, for every reader: privacy included (a ghost's links never land on, count or
reveal another ghost's private notes)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.integration._vaults import make_vault, note
from tests.unit.test_resolver_update import resolver_tables
from vaultmem.index import catalog
from vaultmem.index.graph import LinkGraph, ReaderLinks
from vaultmem.index.graph import reader_links as compute_reader_links
from vaultmem.index.resolve import NameEntry, Resolver
from vaultmem.index.statedb import EDGE_LOG_KEEP, StateDB
from vaultmem.services.app import App
from vaultmem.vault.layout import Location

FOLDERS = ["shared", "shared/a", "private/alice", "private/bob", "project/team", "project/open", "inbox/bob"]
STEMS = ["wheel", "hub", "spoke", "Wheel", "plan"]
NAMES = ["Wheel", "Hub", "Axle", "Secret plan", "Rim"]
RELATIONS = ("links_out", "links_in", "parents")


def _graph_shape(graph: LinkGraph) -> tuple[list[str], list[tuple[str, str, str]]]:
    g = graph.g
    return sorted(g.nodes), sorted((u, v, kind) for u, v, kind in g.edges(data="kind"))


def _links_shape(links: ReaderLinks) -> tuple[Any, ...]:
    moved = {src: sorted(pairs) for src, pairs in links.moved.items()}
    return moved, dict(links.arrived), dict(links.redirected)


def _visible(app: App) -> Any:
    places = app.db.note_locations()

    def visible(path: str) -> bool:
        place = places.get(path)
        return place is not None and app.can_read(Location(place[0] or "shared", *place[1:]))

    return visible


def _fresh_reader_links(app: App) -> ReaderLinks:
    """As before anything was kept: a Resolver over only the names this reader sees."""
    visible = _visible(app)
    names = Resolver(NameEntry(*n) for n in app.db.names() if visible(n[0]))
    return compute_reader_links(app.db.all_edges(), visible, lambda: names)


def _check(apps: list[App], step: object) -> None:
    """Everything kept in memory equals what a rebuild gives now."""
    db = apps[0].db
    graph = apps[0].indexes.link_graph()
    fresh = LinkGraph(db.all_edges())
    assert _graph_shape(graph) == _graph_shape(fresh), f"graph, step {step}"
    notes = db.note_paths()
    for app in apps:
        kept, want = app.reader_links(), _fresh_reader_links(app)
        assert _links_shape(kept) == _links_shape(want), f"{app.ghost}'s links, step {step}"
        visible = _visible(app)
        for path in notes:
            for relation in RELATIONS:
                got = graph.expand(path, relation, 2, visible, 50, kept)
                assert got == fresh.expand(path, relation, 2, visible, 50, want), (app.ghost, path, relation, step)
    held = apps[0].indexes.views.names._held
    if held is not None and held[0] == db.names_token():
        assert resolver_tables(held[1]) == resolver_tables(Resolver(NameEntry(*n) for n in db.names())), step


def _vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "v", projects={"team": ["alice"], "open": None})


@pytest.mark.parametrize("seed", range(8))
def test_kept_links_equal_a_rebuild_after_random_changes(tmp_path: Path, seed: int) -> None:
    """Random creates, edits (titles, aliases, ids and parents colliding across scopes),
    renames and moves across scopes, deletes, files turning unreadable, changes made by
    another process, and now and then a full rebuild: after each reconcile the graph and
    alice's and bob's links, kept in memory, equal a rebuild."""
    rng = random.Random(seed)
    root = _vault(tmp_path)
    forms = [  # every way a link can meet a name, often one in another ghost's private folder
        lambda: f"[[{rng.choice(STEMS)}]]",
        lambda: f"[[{rng.choice(NAMES)}]]",
        lambda: f"[[id-{rng.randrange(4)}]]",
        lambda: f"[[{rng.choice(FOLDERS)}/{rng.choice(STEMS)}]]",
        lambda: f"[[{rng.choice(FOLDERS).split('/')[-1]}/{rng.choice(STEMS)}]]",
        lambda: f"[x](../{rng.choice(STEMS)}.md)",
        lambda: f"![[{rng.choice(NAMES)}]]",
    ]

    def write(path: Path) -> None:
        front: dict[str, Any] = {"title": rng.choice(NAMES)}
        if rng.random() < 0.4:
            front["aliases"] = rng.sample(NAMES, rng.randrange(1, 3))
        if rng.random() < 0.4:
            front["id"] = f"id-{rng.randrange(4)}"
        if rng.random() < 0.3:
            front["parent"] = rng.choice(NAMES)
        links = " ".join(rng.choice(forms)() for _ in range(rng.randrange(5)))
        note(root, str(path.relative_to(root)), f"Body {links}", **front)

    def a_path() -> Path:
        return root / rng.choice(FOLDERS) / f"{rng.choice(STEMS)}{rng.randrange(3)}.md"

    for _ in range(14):
        write(a_path())
    alice = App.open(root, "alice")
    apps = [alice, alice.view("bob")]
    alice.catch_up()
    _check(apps, "start")
    graph, kept = alice.indexes.link_graph(), [app.reader_links() for app in apps]
    for step in range(30):
        live = [p for p in root.rglob("*.md")]
        op = rng.randrange(10)
        if op <= 1 or not live:
            write(a_path())
        elif op == 2:
            rng.choice(live).unlink()
        elif op == 3:
            dst = a_path()
            if not dst.exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                rng.choice(live).rename(dst)
        elif op == 4:
            rng.choice(live).write_bytes(b"\x00 not a note")
        else:
            write(rng.choice(live))
        full = rng.random() < 0.1
        if full:  # `index --full`: a db made anew, with new tokens
            alice.db.begin()
            alice.db.clear_catalog()
            alice.db.commit()
        if rng.random() < 0.3:
            # Another process (the CLI beside the watcher) reconciles with its own memory.
            other = App.open(root, "bob")
            other.catch_up()
            other.close()
        else:
            alice.catch_up()
        _check(apps, step)
        if not full:  # updated in place, never rebuilt
            assert alice.indexes.link_graph() is graph, step
            assert all(app.reader_links() is links for app, links in zip(apps, kept, strict=True)), step
        graph, kept = alice.indexes.link_graph(), [app.reader_links() for app in apps]
    alice.close()


class _Counted(Resolver):
    built = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).built += 1
        super().__init__(*args, **kwargs)


def test_the_names_resolver_is_kept_while_the_names_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "Resolver", _Counted)
    root = _vault(tmp_path)
    note(root, "shared/hub.md", "The hub, see [[Wheel]].", title="Hub", id="HUB")
    note(root, "private/bob/wheel.md", "bob's wheel.", title="Wheel", id="BOBWHEEL")
    app = App.open(root, "alice")
    db = app.db

    def built_by(change: Any) -> int:
        before = _Counted.built
        change()
        app.catch_up()
        _check([app, app.view("bob")], change)
        return _Counted.built - before

    app.catch_up()
    assert _Counted.built == 1  # the first names
    token = db.names_token()
    # an edit that keeps every name: the same Resolver, the same token
    assert built_by(lambda: note(root, "shared/hub.md", "Now [[Hub]] and [[Axle]].", title="Hub", id="HUB")) == 0
    assert db.names_token() == token
    # a new note with names of its own: updated in place, under a new token
    assert built_by(lambda: note(root, "shared/axle.md", "The axle.", title="Axle", id="AXLE")) == 0
    assert db.names_token() != token
    # a title another note has too: titles are candidates, order-free; still in place
    assert built_by(lambda: note(root, "shared/a/axle2.md", "Another.", title="Axle", aliases=["Wheel"])) == 0
    # an id another note holds: which wins depends on the db's order, so built anew
    assert built_by(lambda: note(root, "shared/dup.md", "Same id.", title="Dup", id="AXLE")) == 1
    assert built_by(lambda: (root / "shared" / "dup.md").unlink()) == 1  # "AXLE" had two holders
    assert built_by(lambda: (root / "shared" / "axle.md").rename(root / "shared" / "a" / "moved.md")) == 0
    # names changed by another process (its own memory): the Resolver held here is never used again
    other = App.open(root, "bob")
    note(root, "shared/rim.md", "Rim.", title="Rim")
    other.catch_up()
    other.close()
    assert built_by(lambda: note(root, "shared/hub.md", "Now [[Rim]].", title="Hub", id="HUB")) == 1
    app.close()


def test_a_rolled_back_change_leaves_no_resolver_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _vault(tmp_path)
    note(root, "shared/hub.md", "See [[Wheel]].", title="Hub")
    app = App.open(root, "alice")
    app.catch_up()
    _check([app], "start")
    note(root, "shared/wheel.md", "The wheel.", title="Wheel")

    def fail(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk full")

    with monkeypatch.context() as mp:
        mp.setattr(StateDB, "replace_edges", fail)
        with pytest.raises(RuntimeError):
            app.catch_up()  # the names' Resolver was already updated for the new note
    held = app.indexes.views.names._held
    assert held is not None and held[0] != app.db.names_token()
    app.catch_up()
    _check([app], "after")
    assert app.reader_links() is not None and app.db.edges_from("shared/hub.md")[0].dst == "shared/wheel.md"
    app.close()


def test_generations_are_tokens_and_the_log_is_bounded(tmp_path: Path) -> None:
    db = StateDB(tmp_path / "state.db")
    db.new_edges_generation(None)  # a full build: nothing to chain from
    first = db.edges_generation()
    assert first is not None and db.edge_sources_between("0", first) is None
    seen = {first}
    for i in range(EDGE_LOG_KEEP + 5):
        db.new_edges_generation([f"n{i}.md"])
        seen.add(db.edges_generation() or "")
    last = db.edges_generation() or ""
    assert len(seen) == EDGE_LOG_KEEP + 6
    assert db.edge_sources_between(first, last) is None  # beyond the log: rebuild
    assert db.edge_sources_between(last, last) == set()
    recent = db.conn.execute("SELECT previous FROM edge_log ORDER BY rowid DESC LIMIT 3").fetchall()[-1][0]
    assert db.edge_sources_between(recent, last) == {f"n{i}.md" for i in range(EDGE_LOG_KEEP + 2, EDGE_LOG_KEEP + 5)}
    assert db.edge_sources_between(recent, last, limit=2) is None
    db.begin()
    db.clear_catalog()  # `index --full`: no generation, no log; the next is new
    db.commit()
    assert db.edges_generation() is None and db.conn.execute("SELECT count(*) FROM edge_log").fetchone()[0] == 0
    db.new_edges_generation(["x.md"])
    assert db.edges_generation() not in seen
    db.close()
