"""Parts of a note's body: the section under a heading, a range of lines. Pure."""

from __future__ import annotations

from vaultmem.errors import InvalidInput, NotFound
from vaultmem.vault.markdown import HEADING_RE, code_lines


def _heading_key(text: str) -> str:
    return " ".join(text.strip().lstrip("#").split()).lower()


def section_of(body: str, heading: str) -> tuple[str, int]:
    """The section under `heading` (letter case and extra spaces ignored, `#`s optional):
    its heading line and everything up to the next heading of the same or a higher level,
    outside code blocks. Returns (text, line number of the heading, 1-based)."""
    lines = body.replace("\r\n", "\n").split("\n")
    code = [in_code for _, in_code in code_lines(lines)]
    want = _heading_key(heading)
    found: list[str] = []
    start = level = None
    for i, line in enumerate(lines):
        m = None if code[i] else HEADING_RE.match(line)
        if m is None:
            continue
        found.append(m.group(2).strip())
        if start is None and _heading_key(m.group(2)) == want:
            start, level = i, len(m.group(1))
    if start is None or level is None:
        listing = ", ".join(repr(h) for h in found) if found else "none"
        raise NotFound(f"no heading {heading!r} in this note; its headings: {listing}")
    end = len(lines)
    for j in range(start + 1, len(lines)):
        m = None if code[j] else HEADING_RE.match(lines[j])
        if m and len(m.group(1)) <= level:
            end = j
            break
    part = lines[start:end]
    while part and not part[-1].strip():
        part.pop()
    return "\n".join(part) + "\n", start + 1


def parse_line_range(spec: str) -> tuple[int | None, int | None]:
    """`A:B` (1-based, both included), `A:` (to the end), `:B`, or `A` (one line)."""
    text = spec.strip()
    if text in ("", ":"):
        raise InvalidInput("--lines needs a range: A:B (line numbers from 1), e.g. 10:20, 10: or :20")
    first, sep, last = text.partition(":")
    try:
        a = int(first) if first.strip() else None
        b = (int(last) if last.strip() else None) if sep else a
    except ValueError:
        raise InvalidInput(f"--lines must be A:B (line numbers from 1), e.g. 10:20, 10: or :20; not {spec!r}") from None
    if (a is not None and a < 1) or (b is not None and b < 1) or (a is not None and b is not None and b < a):
        raise InvalidInput(f"--lines {spec!r}: line numbers start at 1 and B must not be before A")
    return a, b


def lines_of(text: str, spec: str) -> tuple[str, int, int, int]:
    """Lines A..B of `text`: (those lines, A, B clamped to the text, how many lines it has)."""
    a, b = parse_line_range(spec)
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the trailing newline ends the last line; it starts no new one
    total = len(lines)
    start = a or 1
    end = min(b or total, total)
    if start > total:
        return "", start, start - 1, total
    return "\n".join(lines[start - 1 : end]) + "\n", start, end, total
