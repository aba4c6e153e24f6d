"""Values a caller gives, checked at the boundary before anything is written: titles,
tags, types, project names, [0, 1] units, and the front matter fields `note update --set`
may set (SPEC §2: the folder and vaultmem decide the rest)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from vaultmem.clock import note_time
from vaultmem.config import validate_name
from vaultmem.errors import InvalidInput, NotFound
from vaultmem.services.app import App
from vaultmem.services.lookup import find_note
from vaultmem.units import as_unit
from vaultmem.vault.dates import parse_iso
from vaultmem.vault.frontmatter import FrontMatterError, load_yaml
from vaultmem.vault.markdown import normalize_tag
from vaultmem.vault.note import UNIT_FIELDS, ParsedNote
from vaultmem.vault.property_links import OWN_NAMES, property_link

MAX_TITLE_CHARS = 512
WRITABLE_SCOPES = ("shared", "private", "diary", "project")
# Keys the folder or vaultmem itself decides; `--set` may not touch them.
PROTECTED_KEYS = {"id", "scope", "owner", "project", "version", "hash", "created", "updated", "comments"}
# `--set KEY=` removes a key, except these, which are checked (an empty title is refused).
NOT_REMOVABLE = {"title", "type", "tags"}
# Only `note validate` records a validation: a hand-set one would be a forgery.
VALIDATION_KEYS = {"last_validated_at", "last_validated_by"}
_TAG_RE = re.compile(r"^[^\s#,]+\Z")


# --- validation at the boundary -----------------------------------------------------------


def check_title(title: str) -> str:
    """The title as stored: stripped, in Unicode's composed form (NFC), so that `Café`
    typed with a combining accent is the same title, and file name, as `Café`."""
    text = unicodedata.normalize("NFC", title.strip())
    if not text:
        raise InvalidInput("title must not be empty")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise InvalidInput("title must not contain control characters (newlines, NUL, …)")
    if len(text) > MAX_TITLE_CHARS:
        raise InvalidInput(f"title is {len(text)} characters; at most {MAX_TITLE_CHARS}")
    return text


def check_unit(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    unit = as_unit(value)
    if unit is None:
        raise InvalidInput(f"{name} must be a number in [0, 1], not {value!r}")
    return unit


def check_tags(tags: Sequence[str]) -> list[str]:
    out: dict[str, None] = {}
    for raw in tags:
        if not isinstance(raw, str):  # `--set tags=[1, 2]` reads numbers, `[[1]]` lists
            raise InvalidInput(f"invalid tag {raw!r}: tags are words (letters, digits, '-', '_', '/')")
        tag = normalize_tag(raw)
        if not tag or not _TAG_RE.match(tag):
            raise InvalidInput(f"invalid tag {raw!r}: tags are single words (letters, digits, '-', '_', '/')")
        if all(ch.isdigit() or ch == "/" for ch in tag):
            # as an inline #1984 is none (vault/markdown.py extract_tags): Obsidian's rule
            raise InvalidInput(f"invalid tag {raw!r}: a tag needs a character that is not a digit, as in Obsidian")
        out.setdefault(tag, None)
    return list(out)


def check_type(app: App, note_type: str) -> str:
    if note_type not in app.config.types:
        raise InvalidInput(f"unknown type {note_type!r}; this vault allows: {', '.join(app.config.types)}")
    return note_type


def check_project(name: str) -> str:
    try:
        return validate_name(name)
    except InvalidInput:
        raise InvalidInput(f"invalid project name {name!r}: use a-z, 0-9, '_' and '-'") from None


def require_ghost(app: App, what: str) -> str:
    if app.ghost is None:
        raise InvalidInput(f"{what} needs a ghost: pass --ghost NAME or set VAULTMEM_GHOST")
    return app.ghost


def check_set_key(key: str) -> str:
    """A front matter key a caller may set (or remove)."""
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_.\-]*$", key):
        raise InvalidInput(f"invalid key {key!r}")
    if key in VALIDATION_KEYS:
        raise InvalidInput(f"{key} is recorded by `vaultmem note validate`; it cannot be set by hand")
    if key in PROTECTED_KEYS:
        raise InvalidInput(f"{key} is managed by vaultmem or decided by the note's folder; it cannot be set")
    return key


_COMMENT = re.compile(r"(?:^|\s)#")
_NOT_LINKS = OWN_NAMES | {"tags"}  # `tags=[[1]]` is no tag: refused as before


def parse_set(assignment: str) -> tuple[str, Any]:
    """`KEY=VALUE`; VALUE is read as YAML, so numbers, booleans and [lists] keep their type."""
    if "=" not in assignment:
        raise InvalidInput(f"--set expects KEY=VALUE, got {assignment!r}")
    key, raw = assignment.split("=", 1)
    key = check_set_key(key.strip())
    if key not in _NOT_LINKS and property_link(raw.strip()) is not None:
        # `--set related=[[Wine basics]]`, as a shell leaves `related="[[Wine basics]]"`: a
        # property link as Obsidian writes one, not the list of lists YAML reads there
        return key, raw.strip()
    try:
        read = load_yaml(f"v: {raw}") if raw.strip() else {"v": ""}
    except FrontMatterError:
        return key, raw
    value = read["v"]
    # Kept as the text given where YAML would drop or change some of it: a comment
    # (`see issue #42` read as `see issue`), a line read as another key, lines folded into one
    text = raw.strip()
    quoted = text[:1] in ("'", '"', "|", ">")
    if not quoted and (set(read) != {"v"} or _COMMENT.search(text) or (isinstance(value, str) and value != text)):
        return key, text
    return key, value


def checked_set(app: App, note: ParsedNote, key: str, value: Any) -> Any:
    """A `--set` value held to the checks `note create` applies to the same field."""
    if key == "type":
        return check_type(app, str(value))
    if key in UNIT_FIELDS:
        check_unit(key, value)
        return value
    if key == "title":
        return check_title(str(value))
    if key == "tags":
        return check_tags(value if isinstance(value, list) else [str(value)])
    if key == "aliases":
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(a, str) for a in items):
            raise InvalidInput("aliases must be text (one alias, or a [list] of them)")
        return [check_title(a) for a in items]
    if key == "expires":
        moment = parse_iso(value)
        if moment is None:
            raise InvalidInput(f"expires must be an ISO-8601 time like 2026-11-21T10:00:00 (UTC), not {value!r}")
        return note_time(moment)
    if key == "parent":
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise InvalidInput(f"parent must be a note's id or title, not {value!r}")
        try:
            parent = find_note(app.db, str(value), app.can_read)
        except NotFound:
            # a note the ghost may not see is answered exactly as a missing one
            raise InvalidInput(f"parent {str(value)!r} not found; nothing written") from None
        if parent.path == note.relpath:
            raise InvalidInput("a note cannot be its own parent")
        return parent.id
    return value
