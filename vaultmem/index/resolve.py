"""Link resolution as Obsidian does it, plus ids, titles and aliases (SPEC §2). Pure.

A target resolves, case-insensitively, to: an id, a vault-relative path (with or without
`.md`), a folder-qualified path suffix, a file stem, a title, an alias. Several candidates
of one kind: the one in the linking note's folder, else the shortest path, else the first
in path order — Obsidian's tie-break.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vaultmem.index.statedb import Edge


@dataclass(frozen=True, slots=True)
class NameEntry:
    path: str
    id: str
    title: str
    aliases: tuple[str, ...] = ()


def _norm(path: str) -> str:
    low = path.strip().strip("/").lower()
    return low[:-3] if low.endswith(".md") else low


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


class Resolver:
    def __init__(self, entries: Iterable[NameEntry]) -> None:
        self.by_id: dict[str, str] = {}
        self.by_path: dict[str, str] = {}
        self.by_suffix: dict[str, list[str]] = defaultdict(list)
        self.by_stem: dict[str, list[str]] = defaultdict(list)
        self.by_title: dict[str, list[str]] = defaultdict(list)
        self.by_alias: dict[str, list[str]] = defaultdict(list)
        for e in entries:
            self.by_id.setdefault(e.id, e.path)
            self.by_id.setdefault(e.id.lower(), e.path)
            norm = _norm(e.path)
            self.by_path[norm] = e.path
            parts = norm.split("/")
            self.by_stem[parts[-1]].append(e.path)
            for i in range(1, len(parts) - 1):
                self.by_suffix["/".join(parts[i:])].append(e.path)
            self.by_title[e.title.strip().lower()].append(e.path)
            for alias in e.aliases:
                self.by_alias[alias.strip().lower()].append(e.path)

    @staticmethod
    def _best(candidates: Sequence[str], source: str | None) -> str | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        if source is not None:
            here = _folder(source)
            local = sorted(c for c in candidates if _folder(c) == here)
            if local:
                return local[0]
        return min(candidates, key=lambda c: (len(c), c))

    def resolve(self, target: str, source: str | None = None, relative: bool = False) -> str | None:
        """The path `target` points to from note `source`, or None (dangling)."""
        raw = target.strip()
        if not raw:
            return None
        if relative and source is not None:
            joined = posixpath.normpath(posixpath.join(_folder(source), raw))
            if not joined.startswith(".."):
                hit = self.by_path.get(_norm(joined))
                if hit:
                    return hit
        if raw in self.by_id:
            return self.by_id[raw]
        low = raw.lower()
        if low in self.by_id:
            return self.by_id[low]
        norm = _norm(raw)
        if norm in self.by_path:
            return self.by_path[norm]
        if "/" in norm:
            hit = self._best(self.by_suffix.get(norm, ()), source)
            if hit:
                return hit
        for table in (self.by_stem, self.by_title, self.by_alias):
            key = norm if table is self.by_stem else low
            hit = self._best(table.get(key, ()), source)
            if hit:
                return hit
        return None

    def candidates(self, target: str) -> list[str]:
        """Every path a reference could mean, for ambiguity reports (title or alias)."""
        low = target.strip().lower()
        return sorted({*self.by_title.get(low, ()), *self.by_alias.get(low, ())})


@dataclass(frozen=True, slots=True)
class LinkSource:
    path: str
    links: tuple[dict[str, str | None], ...]
    parent: str | None = None


def parent_target(value: str) -> str:
    """`parent` may be an id, a title or a `[[wikilink]]`."""
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].removesuffix("\\").split("#", 1)[0]  # `\|`: a pipe escaped in a table
    return text.strip()


def compute_edges(resolver: Resolver, sources: Iterable[LinkSource]) -> list[Edge]:
    edges: list[Edge] = []
    for src in sources:
        for link in src.links:
            target = str(link.get("target") or "")
            kind = str(link.get("kind") or "wiki")
            dst = resolver.resolve(target, src.path, relative=kind == "markdown")
            edges.append(
                Edge(
                    src.path,
                    dst,
                    "embed" if kind == "embed" else "link",
                    target,
                    link.get("heading"),
                    link.get("label"),
                )
            )
        if src.parent:
            target = parent_target(src.parent)
            edges.append(Edge(src.path, resolver.resolve(target, src.path), "parent", target))
    return edges
