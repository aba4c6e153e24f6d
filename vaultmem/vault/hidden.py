"""Text Obsidian reads as no markdown: comments (`%%…%%`, `<!--…-->`) and math (`$$…$$`,
`$…$`). Pure.

Obsidian's parser makes no link or tag of what they hold (a link in a comment is in no
backlinks, graph or outgoing links, and a rename leaves it as it is), so neither does
vaultmem: the graph, `lint` and every rewriter (`note move`, `fix-names`, `lint --fix`,
link-storing writes) read the text with them blanked out (markdown.strip_code).

Only closed spans count: a lone `%%` or `$$` hides nothing here. The scan is linear: an
opener whose closer is nowhere after it is never looked for again, and inline math stays on
its line and stops at the next `$`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence

_OPENER_RE = re.compile(r"%%|<!--|\$\$|(?<!\\)\$")
_CLOSERS = {"%%": "%%", "<!--": "-->", "$$": "$$"}
# `$x$`: no space after the opening `$` nor before the closing one, on one line, and no
# digit right after the closing one (Pandoc's rule), so that prices ($5 and $10, cost:$5 …
# total:$9) are no math.
_INLINE_MATH_RE = re.compile(r"\$[^\s$](?:[^$\n]*?[^\s\\$])?\$(?![$\d])")


def hides_any(text: str) -> bool:
    """Whether `text` holds an opener at all (most notes do not: no work for them)."""
    return _OPENER_RE.search(text) is not None


def hidden_spans(text: str, raw: Sequence[tuple[int, int]] = ()) -> Iterator[tuple[int, int]]:
    """(start, end) of every comment and math span of `text`, in order, not overlapping.
    `raw`: (start, end) of markdown link destinations, in order: a `$`, `%%` or `<!--` in
    one opens nothing (`[q](https://x.org/?$top=5)`), as a destination holds no markdown."""
    starts = [start for start, _ in raw]
    unclosed: set[str] = set()
    at = 0
    while True:
        m = _OPENER_RE.search(text, at)
        if m is None:
            return
        inside = bisect_right(starts, m.start()) - 1
        if inside >= 0 and m.start() < raw[inside][1]:
            at = raw[inside][1]
            continue
        opener = m.group(0)
        if opener == "$":
            math = _INLINE_MATH_RE.match(text, m.start())
            at = math.end() if math else m.end()
            if math:
                yield m.start(), math.end()
            continue
        closer = _CLOSERS[opener]
        end = -1 if opener in unclosed else text.find(closer, m.end())
        if end < 0:
            unclosed.add(opener)
            at = m.end()
            continue
        at = end + len(closer)
        yield m.start(), at


def blank_hidden(text: str, raw: Sequence[tuple[int, int]] = ()) -> str:
    """`text` with its comments and math made spaces, line breaks and offsets kept (`raw`:
    as hidden_spans takes it)."""
    out: list[str] = []
    at = 0
    for start, end in hidden_spans(text, raw):
        out.append(text[at:start])
        out.append("".join("\n" if c == "\n" else " " for c in text[start:end]))
        at = end
    out.append(text[at:])
    return "".join(out)
