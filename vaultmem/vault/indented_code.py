"""Which lines are an indented code block (CommonMark §4.4), as Obsidian reads them. Pure.

Obsidian shows a line indented four columns past where its block's text starts as code: a
`[[link]]` there is text, no link, and a rename leaves it alone. Where the text starts is
the point: column 0 at the top level, but a list item's content column under `- ` or `1. `,
so the indented lines of a bullet, a nested bullet (by spaces or tabs) and a paragraph's
continuation line (an indented code block cannot interrupt a paragraph) are no code. A
careful line scanner, not a full parser: it follows list items, blockquotes and footnotes;
where it is unsure it says "not code", as vaultmem read every indented line before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

# What the previous line of a container was; _EMPTY a list item's marker with no text after it
_BLANK, _PARA, _CODE, _OTHER, _EMPTY = range(5)

# A list item's marker at the line's first non-space: a bullet or 1-9 digits and `.`/`)`,
# then spaces (or the end of the line).
_MARKER_RE = re.compile(r"([-+*]|\d{1,9}[.)])( +|$)")
_FOOTNOTE_RE = re.compile(r"\[\^[^\]\s]+\]:")
_RULE_RE = re.compile(r"([-*_])(?:[ ]*\1){2,}[ ]*$")  # a thematic break, `---`, `* * *`
_ATX_RE = re.compile(r"#{1,6}(?:[ ]|$)")
# Blockquotes read this deep at most; a line quoted deeper is no code (the safe side). A
# note of 600 `>` must not exhaust the stack, nor cost seconds a line (markdown-it stops
# nesting blocks at 100 too).
MAX_QUOTE_DEPTH = 32


@dataclass(slots=True)
class _Container:
    """The blocks open at one level: the content columns of its open list items (innermost
    last) and what its last line was; a blockquote's content is a container of its own."""

    items: list[int] = field(default_factory=list)
    last: int = _BLANK
    quote: _Container | None = None  # the open blockquote, while its lines go on


def indented_code(lines: Sequence[str], fenced: Sequence[bool]) -> list[bool]:
    """Whether each line is in an indented code block; `fenced` says which lines are in (or
    are the fences of) a fenced code block, as markdown.code_lines reads them."""
    flags = [False] * len(lines)
    top = _Container()
    for i, line in enumerate(lines):
        # A CRLF file's lines keep their `\r` here (the rewriters mask the text as it is on
        # disk); a line ending is no text. CommonMark: a tab in indentation counts to the
        # next 4th column.
        line = line[:-1] if line.endswith("\r") else line
        text = line.expandtabs(4) if "\t" in line else line
        if fenced[i]:
            if i == 0 or not fenced[i - 1]:
                _close_to(top, _indent(text))  # an opening fence ends the list items it is left of
            top.last, top.quote = _OTHER, None
            continue
        flags[i] = _line(top, text)
    return flags


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _close_to(box: _Container, indent: int) -> None:
    """Close the list items a line at `indent` that no paragraph continues is left of."""
    while box.items and indent < box.items[-1]:
        box.items.pop()


def _line(box: _Container, text: str, quotes: int = 0) -> bool:
    """Whether `text`, the next line of container `box` (inside `quotes` blockquotes), is
    indented code; updates `box`."""
    rest = text.lstrip(" ")
    if not rest:
        if box.last == _EMPTY:
            box.items.pop()  # a list item can begin with at most one blank line (CommonMark §5.2)
        box.last, box.quote = _BLANK, None
        return False
    indent = len(text) - len(rest)
    lazy = box.last == _PARA
    depth = len(box.items)
    while depth and indent < box.items[depth - 1]:
        depth -= 1
    base = box.items[depth - 1] if depth else 0
    if indent - base >= 4:
        if lazy:
            return False  # a paragraph's continuation line: its containers stay open
        del box.items[depth:]
        box.last, box.quote = _CODE, None
        return True
    if rest.startswith(">"):
        del box.items[depth:]
        if quotes >= MAX_QUOTE_DEPTH:
            box.last, box.quote = _OTHER, None
            return False
        return _quoted(box, rest, quotes + 1)
    starts = _block_start(rest)
    if lazy and not starts and not _interrupts(rest):
        # A continuation line, however little it is indented (a `===` under it too: read as
        # a heading's underline, what follows could be code, and the scanner stays on the
        # side of links)
        if _MARKER_RE.match(rest):
            # `10. x` after a paragraph: CommonMark goes on with the paragraph, markdown-it
            # opens a list. Measuring later lines from the item only makes fewer of them code.
            _open_items(box, indent, rest)
        return False
    del box.items[depth:]
    box.quote = None
    _open_items(box, indent, rest)
    if starts:
        box.last = _OTHER
    return False


def _block_start(rest: str) -> bool:
    """Whether a line (its text from the first non-space) is a heading or a thematic break:
    a block after which an indented line is code, no paragraph going on."""
    return bool(_ATX_RE.match(rest) or _RULE_RE.match(rest))


def _interrupts(rest: str) -> bool:
    """Whether a list item starts here though a paragraph goes on: not an empty one, and a
    numbered one only from 1 (CommonMark §5.3)."""
    m = _MARKER_RE.match(rest)
    return bool(m and m.group(2) and (not m.group(1)[0].isdigit() or m.group(1)[:-1] == "1"))


def _rule_tail(text: str) -> int:
    """Where the longest end of `text` that could be a thematic break begins (its last
    character `-`, `*` or `_`, then only that and spaces); len(text) when none can. Linear:
    `- - - … x` with 600 markers tried the rule at each one, each trial to the line's end
    (a reviewer's 2 MB note took 73 s to parse)."""
    end = text.rstrip(" ")
    if not end or end[-1] not in "-*_":
        return len(text)
    mark = end[-1]
    i = len(end)
    while i and end[i - 1] in (mark, " "):
        i -= 1
    return i


def _open_items(box: _Container, indent: int, rest: str) -> None:
    """Open the list items (and footnote) a line starts, `- - a` two of them; what is left
    of the line is a paragraph, a heading or nothing."""
    column = indent
    pos = 0
    rule_from = _rule_tail(rest)
    while True:
        m = _MARKER_RE.match(rest, pos)
        if m is None or (pos >= rule_from and _RULE_RE.match(rest, pos)):
            break
        width = len(m.group(1))
        spaces = len(m.group(2))
        # Text 1-4 spaces after the marker starts there; 5 or more (or none) means the
        # content column is one space after the marker (CommonMark §5.2).
        content = column + width + (spaces if 1 <= spaces <= 4 else 1)
        box.items.append(content)
        column += width + spaces
        pos += width + spaces
    rest = rest[pos:]
    m = _FOOTNOTE_RE.match(rest)
    if m:
        # A footnote's later paragraphs are indented 4 columns (markdown-it-footnote, as Obsidian)
        box.items.append(column + 4)
    box.last = _PARA if rest.strip() else _EMPTY if column > indent else _BLANK


def _quoted(box: _Container, rest: str, quotes: int) -> bool:
    """A line of a blockquote (or callout): its text after `>` is the next line of the
    quote's own container, opened anew when the line before was no quote line."""
    inner = rest[2:] if rest.startswith("> ") else rest[1:]  # `>` and one optional space
    if box.quote is None:
        box.quote = _Container()
    code = _line(box.quote, inner, quotes)
    # A paragraph open in the quote goes on in a line without `>` (lazy continuation).
    box.last = _PARA if box.quote.last == _PARA else _OTHER
    return code
