"""Links as the caller resolves them (index/graph.py ReaderLinks), kept per ghost from one
catalog generation to the next: computed by the first search or `get` that needs them (one
pass over the edges), then redone only for the notes whose edges a change replaced, when
the state db's edge log tells which.

Why that is exact: a reader's entries for a note depend on the note's edges, on who may see
the note and its targets, and on the names of the notes the reader sees. A reconcile
replaces the edges of every note that changed (existence, and so visibility, included) and
of every note with a link that could mean a name that came or went (catalog.update_edges);
a note's visibility follows from its path. So the entries of every other note still hold."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultmem.vault.layout import Location

if TYPE_CHECKING:
    from vaultmem.index.graph import ReaderLinks
    from vaultmem.services.app import App, Indexes

Place = tuple[str | None, str | None, str | None, bool]  # StateDB.note_locations

# More notes changed than this: compute everything again (as cheap by then).
DELTA_MAX = 5000


@dataclass(slots=True)
class _View:
    generation: str
    links: ReaderLinks
    seen: dict[str, bool]  # path -> may this reader see it (a note's never changes while it exists)


# indexes -> ghost -> view: one reader's view per shared Indexes (the watcher serves several
# ghosts from one)
_CACHE: weakref.WeakKeyDictionary[Indexes, dict[str | None, _View]] = weakref.WeakKeyDictionary()


def _visibility(app: App, place_of: Callable[[str], Place | None], seen: dict[str, bool]) -> Callable[[str], bool]:
    """Whether the reader may see `path` (`place_of`: where a note lives, None: no note),
    remembered in `seen`."""

    def visible(path: str) -> bool:
        known = seen.get(path)
        if known is None:
            place = place_of(path)
            known = seen[path] = place is not None and app.can_read(Location(place[0] or "shared", *place[1:]))
        return known

    return visible


def reader_links(app: App) -> ReaderLinks:
    from vaultmem.index.catalog import names_resolver
    from vaultmem.index.graph import reader_links as compute

    db = app.db
    generation = db.edges_generation()  # before the edges: see App.link_graph
    views = _CACHE.setdefault(app.indexes, {})
    view = views.get(app.ghost)
    if view is not None and generation is not None:
        if view.generation == generation:
            return view.links
        changed = db.edge_sources_between(view.generation, generation, limit=DELTA_MAX)
        if changed is not None:
            edges = db.edges_of(changed)
            for path in changed:
                view.seen.pop(path, None)  # a note that came or went: asked again (and not kept)
            # The places of the changed notes and of where their links land, in one query; a
            # candidate the Resolver meets besides is looked up on its own.
            places = db.note_locations(changed | {e.dst for e in edges if e.dst is not None})

            def place_of(path: str) -> Place | None:
                return places[path] if path in places else db.note_locations([path]).get(path)

            view.links.drop(changed)
            view.links.add(edges, _visibility(app, place_of, view.seen), lambda: names_resolver(db))
            view.generation = generation
            return view.links
    # Only where each note lives matters here: no row is decoded (a 50k-note vault holds
    # as many rows as a `get` would otherwise decode).
    seen: dict[str, bool] = {}
    links = compute(db.all_edges(), _visibility(app, db.note_locations().get, seen), lambda: names_resolver(db))
    if generation is not None:
        views[app.ghost] = _View(generation, links, seen)
    else:
        views.pop(app.ghost, None)
    return links


__all__ = ["reader_links"]
