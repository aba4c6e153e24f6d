"""Pure text transforms for writes (SPEC §2 writing rules).

New notes get the canonical key order. Edits keep every existing key where it is (unknown
keys included); added keys go after them in canonical order; the body stays byte-for-byte
unless the command edits it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vaultmem.vault.frontmatter import FrontMatterEditor, compose_document, dump_mapping, split_document
from vaultmem.vault.markdown import HEADING_RE, code_lines
from vaultmem.vault.note import CANONICAL_KEYS

REMOVE = object()  # a sentinel value: delete the key


def canonical_rank(key: str) -> tuple[int, str]:
    try:
        return (CANONICAL_KEYS.index(key), "")
    except ValueError:
        return (len(CANONICAL_KEYS), key)


def normalize_body(body: str) -> str:
    """Bodies vaultmem writes: LF line ends and exactly one trailing newline."""
    text = body.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    return text + "\n" if text else ""


def new_note_text(fields: Mapping[str, Any], body: str) -> str:
    ordered = {k: fields[k] for k in sorted(fields, key=canonical_rank) if fields[k] is not None}
    return compose_document(dump_mapping(ordered), normalize_body(body))


@dataclass(frozen=True, slots=True)
class Edited:
    text: str
    front_matter: dict[str, Any]
    body_changed: bool


def edit_note_text(
    text: str, data: Mapping[str, Any], changes: Mapping[str, Any], new_body: str | None = None
) -> Edited:
    """Apply key changes (value or REMOVE) and an optional new body to a note's text.

    `data` is the note's parsed front matter (the caller parsed it; a note whose front
    matter is broken cannot be edited)."""
    split = split_document(text)
    editor = FrontMatterEditor(split.fm_text or "", dict(data), split.newline)
    existing = [k for k in changes if k in data]
    added = sorted((k for k in changes if k not in data), key=canonical_rank)
    for key in [*existing, *added]:
        value = changes[key]
        if value is REMOVE:
            editor.remove(key)
        elif value is not None:
            editor.set(key, value)
    body = split.body
    changed = False
    if new_body is not None:
        normalized = normalize_body(new_body)
        if split.newline == "\r\n":
            normalized = normalized.replace("\n", "\r\n")
        changed = normalized != body
        body = normalized
    out = compose_document(editor.render(), body, split.newline, split.bom)
    return Edited(out, editor.data, changed)


def replace_section(body: str, heading: str, content: str) -> tuple[str, bool]:
    """Replace what follows a heading up to the next heading of the same or higher level.

    Returns (new body, found). When the heading is missing, the section is appended."""
    lines = body.replace("\r\n", "\n").split("\n")
    code = [in_code for _, in_code in code_lines(lines)]
    want = heading.strip().lstrip("#").strip().lower()
    start = level = None
    for i, line in enumerate(lines):
        if code[i]:
            continue
        m = HEADING_RE.match(line)
        if m and m.group(2).strip().lower() == want:
            start, level = i, len(m.group(1))
            break
    section = normalize_body(content).rstrip("\n")
    if start is None or level is None:
        base = normalize_body(body).rstrip("\n")
        title = heading.strip() if heading.strip().startswith("#") else f"## {heading.strip()}"
        joined = f"{base}\n\n{title}\n\n{section}" if base else f"{title}\n\n{section}"
        return normalize_body(joined), False
    end = len(lines)
    for j in range(start + 1, len(lines)):
        if code[j]:
            continue
        m = HEADING_RE.match(lines[j])
        if m and len(m.group(1)) <= level:
            end = j
            break
    tail = lines[end:]
    new_lines = [*lines[: start + 1], "", *section.split("\n"), *([""] if tail else []), *tail]
    return normalize_body("\n".join(new_lines)), True


def append_text(body: str, text: str) -> str:
    base = body.replace("\r\n", "\n").rstrip("\n")
    addition = text.replace("\r\n", "\n").strip("\n")
    return normalize_body(f"{base}\n\n{addition}" if base else addition)
