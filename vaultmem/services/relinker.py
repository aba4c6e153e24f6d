"""Which links a move changes, and to what (`note move`, `fix-names`). Pure.

Obsidian's "automatically update internal links": only the target part of a link changes,
in the body (vault/relink.py) and in properties (vault/property_links.py); a link that
still names the note in a way that resolves (a title that is now the file name, an id) is
left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from vaultmem.index.resolve import NameEntry, Resolver, name_key
from vaultmem.vault.markdown import Link
from vaultmem.vault.property_links import plain_parent_span, property_spans, relinked_properties
from vaultmem.vault.relink import (
    attachment_hrefs,
    folder_of,
    labelled,
    link_spans,
    markdown_target,
    rebase_href,
    replace_spans,
    wiki_target,
)


def _obsidian_resolver(paths: Iterable[str]) -> Resolver:
    """Obsidian resolves by path, folder suffix and file name only (no ids, titles, aliases)."""
    return Resolver(NameEntry(p, "", "") for p in paths)


def _title_after(path: str, title: str, moves: Mapping[str, str]) -> str:
    new = moves.get(path, path)
    same = new == path or name_key(title.strip()) != name_key(wiki_target(path, True))
    return title if same else wiki_target(new, True)


@dataclass(frozen=True, slots=True)
class Relinker:
    """Link resolution before and after a set of moves."""

    moves: Mapping[str, str]
    before: Resolver
    after: Resolver
    obsidian_before: Resolver
    obsidian_after: Resolver
    short: bool  # may write a bare file name when it is unambiguous; else the vault path
    # (note path, linked path) -> whether the note's text may name the linked note: a link
    # that would name one hidden from some reader of the note stays as written
    names_ok: Callable[[str, str], bool]

    @classmethod
    def build(
        cls,
        names: list[tuple[str, str, str, tuple[str, ...]]],
        moves: Mapping[str, str],
        short: bool,
        names_ok: Callable[[str, str], bool] = lambda _source, _dst: True,
        titles: Mapping[str, str] | None = None,
    ) -> Relinker:
        """`names`: the notes resolution may consider. A ghost's move passes the notes it
        can see and `short=False`, so what it writes never depends on a note it cannot see.
        A moved note whose title is its file name is renamed with it (services/moves.py
        move_note; a note without a `title:` takes its new name by itself). `titles`: path
        (before the moves) -> new title of a note retitled (services/retitles.py)."""
        titles = titles or {}
        after = [
            (moves.get(p, p), i, titles[p] if p in titles else _title_after(p, t, moves), a) for p, i, t, a in names
        ]
        return cls(
            moves,
            Resolver(NameEntry(*n) for n in names),
            Resolver(NameEntry(*n) for n in after),
            _obsidian_resolver(p for p, *_ in names),
            _obsidian_resolver(p for p, *_ in after),
            short,
            names_ok,
        )

    def _names(self, target: str, source: str, dst: str) -> bool:
        """Whether wikilink text `target` from `source` means `dst` in vaultmem and in Obsidian."""
        return self.after.resolve(target, source) == dst and self.obsidian_after.resolve(target, source) == dst

    def _shadowed(self, target: str, source: str, dst: str, relative: bool) -> bool:
        """Whether link text `target`, which meant `dst` (a note that does not move), means
        another note after the moves, in vaultmem or in Obsidian: a moved note took a name
        nearer to the linking note (`[[X]]` and a note moved to `X.md` beside it), or the
        linking note moved away from a note of its folder."""
        new_source = self.moves.get(source, source)
        if self.after.resolve(target, new_source, relative=relative) != dst:
            return True
        was = self.obsidian_before.resolve(target, source, relative=relative)
        return was == dst and self.obsidian_after.resolve(target, new_source, relative=relative) != dst

    def _target(self, link: Link, source: str, markdown: bool, angle: bool = False) -> str | None:
        """The new target text of a link of the note at `source` (its path before the
        moves), or None when the link stays as written."""
        new_source = self.moves.get(source, source)
        dst = self.before.resolve(link.target, source, relative=markdown)
        if dst is None:
            return None
        new_dst = self.moves.get(dst, dst)
        if (dst != new_dst or source != new_source) and not self.names_ok(new_source, new_dst):
            return None
        if markdown:
            if dst == new_dst and source == new_source and not self._shadowed(link.target, source, dst, True):
                return None  # a path from a note that moves follows it, as other tools read paths
            return markdown_target(new_source, new_dst, angle, link.target.lower().endswith(".md"))
        if self.before.is_id(link.target):
            return None  # linked by id (ids never change)
        if dst == new_dst and not self._shadowed(link.target, source, dst, relative=False):
            return None
        if self._names(link.target, new_source, new_dst):
            return None
        short = wiki_target(new_dst, True)
        return short if self.short and self._names(short, new_source, new_dst) else wiki_target(new_dst, False)

    def _by_other_name(self, link: Link, source: str) -> bool:
        """Whether wikilink text names its note by a title or alias, not a file name that
        Obsidian resolves: written by file name, it keeps its text as its label."""
        dst = self.before.resolve(link.target, source)
        return dst is not None and self.obsidian_before.resolve(link.target, source) != dst

    def rewrite(self, source: str, body: str) -> str:
        """`body` of the note at `source` (its path before the moves) with its links kept
        pointing where they pointed."""
        new_source = self.moves.get(source, source)
        replacements: dict[int, tuple[int, str]] = {}
        notes: set[int] = set()  # where the paths of markdown links to notes start
        for span in link_spans(body):
            markdown = span.link.kind == "markdown" or (
                span.link.kind == "embed" and body[span.start - 1 : span.start] == "("
            )
            if markdown and self.before.resolve(span.link.target, source, relative=True) is not None:
                notes.add(span.start)
            text = self._target(span.link, source, markdown, span.angle)
            if text is not None and not markdown and self._by_other_name(span.link, source):
                text = labelled(body, span, text)
            if text is not None and body[span.start : span.end] != text:
                replacements[span.start] = (span.end, text)
        if folder_of(source) != folder_of(new_source):
            # Its own relative links to attachments (images, PDFs) follow it to the new folder.
            for start, end, href in attachment_hrefs(body):
                if start not in notes and start + 1 not in notes:  # `<path>`: after its `<`
                    replacements[start] = (end, rebase_href(href, source, new_source))
        return replace_spans(body, replacements) if replacements else body

    def rewrite_properties(self, source: str, fm_text: str) -> str:
        """The front matter text of the note at `source` with its property links (Obsidian's:
        `related: "[[Note]]"`, `parent` included) kept pointing where they pointed, by the
        body's rules; only their targets change. A rewrite that would not read back as the
        same properties is not made (vault/property_links.py)."""
        targets = []
        for span in property_spans(fm_text):
            text = self._target(span.link, source, markdown=False)
            if text is not None and span.value[span.at : span.to] != text:
                targets.append((span, text))
        parent = plain_parent_span(fm_text)
        text = None if parent is None else self._plain_target(parent.link.target, source)
        if parent is not None and text is not None:
            targets.append((parent, text))
        return relinked_properties(fm_text, targets) or fm_text

    def _plain_target(self, target: str, source: str) -> str | None:
        """The new text of `parent: Target`, a parent named as text (a title, a file name or
        an id), or None when it still names its note. Only vaultmem reads it: Obsidian's
        resolution does not count."""
        dst = self.before.resolve(target, source)
        if dst is None or self.before.is_id(target):
            return None
        new_source, new_dst = self.moves.get(source, source), self.moves.get(dst, dst)
        if self.after.resolve(target, new_source) == new_dst or not self.names_ok(new_source, new_dst):
            return None
        short = wiki_target(new_dst, True)
        return short if self.short and self.after.resolve(short, new_source) == new_dst else wiki_target(new_dst, False)
