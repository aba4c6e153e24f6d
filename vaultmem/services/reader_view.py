"""Links as the caller resolves them (index/graph.py ReaderLinks), kept per catalog
generation and ghost: computed once after each change, by the first search or `get` that
needs them (one pass over the edges; a second only when some link lands on a hidden note)."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from vaultmem.vault.layout import Location

if TYPE_CHECKING:
    from vaultmem.index.graph import ReaderLinks
    from vaultmem.services.app import App, Indexes

# indexes -> ((generation, ghost), links): one reader's view per shared Indexes (the watcher
# serves several ghosts from one)
_CACHE: weakref.WeakKeyDictionary[Indexes, dict[str | None, tuple[str, ReaderLinks]]] = weakref.WeakKeyDictionary()


def reader_links(app: App) -> ReaderLinks:
    from vaultmem.index.graph import reader_links as compute
    from vaultmem.index.resolve import NameEntry, Resolver

    db = app.db
    generation = db.get_meta("edges_generation") or "0"
    views = _CACHE.setdefault(app.indexes, {})
    held = views.get(app.ghost)
    if held is not None and held[0] == generation:
        return held[1]
    edges = db.all_edges()
    # Only where each note lives matters here: no row is decoded (a 50k-note vault holds
    # as many rows as a `get` would otherwise decode).
    places = db.note_locations()
    seen: dict[str, bool] = {}

    def visible(path: str) -> bool:
        known = seen.get(path)
        if known is None:
            place = places.get(path)
            known = seen[path] = place is not None and app.can_read(Location(place[0] or "shared", *place[1:]))
        return known

    def resolver() -> Resolver:
        return Resolver(NameEntry(*n) for n in db.names() if visible(n[0]))

    links = compute(edges, visible, resolver)
    views[app.ghost] = (generation, links)
    return links


__all__ = ["reader_links"]
