"""The link graph (NetworkX), rebuilt from the state db's resolved edges.

Nodes are note paths plus `dangling:<target>` nodes for links that resolve nowhere. Edges
carry `kind`: link, embed or parent. Expansion never walks through a note the caller may
not see, so a hidden note can neither appear nor be inferred from who is two hops away.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from vaultmem.index.statedb import Edge


class LinkGraph:
    def __init__(self, edges: Iterable[Edge]) -> None:
        import networkx as nx

        self.g: Any = nx.MultiDiGraph()
        # A LinkGraph is never changed once built (a new one comes with every reconcile
        # generation), so each node's neighbours are looked up in NetworkX once.
        self._steps: dict[tuple[str, str], list[str]] = {}
        for e in edges:
            if e.dst is None:
                node = f"dangling:{e.target.strip().lower()}"
                self.g.add_node(node, dangling=True)
                self.g.add_edge(e.src, node, kind=e.kind)
            else:
                self.g.add_edge(e.src, e.dst, kind=e.kind)

    def _step(self, path: str, relation: str) -> list[str]:
        key = (path, relation)
        found = self._steps.get(key)
        if found is None:
            found = self._steps[key] = self._neighbours(path, relation)
        return found

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
        self, path: str, relation: str, depth: int, visible: Callable[[str], bool], cap: int
    ) -> list[tuple[str, int]]:
        """Notes reachable by `relation` within `depth` hops, through visible notes only.

        Returns (path, hops) nearest first, at most `cap` of them."""
        out: list[tuple[str, int]] = []
        seen = {path}
        frontier = [path]
        for hops in range(1, max(0, depth) + 1):
            nxt: list[str] = []
            for node in frontier:
                for other in self._step(node, relation):
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
