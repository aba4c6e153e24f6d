"""Warm views: what a long-lived process (the watcher, an MCP server) keeps between requests
so that a search or a `get` does not rebuild it — the names' Resolver, the link graph, each
reader's links, the dense side's note lookup, the projects, and query vectors. One owner,
`WarmViews`, held by the composition root (services/app.py) through `Indexes`; nothing here
is module-level state.

Every view is checked against the state db before use and redone from it when stale, so a
view is never the truth, only a copy that knows how old it is. The views derived from the
edges follow one rule (`follow`): unchanged since the catalog generation they were made at,
or updated in place for the notes whose edges a change replaced when the db's edge log
tells which (a few), or built anew.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from vaultmem.index.catalog import NamesCache
from vaultmem.index.statedb import RECORD_CACHE_MAX, StateDB, filter_record
from vaultmem.vault.layout import Location

if TYPE_CHECKING:
    from vaultmem.index.graph import LinkGraph, ReaderLinks
    from vaultmem.index.vectors import NoteLookup

T = TypeVar("T")
# Up to this many notes whose edges changed, a view is updated in place (a note's few edges
# each); more, and one build over every edge (~2 s at 50k notes) costs as much.
DELTA_MAX = 5000
QUERY_VECTORS_MAX = 512
Place = tuple[str | None, str | None, str | None, bool]  # StateDB.note_locations
CanRead = Callable[[Location], bool]


@dataclass(slots=True)
class Kept(Generic[T]):
    generation: str
    value: T


def follow(
    db: StateDB, held: Kept[T] | None, build: Callable[[], T], update: Callable[[T, set[str]], None]
) -> tuple[Kept[T] | None, T]:
    """The rule of every edge-derived view: (what to hold now, the view). `update(view,
    changed)` redoes the view for the notes in `changed`; `build()` makes it from nothing."""
    generation = db.edges_generation()  # read before the edges: newer edges are redone next time, never missed
    if held is not None and generation is not None:
        if held.generation == generation:
            return held, held.value
        changed = db.edge_sources_between(held.generation, generation, limit=DELTA_MAX)
        if changed is not None:
            update(held.value, changed)
            held.generation = generation
            return held, held.value
    value = build()
    return (Kept(generation, value) if generation is not None else None), value


@dataclass(slots=True)
class _Reader:
    links: ReaderLinks
    seen: dict[str, bool]  # path -> may this reader see it (a note's never changes while it exists)


class WarmViews:
    """The warm views of one vault. Safe to share between the Apps a process opens on it (the
    MCP server opens one per call): each view is checked against the db before use."""

    def __init__(self) -> None:
        self.names = NamesCache()
        self._graph: Kept[LinkGraph] | None = None
        # Each reader's links, by who reads and under which rules (config): a changed
        # vaultmem.toml (a project's members) is another reader.
        self._readers: dict[tuple[str | None, int], Kept[_Reader]] = {}
        self._projects: tuple[str, list[str]] | None = None
        self._owners: tuple[tuple[int, int], dict[str, str], set[str]] | None = None
        # path -> (its row, its metadata, the db's change key when the row was last read)
        self._metas: dict[str, tuple[tuple[Any, ...], dict[str, Any], tuple[int, int]]] = {}
        self._query_vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()

    # --- the link graph and each reader's links -----------------------------------------------

    def link_graph(self, db: StateDB) -> LinkGraph:
        """The NetworkX graph of the links resolved among all notes."""
        from vaultmem.index.graph import LinkGraph

        def update(graph: LinkGraph, changed: set[str]) -> None:
            graph.replace_sources(changed, db.edges_of(changed))

        self._graph, graph = follow(db, self._graph, lambda: LinkGraph(db.all_edges()), update)
        return graph

    def reader_links(self, db: StateDB, ghost: str | None, rules: object, can_read: CanRead) -> ReaderLinks:
        """Links as `ghost` resolves them under `rules` (the vault's config), where
        `can_read` says whether it may see a location (index/graph.py ReaderLinks)."""
        from vaultmem.index.graph import reader_links as compute

        key = (ghost, id(rules))
        if key not in self._readers:
            self._readers = {k: v for k, v in self._readers.items() if k[1] == id(rules)}  # older rules: gone

        def build() -> _Reader:
            # Only where each note lives matters here: no row is decoded.
            seen: dict[str, bool] = {}
            visible = _visibility(can_read, db.note_locations().get, seen)
            return _Reader(compute(db.all_edges(), visible, lambda: self.names.current(db)), seen)

        def update(reader: _Reader, changed: set[str]) -> None:
            edges = db.edges_of(changed)
            for path in changed:
                reader.seen.pop(path, None)  # a note that came or went: asked again (and not kept)
            # The places of the changed notes and of where their links land, in one query;
            # a candidate the Resolver meets besides is looked up on its own.
            places = db.note_locations(changed | {e.dst for e in edges if e.dst is not None})

            def place_of(path: str) -> Place | None:
                return places[path] if path in places else db.note_locations([path]).get(path)

            reader.links.drop(changed)
            reader.links.add(edges, _visibility(can_read, place_of, reader.seen), lambda: self.names.current(db))

        held, reader = follow(db, self._readers.get(key), build, update)
        if held is None:
            self._readers.pop(key, None)
        else:
            self._readers[key] = held
        return reader.links

    # --- what filters and the dense side read -----------------------------------------------------

    def projects(self, db: StateDB) -> list[str]:
        """Projects that have notes, per catalog generation."""
        generation = db.edges_generation() or ""  # every catalog change sets a new one
        if self._projects is None or self._projects[0] != generation:
            self._projects = (generation, db.projects())
        return list(self._projects[1])

    def note_lookup(self, db: StateDB) -> NoteLookup:
        """For dense search: a chunk id's owner key -> the note's filter metadata, from the
        state db. The key -> path map is redone after any change to the db (only the notes
        that came or went are hashed again: ~20 ms at 10k notes otherwise); a note's
        metadata is kept while its row reads the same."""
        from vaultmem.index.documents import doc_for
        from vaultmem.index.vectors import note_metadata, owner_key

        key = db.change_key()
        if self._owners is None or self._owners[0] != key:
            paths = set(db.note_paths())
            if self._owners is None:
                owners = {owner_key(p): p for p in paths}
            else:
                _, owners, before = self._owners
                for path in before - paths:
                    owners.pop(owner_key(path), None)
                for path in paths - before:
                    owners[owner_key(path)] = path
            self._owners = (key, owners, paths)
        owners = self._owners[1]
        metas = self._metas

        def lookup(keys: set[str]) -> dict[str, dict[str, Any]]:
            out: dict[str, dict[str, Any]] = {}
            unsure: dict[str, str] = {}
            for k in keys:
                path = owners.get(k)
                if path is None:
                    continue
                seen = metas.get(path)
                if seen is not None and seen[2] == key:
                    out[k] = seen[1]  # nothing in the db changed since its row was read
                else:
                    unsure[k] = path
            rows = db.filter_rows(unsure.values()) if unsure else {}
            for k, path in unsure.items():
                row = rows.get(path)
                if row is None:
                    continue
                seen = metas.get(path)
                if seen is None or seen[0] != row:
                    if len(metas) > RECORD_CACHE_MAX:
                        metas.clear()
                    meta = note_metadata(doc_for(filter_record(row), ""))
                else:
                    meta = seen[1]
                metas[path] = (row, meta, key)
                out[k] = meta
            return out

        return lookup

    def warm_note_lookup(self, db: StateDB, keep_going: Callable[[], bool]) -> bool:
        """Read every note's filter metadata ahead (a watcher with nothing to do), so that
        a dense search looks up none: ~35 µs a note it has not met yet, ~3 ms of a first
        search at 10k notes. Not past the cache's size. Returns whether it is done."""
        from vaultmem.index.vectors import owner_key

        if self._owners is not None and len(self._owners[1]) > RECORD_CACHE_MAX:
            return True
        lookup = self.note_lookup(db)
        assert self._owners is not None
        key = self._owners[0]
        todo = [
            owner_key(p) for p, seen in ((p, self._metas.get(p)) for p in self._owners[2]) if not seen or seen[2] != key
        ]
        for start in range(0, len(todo), 200):  # ~7 ms each: what a request may wait for
            if not keep_going():
                return False
            lookup(set(todo[start : start + 200]))
        return True

    # --- query vectors -------------------------------------------------------------------------------

    def query_vector(self, fingerprint: str, text: str, embed: Callable[[str], list[float]]) -> list[float]:
        """The vector of a query, or the one this fingerprint's model gave it before: an agent
        in a loop asks the same question again, and a long-lived process skips the model."""
        key = (fingerprint, text)
        held = self._query_vectors
        found = held.get(key)
        if found is None:
            found = held[key] = embed(text)
            if len(held) > QUERY_VECTORS_MAX:
                held.popitem(last=False)
        else:
            held.move_to_end(key)
        return found


def _visibility(
    can_read: CanRead, place_of: Callable[[str], Place | None], seen: dict[str, bool]
) -> Callable[[str], bool]:
    """Whether the reader may see `path` (`place_of`: where a note lives, None: no note),
    remembered in `seen`."""

    def visible(path: str) -> bool:
        known = seen.get(path)
        if known is None:
            place = place_of(path)
            known = seen[path] = place is not None and can_read(Location(place[0] or "shared", *place[1:]))
        return known

    return visible
