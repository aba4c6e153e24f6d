"""Pure markdown scanning: links, inline #tags, headings, with code excluded as Obsidian does."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from vaultmem.vault.hidden import blank_hidden, hides_any
from vaultmem.vault.indented_code import indented_code

_FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_INLINE_CODE_RE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_WIKI_RE = re.compile(r"(!?)\[\[([^\[\]\n]*?)\]\]")
# A destination may hold balanced parentheses, as CommonMark reads it: Obsidian links
# `[x](Meeting%20(draft).md)` to `Meeting (draft).md` (it encodes spaces, not parentheses).
# Its text may hold balanced brackets (`[see [1]](x.md)`). Neither part runs past the next
# bracket, parenthesis or `<` that does not close it, which keeps a scan linear (a run of
# `[` or `<` on one line took minutes).
_MD_LINK_RE = re.compile(
    r"(!?)\[(?!\[)((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^<>\n]+>|(?:[^()\s]|\([^()\s]*\))+)(?:\s+\"[^\"\n]*\")?\s*\)"
)
_TAG_RE = re.compile(r"(?:^|(?<=[\s(,;]))#([\w/\-]*[^\W\d][\w/\-]*)", re.UNICODE)
# An ATX heading line: (hashes, text without its closing hashes). The one heading pattern:
# tag scanning here, sections (writer.py) and chunks (index/chunking.py) all read it.
HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")


@dataclass(frozen=True, slots=True)
class Link:
    """One link as written. `target` is what to resolve (no heading, no label)."""

    target: str
    kind: str  # "wiki" | "embed" | "markdown"
    heading: str | None = None
    label: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"target": self.target, "kind": self.kind, "heading": self.heading, "label": self.label}


def code_lines(lines: Iterable[str]) -> Iterator[tuple[str, bool]]:
    """Each line and whether it belongs to a fenced code block (its fences included).

    The one statement of the fence rule (CommonMark's): a block opens with three or more
    backticks or tildes, and closes only with a line of the same character, at least as
    long, and nothing else: a `~~~` inside a ``` block, or a shorter fence, is code."""
    fence: str | None = None
    for line in lines:
        m = _FENCE_RE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)[0] * len(m.group(1))
            yield line, fence is not None
        else:
            yield line, True
            if m and m.group(1).startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None


# A line indented four columns (after any `>`), and a line after which no paragraph goes on
# (blank, a heading, a rule, a fence, a list marker with nothing after it). The first line
# of an indented code block is such a line under such a line (or quoted, or the first), so
# a body without one has no indented code and skips the line scanner, as most notes do:
# nested bullets follow text lines. The pattern starts with a literal `\n`, which keeps
# `re`'s search fast (a `^` is tried at every character).
_INDENTED_RE = re.compile(r"\n[ \t>]*?(?: {4}|\t)")
_ENDS_PARAGRAPH_RE = re.compile(
    r"[ \t>]*(?:(?:#|```|~~~|[-*_][ \t]*[-*_][ \t]*[-*_]).*|(?:(?:[-+*]|\d{1,9}[.)])[ \t]*)*)"
)


def _may_hold_indented_code(body: str) -> bool:
    if body[:1] in (" ", "\t", ">"):
        return True
    for m in _INDENTED_RE.finditer(body):
        before = body[body.rfind("\n", 0, m.start()) + 1 : m.start()].removesuffix("\r")
        if ">" in m.group(0) or _ENDS_PARAGRAPH_RE.fullmatch(before):
            return True
    return False


def code_mask(body: str, lines: list[str]) -> list[bool]:
    """Whether each line of `body` (split into `lines`) is code to Obsidian: in a fenced or
    an indented code block.

    The rule every reader of links and tags shares (the index's graph, `lint`, the rewriters
    of `note move` and `fix-names`). Readers of headings may keep to code_lines: a heading
    starts at column 0, where no indented code block is."""
    fenced = [code for _, code in code_lines(lines)]
    if not _may_hold_indented_code(body):
        return fenced
    return [f or i for f, i in zip(fenced, indented_code(lines, fenced), strict=True)]


def markdown_links(text: str) -> Iterator[re.Match[str]]:
    """Every markdown link and image of `text`, those inside another's text too: a linked
    image (`[![alt](img.png)](https://…)`, a badge) is an image inside a link."""
    for m in _MD_LINK_RE.finditer(text):
        yield m
        yield from _MD_LINK_RE.finditer(text, m.start(2), m.end(2))


def strip_code(body: str, keep_offsets: bool = False) -> str:
    """The body with code blocks (fenced, indented) and inline code blanked out (line count
    kept), and comments and math too (vault/hidden.py); with `keep_offsets`, a code line
    becomes spaces, so every offset is kept too."""
    lines = body.split("\n")
    mask = code_mask(body, lines)
    text = "\n".join(
        (" " * len(line) if keep_offsets else "") if code else line for line, code in zip(lines, mask, strict=True)
    )
    text = _INLINE_CODE_RE.sub(lambda m: " " * len(m.group(0)), text)
    if not hides_any(text):  # most notes: no second scan for link destinations
        return text
    return blank_hidden(text, sorted(m.span(3) for m in markdown_links(text)))


def _wiki_link(embed: str, inner: str) -> Link | None:
    label = None
    if "|" in inner:
        inner, label = inner.split("|", 1)
        if inner.endswith("\\"):
            inner = inner[:-1]  # `[[Target\|alias]]`: a pipe escaped in a table cell, as Obsidian reads it
        label = label.strip() or None
    heading = None
    if "#" in inner:
        inner, heading = inner.split("#", 1)
        heading = heading.strip() or None
    target = inner.strip()
    if not target:
        return None  # [[#Heading]] points into the note itself; [[ ]] points nowhere
    return Link(target, "embed" if embed else "wiki", heading, label)


_MAX_SUFFIX = 10  # `.excalidraw`: longer is a sentence with a dot in it, not a file name


def names_a_note(path: str) -> bool:
    """Whether a markdown link's path (decoded, no `#part`) names a note: it ends in `.md`,
    or has no extension, which Obsidian completes with `.md` (`[x](Three%20laws%20of%20motion)`
    links to `Three laws of motion.md`); `img/a.png` and `files/spec.pdf` name other files."""
    name = path.strip().rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    if dot and stem and suffix and len(suffix) <= _MAX_SUFFIX and suffix.isalnum():
        return suffix.lower() == "md"
    return name not in ("", ".", "..")


def _markdown_link(embed: str, label: str, href: str) -> Link | None:
    if href.startswith("<") and href.endswith(">"):
        href = href[1:-1]
    if _SCHEME_RE.match(href) or href.startswith("#"):
        return None
    heading = None
    if "#" in href:
        href, heading = href.split("#", 1)
    path = unquote(href).strip()
    if not names_a_note(path):
        return None
    return Link(path, "embed" if embed else "markdown", unquote(heading) if heading else None, label or None)


def extract_links(body: str, code_free: str | None = None) -> list[Link]:
    text = strip_code(body) if code_free is None else code_free
    links: list[Link] = []
    for m in _WIKI_RE.finditer(text):
        link = _wiki_link(m.group(1), m.group(2))
        if link:
            links.append(link)
    for m in markdown_links(text):
        link = _markdown_link(m.group(1), m.group(2), m.group(3))
        if link:
            links.append(link)
    return links


def extract_tags(body: str, code_free: str | None = None) -> list[str]:
    """Inline #tags outside code; a tag needs a non-digit character, as in Obsidian."""
    text = strip_code(body) if code_free is None else code_free
    # `[see](#heading)` and `[x](page.md#part)` point somewhere; their `#` starts no tag.
    text = _MD_LINK_RE.sub(lambda m: m.group(1) + "[" + m.group(2) + "]", text)
    seen: dict[str, None] = {}
    for line in text.split("\n"):
        if HEADING_RE.match(line):
            line = line.lstrip("#")
        for m in _TAG_RE.finditer(line):
            tag = m.group(1).strip("/")
            if tag:
                seen.setdefault(tag, None)
    return list(seen)


def headings(body: str) -> list[tuple[int, str]]:
    out = []
    for line in strip_code(body).split("\n"):
        m = HEADING_RE.match(line)
        if m:
            out.append((len(m.group(1)), m.group(2)))
    return out


def normalize_tag(tag: str) -> str:
    return tag.strip().lstrip("#").strip()
