"""The link graph (NetworkX), built from the state db's resolved edges and updated in place
for the notes whose edges a reconcile replaced.

Nodes are note paths plus `dangling:<target>` nodes for links that resolve nowhere. Edges
carry `kind`: link, embed or parent. Expansion never walks through a note the caller may
not see, so a hidden note can neither appear nor be inferred from who is two hops away.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vaultmem.index.resolve import name_key
from vaultmem.index.statedb import Edge

if TYPE_CHECKING:
    from vaultmem.index.resolve import Resolver


class LinkGraph:
    def __init__(self, edges: Iterable[Edge]) -> None:
        import networkx as nx

        self.g: Any = nx.MultiDiGraph()
        # Each node's neighbours are looked up in NetworkX once; `replace_sources` forgets them.
        self._steps: dict[tuple[str, str], list[str]] = {}
        for e in edges:
            self._add(e)

    def _add(self, e: Edge) -> None:
        if e.dst is None:
            node = f"dangling:{name_key(e.target.strip())}"  # one node for a name however typed
            self.g.add_node(node, dangling=True)
            self.g.add_edge(e.src, node, kind=e.kind)
        else:
            self.g.add_edge(e.src, e.dst, kind=e.kind)

    def replace_sources(self, sources: Iterable[str], edges: Iterable[Edge]) -> None:
        """Make `edges` the only edges leaving `sources` (all the edges of those notes now):
        the graph is then the one a build from every edge gives (~2 s at 50k notes). A node
        left without an edge goes: a build would not have it."""
        g = self.g
        loose: set[str] = set()
        for src in sources:
            if src in g:
                out = list(g.out_edges(src, keys=True))
                g.remove_edges_from(out)
                loose.add(src)
                loose.update(dst for _, dst, _ in out)
        for e in edges:
            self._add(e)
        g.remove_nodes_from([n for n in loose if g.degree(n) == 0])
        self._steps.clear()

    def _step(self, path: str, relation: str) -> list[str]:
        key = (path, relation)
        found = self._steps.get(key)
        if found is None:
            found = self._steps[key] = self._neighbours(path, relation)
        return found

    def step(self, path: str, relation: str, reader: ReaderLinks | None = None) -> list[str]:
        """The notes one hop away by `relation`, visible or not (for reading their rows
        together before `expand` asks about each)."""
        return self._reader_step(path, relation, reader)

    def _reader_step(self, path: str, relation: str, reader: ReaderLinks | None) -> list[str]:
        found = self._step(path, relation)
        if reader is None:
            return found
        if relation == "links_in":
            extra = [src for src, kind in reader.arrived.get(path, ()) if kind != "parent"]
        else:
            want_parent = relation == "parents"
            extra = [dst for dst, kind in reader.moved.get(path, ()) if (kind == "parent") == want_parent]
        return sorted({*found, *extra} - {path}) if extra else found

    def _neighbours(self, path: str, relation: str) -> list[str]:
        if path not in self.g:
            return []
        if relation == "parents":
            found = [dst for _, dst, kind in self.g.out_edges(path, data="kind") if kind == "parent"]
        elif relation == "links_out":
            found = [dst for _, dst, kind in self.g.out_edges(path, data="kind") if kind != "parent"]
        elif relation == "links_in":
            found = [src for src, _, kind in self.g.in_edges(path, data="kind") if kind != "parent"]
        else:
            raise ValueError(relation)
        return sorted({n for n in found if not n.startswith("dangling:") and n != path})

    def expand(
        self,
        path: str,
        relation: str,
        depth: int,
        visible: Callable[[str], bool],
        cap: int,
        reader: ReaderLinks | None = None,
    ) -> list[tuple[str, int]]:
        """Notes reachable by `relation` within `depth` hops, through visible notes only,
        with links resolved as `reader` resolves them.

        Returns (path, hops) nearest first, at most `cap` of them."""
        out: list[tuple[str, int]] = []
        seen = {path}
        frontier = [path]
        for hops in range(1, max(0, depth) + 1):
            nxt: list[str] = []
            for node in frontier:
                for other in self._reader_step(node, relation, reader):
                    if other in seen:
                        continue
                    seen.add(other)
                    if not visible(other):
                        continue
                    out.append((other, hops))
                    nxt.append(other)
                    if len(out) >= cap:
                        return out
            frontier = nxt
        return out


@dataclass(frozen=True, slots=True)
class ReaderLinks:
    """Links as one reader resolves them (SPEC §3: a note the reader cannot see does not
    exist, so it cannot win a link either). The graph and the state db hold each link
    resolved among all notes; where that lands on a note this reader cannot see, the link
    is resolved again among the notes the reader can see: `moved` maps each such edge's
    source to its new (target, kind) pairs, `arrived` each new target to its (source, kind)
    pairs (sorted), `redirected` every such edge to its new target (None: dangling for this
    reader). Where the global resolution is visible it is also the reader's: the best
    candidate among all notes is the best among any set that holds it.

    Every entry belongs to one source note: `drop` and `add` redo the entries of the notes
    whose edges changed (index/views.py, the readers' links), leaving what computing all would."""

    moved: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    arrived: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    redirected: dict[tuple[str, str, str], str | None] = field(default_factory=dict)  # (src, target, kind) -> dst

    def dst(self, edge: Edge) -> str | None:
        """Where `edge` points for this reader (its global target when that is visible)."""
        return self.redirected.get((edge.src, edge.target, edge.kind), edge.dst)

    def add(self, edges: Iterable[Edge], visible: Callable[[str], bool], resolver: Callable[[], Resolver]) -> None:
        """Re-resolve, among the notes `visible` allows, every link of `edges` from a visible
        note to a note the reader cannot see. `resolver()` gives the Resolver of all notes
        (called only when some link needs it); it is asked with `visible`."""
        pending = [e for e in edges if e.dst is not None and visible(e.src) and not visible(e.dst)]
        if not pending:
            return
        names = resolver()
        arrived: set[str] = set()
        for e in pending:
            # relative: a markdown link's path is relative to its note; for a wikilink the same
            # join finds a note of that name in the note's own folder, which it prefers anyway
            dst = names.resolve(e.target, e.src, relative=True, visible=visible)
            self.redirected[(e.src, e.target, e.kind)] = dst
            if dst is not None and dst != e.src:
                self.moved.setdefault(e.src, []).append((dst, e.kind))
                self.arrived.setdefault(dst, []).append((e.src, e.kind))
                arrived.add(dst)
        for dst in arrived:
            self.arrived[dst].sort()  # the same whichever order the edges came in

    def drop(self, sources: Collection[str]) -> None:
        """Forget every entry of the links leaving `sources`."""
        for src in sources:
            for dst, kind in self.moved.pop(src, ()):
                left = self.arrived[dst]
                left.remove((src, kind))
                if not left:
                    del self.arrived[dst]
        for key in [k for k in self.redirected if k[0] in sources]:
            del self.redirected[key]


def reader_links(
    edges: Iterable[Edge], visible: Callable[[str], bool], resolver: Callable[[], Resolver]
) -> ReaderLinks:
    """Every link re-resolved for one reader (ReaderLinks.add over all edges)."""
    out = ReaderLinks()
    out.add(edges, visible, resolver)
    return out
