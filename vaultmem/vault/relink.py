"""Where the links in a note's body point, as spans of text, and how to rewrite them. Pure.

Moving or renaming notes must not break links to them, as Obsidian's "automatically update
internal links" keeps them working: only the target part of a link changes (`[[Old#Part|label]]`
→ `[[New#Part|label]]`, `![[Old]]` → `![[New]]`, `[x](old.md)` → `[x](New%20name.md)`);
headings, labels and everything else in the text stay byte for byte.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, unquote

from vaultmem.vault.markdown import (
    _SCHEME_RE,
    _WIKI_RE,
    Link,
    _markdown_link,
    _wiki_link,
    markdown_links,
    names_a_note,
    strip_code,
)


@dataclass(frozen=True, slots=True)
class LinkSpan:
    """A link and the offsets of its target text in the body (`start:end`)."""

    start: int
    end: int
    link: Link
    angle: bool = False  # a markdown link written `[x](<path with spaces.md>)`


def mask_code(body: str) -> str:
    """The body with code blanked out by spaces, every offset kept (links in code are text)."""
    return strip_code(body, keep_offsets=True)


def _wiki_target_end(inner: str) -> int:
    """Where the target ends in the inside of `[[…]]`: before `#heading`, `|label` or the
    `\\|` of a link in a table cell."""
    cut = len(inner)
    pipe = inner.find("|")
    if pipe >= 0:
        cut = pipe - 1 if pipe > 0 and inner[pipe - 1] == "\\" else pipe
    hash_at = inner.find("#", 0, cut)
    return hash_at if hash_at >= 0 else cut


def link_spans(body: str) -> list[LinkSpan]:
    """Every link outside code, in text order, with the span of its target."""
    masked = mask_code(body)
    spans: list[LinkSpan] = []
    for m in _WIKI_RE.finditer(masked):
        inner = body[m.start(2) : m.end(2)]
        link = _wiki_link(m.group(1), inner)
        if link is not None:
            spans.append(LinkSpan(m.start(2), m.start(2) + _wiki_target_end(inner), link))
    for m in markdown_links(masked):
        href = body[m.start(3) : m.end(3)]
        link = _markdown_link(m.group(1), m.group(2), href)
        if link is None:
            continue
        angle = href.startswith("<") and href.endswith(">")
        start = m.start(3) + (1 if angle else 0)
        inside = href[1:-1] if angle else href
        hash_at = inside.find("#")
        spans.append(LinkSpan(start, start + (hash_at if hash_at >= 0 else len(inside)), link, angle))
    spans.sort(key=lambda s: s.start)
    return spans


def replace_spans(body: str, replacements: Mapping[int, tuple[int, str]]) -> str:
    """`replacements`: start offset -> (end offset, new text); spans must not overlap."""
    out: list[str] = []
    at = 0
    for start in sorted(replacements):
        end, text = replacements[start]
        out.append(body[at:start])
        out.append(text)
        at = end
    out.append(body[at:])
    return "".join(out)


def wiki_target(path: str, short: bool) -> str:
    """How a wikilink names a note: its file stem when that is unambiguous (`short`), else
    its vault path; without `.md`, as Obsidian writes links."""
    stem_path = path[:-3] if path.lower().endswith(".md") else path
    return stem_path.rsplit("/", 1)[-1] if short else stem_path


def folder_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def markdown_target(source: str, path: str, angle: bool, extension: bool = True) -> str:
    """A markdown link's href from note `source` to `path`: relative, spaces and brackets
    percent-encoded (or kept inside `<…>`), as Obsidian writes markdown links; without
    `.md` when not `extension` (as the link was typed: `[x](Note)`), unless the name
    without it reads as another file's (`Laws v1.2`: a `.2` file, no note link)."""
    rel = posixpath.relpath(path, folder_of(source) or ".")
    bare = rel[:-3] if rel.lower().endswith(".md") else rel
    rel = bare if not extension and names_a_note(bare) else rel
    return rel if angle else quote(rel, safe="/!$&'*+,;=:@~-._")


def attachment_hrefs(body: str) -> list[tuple[int, int, str]]:
    """(start, end, href) of every relative markdown link or image outside code that is
    not a note (`![a](img/a.png)`, `[spec](files/spec.pdf)`): they point from the note's
    folder, so they change when the note moves to another one. A path without an extension
    is among them (`[x](Note)`: a note or a file; a note's link is rewritten as a link)."""
    masked = mask_code(body)
    out = []
    for m in markdown_links(masked):
        href = body[m.start(3) : m.end(3)]
        bare = href[1:-1] if href.startswith("<") and href.endswith(">") else href
        path = bare.split("#", 1)[0]
        if not path or path.startswith(("/", "#")) or _SCHEME_RE.match(path) or path.lower().endswith(".md"):
            continue
        out.append((m.start(3), m.end(3), href))
    return out


def rebase_href(href: str, source: str, new_source: str) -> str:
    """`href`, relative to `source`'s folder, made relative to `new_source`'s folder."""
    angle = href.startswith("<") and href.endswith(">")
    bare = href[1:-1] if angle else href
    path, sep, anchor = bare.partition("#")
    target = posixpath.normpath(posixpath.join(folder_of(source), unquote(path) if not angle else path))
    rel = posixpath.relpath(target, folder_of(new_source) or ".")
    rel = rel if angle else quote(rel, safe="/!$&'*+,;=:@~-._")
    return f"<{rel}{sep}{anchor}>" if angle else f"{rel}{sep}{anchor}"


Resolve = Callable[[str, str], "str | None"]


def file_named(
    link: Link,
    inner: str,
    end: int,
    source: str,
    resolve: Resolve,
    resolve_file: Resolve,
    is_id: Callable[[str], bool] = lambda _: False,
    pipe: Callable[[], str] = lambda: "|",
) -> str | None:
    """The text for `inner[:end]`, the target of a wikilink whose inside of `[[…]]` is
    `inner`, that makes the link resolve by file name, as Obsidian resolves it, to the note
    vaultmem resolves it to; None when it already does, or dangles.

    `resolve` is vaultmem's resolution (ids, paths, names, titles, aliases), `resolve_file`
    Obsidian's (paths and file names only). `[[Wine: basics#Soils]]` becomes
    `[[shared/Wine basics#Soils|Wine: basics#Soils]]`: the same note in both, the same text
    shown; a link with a label keeps it, and `[[<id>]]` becomes `[[shared/Wine basics]]`.
    `pipe`: the label's separator, asked only when one is added (`\\|` in a table row)."""
    dst = resolve(link.target, source)
    if dst is None or resolve_file(link.target, source) == dst:
        return None
    # The vault path, never a bare file name: which bare name is unambiguous could
    # depend on notes this writer cannot see (SPEC §3).
    text = wiki_target(dst, False)
    # A label, even an empty one (`[[X|]]`, its `|` left after the target): kept as written
    if link.label is not None or "|" in inner[end:] or is_id(link.target):
        return text
    return f"{text}{inner[end:]}{pipe()}{inner[:end]}"


def labelled(body: str, span: LinkSpan, text: str) -> str:
    """`text`, the new target of the wikilink at `span`, with the link's text kept as its
    label (`[[Wine: basics#Soils]]` → `[[shared/Vins#Soils|Wine: basics#Soils]]`), so that
    it shows as typed; a link with a label, even an empty one, keeps it."""
    close = body.find("]]", span.end)  # _WIKI_RE: the first `]]` after the target closes it
    inner = body[span.start : close]
    end = span.end - span.start
    if span.link.label is not None or "|" in inner[end:]:
        return text
    pipe = "\\|" if in_table_row(body, span.start) else "|"  # as Obsidian writes it in a table row
    return f"{text}{inner[end:]}{pipe}{inner[:end]}"


def file_linked(
    body: str, source: str, resolve: Resolve, resolve_file: Resolve, is_id: Callable[[str], bool] = lambda _: False
) -> str:
    """The body's wikilinks rewritten so that they resolve by file name, as Obsidian
    resolves them (file_named); links that already resolve alike, and dangling ones, stay
    as written. Property links: vault/property_links.py file_linked_properties."""
    replacements: dict[int, tuple[int, str]] = {}
    for span in link_spans(body):
        if span.link.kind == "markdown" or body[span.start - 1 : span.start] == "(":
            continue
        close = body.find("]]", span.end)  # _WIKI_RE: the first `]]` after the target closes it
        inner = body[span.start : close]

        def pipe(at: int = span.start) -> str:
            return "\\|" if in_table_row(body, at) else "|"  # as Obsidian writes it in a table row

        text = file_named(span.link, inner, span.end - span.start, source, resolve, resolve_file, is_id, pipe)
        if text is not None:
            replacements[span.start] = (span.end, text)
    return replace_spans(body, replacements) if replacements else body


_QUOTE_RE = re.compile(r"^[ \t]*(?:>[ \t]?)*")  # blockquote and callout markers
_DELIMITER_RE = re.compile(r"^\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_WIKI_SPAN_RE = re.compile(r"\[\[[^\]]*\]\]")


def in_table_row(body: str, pos: int) -> bool:
    """Whether `pos` is on a line of a markdown table, as Obsidian reads one: a row with a
    `|` outside its links, in a block (quoted or called out too) with a delimiter row
    (`--|--`, `|:-|-:|`). A pipe added in a link there must be written `\\|`."""
    lines = body.split("\n")
    at = body.count("\n", 0, pos)

    def content(i: int) -> str:
        return _QUOTE_RE.sub("", lines[i], count=1)

    if "|" not in _WIKI_SPAN_RE.sub("", content(at)):
        return False
    first = at
    while first > 0 and content(first - 1).strip():
        first -= 1
    last = at
    while last + 1 < len(lines) and content(last + 1).strip():
        last += 1
    return any(_DELIMITER_RE.match(content(i).strip()) and "-" in content(i) for i in range(first, last + 1))
