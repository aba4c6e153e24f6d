"""Link resolution as Obsidian does it, plus ids, titles and aliases (SPEC §2). Pure.

A target resolves, case-insensitively and in either Unicode normal form (`name_key`), to:
an id, a vault-relative path (with or without `.md`), a folder-qualified path suffix, a file
stem, a title, an alias. Several candidates of one kind: the one in the linking note's
folder, else the shortest path, else the first in path order — Obsidian's tie-break.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from vaultmem.index.statedb import Edge


@dataclass(frozen=True, slots=True)
class NameEntry:
    path: str
    id: str
    title: str
    aliases: tuple[str, ...] = ()


def name_key(text: str) -> str:
    """What a name is compared by: letter case and Unicode normal form left out. `Café`
    typed as `e` + U+0301 (NFD: macOS keyboards and file names, some editors) names the note
    `Café.md` (NFC), and the other way round, as in Obsidian, whose macOS disk folds the
    forms. The state db's `vm_lower` (statedb/records.py) is the same rule, for `get`."""
    return unicodedata.normalize("NFC", text).lower()


def _norm(path: str) -> str:
    low = name_key(path.strip().strip("/"))
    return low[:-3] if low.endswith(".md") else low


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


class Resolver:
    """Every name of a set of notes, for `resolve`.

    An id resolves to the first entry holding it, a path to the last (db.names() order); an
    id or path several entries hold also keeps them all, in order, so that `resolve` with
    `visible` answers exactly as a Resolver built over only the entries one reader sees
    (the first, the last, the best of the rest it sees): one Resolver serves every reader.
    `update` changes entries in place where their order cannot matter."""

    def __init__(self, entries: Iterable[NameEntry]) -> None:
        self.by_id: dict[str, str] = {}
        self.by_path: dict[str, str] = {}
        self.shared_ids: dict[str, list[str]] = {}  # rare: every holder, first to last
        self.shared_paths: dict[str, list[str]] = {}
        self.by_suffix: dict[str, list[str]] = defaultdict(list)
        self.by_stem: dict[str, list[str]] = defaultdict(list)
        self.by_title: dict[str, list[str]] = defaultdict(list)
        self.by_alias: dict[str, list[str]] = defaultdict(list)
        for e in entries:
            self._add(e)

    def _add(self, e: NameEntry) -> None:
        path = e.path
        for key in {e.id, name_key(e.id)}:
            first = self.by_id.setdefault(key, path)
            if first != path:
                self.shared_ids.setdefault(key, [first]).append(path)
        norm = _norm(path)
        last = self.by_path.get(norm)
        self.by_path[norm] = path
        if last is not None and last != path:
            self.shared_paths.setdefault(norm, [last]).append(path)
        for table, key in self._listed(e, norm):
            table[key].append(path)

    def _listed(self, e: NameEntry, norm: str) -> Iterator[tuple[dict[str, list[str]], str]]:
        """(table, key) of every name of `e` that resolves among candidates."""
        parts = norm.split("/")
        yield self.by_stem, parts[-1]
        for i in range(1, len(parts) - 1):
            yield self.by_suffix, "/".join(parts[i:])
        yield self.by_title, name_key(e.title.strip())
        for alias in e.aliases:
            yield self.by_alias, name_key(alias.strip())

    def update(self, gone: Iterable[NameEntry], came: Iterable[NameEntry]) -> bool:
        """Drop the entries `gone` and add `came`, leaving what a Resolver built over the
        entries now would hold. Only where none of their ids and paths is another entry's:
        which of several wins depends on their order, which only a rebuild knows. False,
        and nothing changed, otherwise."""
        gone_set, came_set = set(gone), set(came)
        gone_list, came_list = list(gone_set - came_set), list(came_set - gone_set)  # an unchanged name stays
        freed_ids: set[str] = set()
        freed_paths: set[str] = set()
        for e in gone_list:
            ids = {e.id, name_key(e.id)}
            if any(self.by_id.get(k) != e.path or k in self.shared_ids for k in ids):
                return False
            norm = _norm(e.path)
            if self.by_path.get(norm) != e.path or norm in self.shared_paths:
                return False
            freed_ids |= ids
            freed_paths.add(norm)
        taken_ids: set[str] = set()
        taken_paths: set[str] = set()
        for e in came_list:
            ids = {e.id, name_key(e.id)}
            if any((k in self.by_id and k not in freed_ids) or k in taken_ids for k in ids):
                return False
            norm = _norm(e.path)
            if (norm in self.by_path and norm not in freed_paths) or norm in taken_paths:
                return False
            taken_ids |= ids
            taken_paths.add(norm)
        for e in gone_list:
            for key in {e.id, name_key(e.id)}:
                del self.by_id[key]
            norm = _norm(e.path)
            del self.by_path[norm]
            for table, key in self._listed(e, norm):
                left = [p for p in table.get(key, ()) if p != e.path]
                if left:
                    table[key] = left
                else:
                    table.pop(key, None)
        for e in came_list:
            self._add(e)
        return True

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

    def resolve(
        self,
        target: str,
        source: str | None = None,
        relative: bool = False,
        visible: Callable[[str], bool] | None = None,
    ) -> str | None:
        """The path `target` points to from note `source`, or None (dangling); with
        `visible`, among the notes it allows only."""
        raw = target.strip()
        if not raw:
            return None

        def held(winners: dict[str, str], shared: dict[str, list[str]], key: str, last: bool) -> str | None:
            hit = winners.get(key)
            if hit is None or visible is None or visible(hit):
                return hit
            holders = shared.get(key, ())
            return next((p for p in (reversed(holders) if last else holders) if visible(p)), None)

        def among(table: dict[str, list[str]], key: str) -> Sequence[str]:
            paths = table.get(key, ())
            return paths if visible is None or not paths else [p for p in paths if visible(p)]

        if relative and source is not None:
            joined = posixpath.normpath(posixpath.join(_folder(source), raw))
            if not joined.startswith(".."):
                hit = held(self.by_path, self.shared_paths, _norm(joined), last=True)
                if hit:
                    return hit
        for key in (raw, name_key(raw)):
            hit = held(self.by_id, self.shared_ids, key, last=False)
            if hit:
                return hit
        norm = _norm(raw)
        hit = held(self.by_path, self.shared_paths, norm, last=True)
        if hit:
            return hit
        if "/" in norm:
            hit = self._best(among(self.by_suffix, norm), source)
            if hit:
                return hit
        low = name_key(raw)
        for table in (self.by_stem, self.by_title, self.by_alias):
            hit = self._best(among(table, norm if table is self.by_stem else low), source)
            if hit:
                return hit
        return None

    def is_id(self, target: str) -> bool:
        """Whether link text `target` names a note by its id (ids never change on a move)."""
        return target in self.by_id or name_key(target) in self.by_id

    def candidates(self, target: str) -> list[str]:
        """Every path a reference could mean, for ambiguity reports (title or alias)."""
        low = name_key(target.strip())
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
