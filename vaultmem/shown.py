"""Note text is data wherever it is shown: `clean` makes visible every character of it that
could steer a terminal. Here, beneath every front end (the CLI's output, the watcher's log),
so that each shows note text the same way."""

from __future__ import annotations

import re
from typing import Any

# Everything a note supplies (titles, paths, tags, bodies, snippets, messages about files) is
# shown through `clean`/`safe`: never parsed as rich markup, and with every character that
# could steer a terminal made visible. C0 and C1 controls (ESC starts ANSI and OSC sequences,
# CR rewinds the line, NUL, BEL, DEL, …) and the bidi embeddings, overrides and isolates
# (U+202A-U+202E, U+2066-U+2069, which reorder what follows them) print as escapes such as
# `\x1b` or `\u202e`; line and paragraph separators too. So do the marks and invisible
# characters that reorder or hide text without a glyph (U+061C, U+180E, U+200B, U+200E-F,
# U+2060-U+2064, U+FEFF); the joiners U+200C-D stay, which Persian, Indic scripts and emoji
# need. Newlines and tabs stay, except in `inline` text (one field of one line), where they
# print as `\n` and `\t`.

_HIDDEN = "\u061c\u180e\u200b\u200e\u200f\u2060-\u2064\ufeff"
UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029{_HIDDEN}]")
_UNSAFE_INLINE = re.compile(f"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029{_HIDDEN}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _visible(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(value: Any, inline: bool = False) -> str:
    """Note-derived text, safe to print: control and bidi characters made visible (see above).

    `None` is the empty string. `inline` also escapes newlines and tabs (one field of a
    tab-separated record, a title in a table cell)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if inline:
        return _UNSAFE_INLINE.sub(_visible, text)
    return UNSAFE.sub(_visible, text.replace("\r\n", "\n"))
