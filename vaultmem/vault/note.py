"""The note model in one place: a tolerant, pure parser from bytes to a ParsedNote.

Nothing here raises on bad input. A file that cannot be a note (binary, too large) parses
to `None` plus a problem; a note with broken front matter parses as plain markdown plus a
problem. Lint, the indexer and the commands all read notes through `parse_note`.
"""

from __future__ import annotations

import codecs
import hashlib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vaultmem.models import Problem
from vaultmem.units import as_unit
from vaultmem.vault.frontmatter import FrontMatterError, SplitDocument, load_yaml, split_document
from vaultmem.vault.ids import derived_id
from vaultmem.vault.layout import MAX_NOTE_BYTES, Location, classify
from vaultmem.vault.markdown import Link, extract_links, extract_tags, normalize_tag, strip_code
from vaultmem.vault.property_links import property_links

# The canonical order in which vaultmem writes front matter keys (SPEC §2).
CANONICAL_KEYS: tuple[str, ...] = (
    "id", "title", "type", "scope", "owner", "project", "parent", "tags", "aliases",
    "source", "trust_score", "confidence", "importance", "created", "updated", "expires",
    "version", "hash", "last_validated_at", "last_validated_by", "comments",
)  # fmt: skip
UNIT_FIELDS = ("trust_score", "confidence", "importance")


@dataclass(frozen=True, slots=True)
class ParsedNote:
    relpath: str
    id: str
    id_derived: bool
    title: str
    type: str
    location: Location
    front_matter: dict[str, Any]  # JSON-safe; empty when missing or broken
    body: str
    tags: tuple[str, ...]  # front matter tags, then inline tags, de-duplicated
    aliases: tuple[str, ...]
    links: tuple[Link, ...]  # the body's
    problems: tuple[Problem, ...]
    content_hash: str  # sha256 of the file bytes
    fm_ok: bool = True  # False when the front matter was unusable (note degraded)
    newline: str = "\n"
    bom: bool = False
    fm_text: str | None = None
    property_links: tuple[Link, ...] = ()  # `related: "[[Note]]"` (vault/property_links.py)

    @property
    def graph_links(self) -> tuple[Link, ...]:
        """The note's links as Obsidian counts them: the body's, then its properties'."""
        return self.links + self.property_links

    @property
    def scope(self) -> str:
        return self.location.scope

    @property
    def owner(self) -> str | None:
        return self.location.owner

    @property
    def project(self) -> str | None:
        return self.location.project

    def field(self, key: str, default: Any = None) -> Any:
        return self.front_matter.get(key, default)

    def unit(self, key: str) -> float | None:
        """A [0, 1] field as a float, or None when absent or unusable."""
        return as_unit(self.front_matter.get(key))

    @property
    def parent(self) -> str | None:
        value = self.front_matter.get("parent")
        return str(value) if isinstance(value, (str, int)) and str(value).strip() else None

    @property
    def version(self) -> int:
        value = self.front_matter.get("version")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def body_hash(self) -> str:
        return body_hash(self.body)

    @property
    def body_as_written(self) -> bool:
        """The body is as vaultmem last wrote it (see `as_written`)."""
        return as_written(self.front_matter, self.body)

    @property
    def body_edited(self) -> bool:
        """The body differs from what vaultmem last wrote (its `hash`): edited by hand."""
        recorded = self.front_matter.get("hash")
        return isinstance(recorded, str) and recorded != self.body_hash()


def as_written(front: Mapping[str, Any], body: str) -> bool:
    """Whether a body is as vaultmem last wrote it: a `hash` recorded, and matching. A body
    without one (a person's note, one an agent added to unread) or that no longer matches
    (edited by hand) holds a person's words, which no agent replaces unread
    (services/revisions.py) and a merge keeps as theirs (vault/merge.py). Pure."""
    recorded = front.get("hash")
    return isinstance(recorded, str) and recorded == body_hash(body.replace("\r\n", "\n"))


def effective_version(file_version: int, body_edited: bool, previous: int | None) -> int:
    """The version a note is at, counting hand edits (SPEC §2: a hand edit is a new version).

    Pure. `file_version` is the `version:` in the file, `body_edited` whether its body
    differs from its `hash`, `previous` the effective version recorded before this content
    (None when nothing was recorded: a new file, a rebuilt state db). vaultmem writes
    `previous + 1` into the file, so a file version above `previous` is a vaultmem write;
    any other change of the content is an edit by hand: one more version, however the file
    changed (body, front matter, both) and however many times in a row.
    """
    own = file_version + (1 if body_edited else 0)
    if previous is None or file_version > previous:
        return own
    return previous + 1


def version_now(file_hash: str, file_version: int, body_edited: bool, known: Iterable[tuple[str, int]]) -> int:
    """The effective version of a file's content, given (file hash, version) pairs recorded
    for its path before: the index row, vaultmem's own last write. Known content keeps its
    version; anything else is counted by `effective_version`. Pure."""
    pairs = list(known)
    for known_hash, version in pairs:
        if known_hash == file_hash:
            return version
    previous = max((version for _, version in pairs), default=None)
    return effective_version(file_version, body_edited, previous)


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A file that is not a note at all; it is reported, never indexed."""

    relpath: str
    problem: Problem
    content_hash: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def body_hash(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_stem(relpath: str) -> str:
    name = relpath.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _string_list(value: Any) -> list[str]:
    """Tags and aliases as users write them: a list, or one string (comma/space separated)."""
    if value is None:
        return []
    if isinstance(value, str):
        parts = value.replace(",", " ").split() if "," in value or " " not in value.strip() else [value]
        return [p for p in (s.strip() for s in parts) if p]
    if isinstance(value, list):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]


# control characters, surrogates, private use, unassigned: a no-break space, a zero-width
# joiner or a soft hyphen are text (str.isprintable would say no)
_NOT_TEXT = frozenset(("Cc", "Cs", "Co", "Cn"))


def wide_encoding(data: bytes) -> str | None:
    """ "UTF-16" or "UTF-32" for text a Windows tool saved as 'Unicode', None for anything else:
    its byte-order mark, or, without one, a start that holds NULs (so `looks_binary` would
    call it binary) and reads whole as UTF-32 text (strict: a code unit is at most
    0x10FFFF, which few bytes that are not text satisfy), or is ASCII in UTF-16, a NUL in
    every other byte. UTF-16 without a mark is not read further: almost any pair of bytes is
    some printable letter in it."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "UTF-32"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "UTF-16"
    head = data[: min(len(data), 512) // 4 * 4]
    if b"\x00" not in head:
        return None
    for codec in ("utf-32-le", "utf-32-be"):
        try:
            text = head.decode(codec)
        except UnicodeDecodeError:
            continue
        if all(c in "\t\n\r\f" or unicodedata.category(c) not in _NOT_TEXT for c in text):
            return "UTF-32"
    evens, odds = set(head[0::2]), set(head[1::2])
    if len(head) >= 4 and ((odds == {0} and 0 not in evens) or (evens == {0} and 0 not in odds)):
        return "UTF-16"
    return None


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def parse_note(relpath: str, data: bytes) -> ParsedNote | Unreadable:
    """Parse one file. Pure: the same path and bytes always give the same result."""
    chash = content_hash(data)
    if len(data) > MAX_NOTE_BYTES:
        return Unreadable(
            relpath,
            Problem(relpath, "error", "too_large", f"file is {len(data)} bytes; notes are at most {MAX_NOTE_BYTES}"),
            chash,
        )
    wide = wide_encoding(data)
    if wide:
        why = (
            f"{wide} text (as Windows tools save 'Unicode'); notes are UTF-8, as Obsidian reads them: save it as UTF-8"
        )
        return Unreadable(relpath, Problem(relpath, "error", "not_utf8", why), chash)
    if looks_binary(data):
        return Unreadable(relpath, Problem(relpath, "error", "binary", "file holds binary data, not text"), chash)
    problems: list[Problem] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        problems.append(
            Problem(relpath, "error", "not_utf8", f"not valid UTF-8 (byte {exc.start}); read with replacements")
        )
    split: SplitDocument = split_document(text)
    body = split.body.replace("\r\n", "\n")
    front, fm_ok = _front_matter(relpath, split, problems)
    note_id, id_derived = _note_id(relpath, front)
    code_free = strip_code(body)
    return ParsedNote(
        relpath=relpath,
        id=note_id,
        id_derived=id_derived,
        title=_title(relpath, front),
        type=_note_type(front),
        location=classify(relpath),
        front_matter=front,
        body=body,
        tags=_tags(front, body, code_free),
        aliases=tuple(_string_list(front.get("aliases"))),
        links=tuple(extract_links(body, code_free)),
        problems=tuple(problems),
        content_hash=chash,
        fm_ok=fm_ok,
        newline=split.newline,
        bom=split.bom,
        fm_text=split.fm_text,
        property_links=tuple(property_links(front)),
    )


REPEATED_KEY = "repeated_key"


def _front_matter(relpath: str, split: SplitDocument, problems: list[Problem]) -> tuple[dict[str, Any], bool]:
    """The front matter as a mapping, and whether it could be read (a problem added if not)."""
    if split.unclosed:
        problems.append(Problem(relpath, "warning", "unclosed_frontmatter", "front matter has no closing '---'"))
    if split.fm_text is None:
        return {}, True
    repeated: list[str] = []
    try:
        front = load_yaml(split.fm_text, repeated)
    except FrontMatterError as exc:
        problems.append(Problem(relpath, "error", exc.code, str(exc)))
        return {}, False
    if repeated:
        # YAML keeps the last; a write re-rendering the block would drop the others, a
        # person's words among them, so vaultmem edits no such note (revisions.load_for_write)
        named = ", ".join(repr(k) for k in repeated)
        problems.append(
            Problem(relpath, "warning", REPEATED_KEY, f"front matter sets {named} more than once; keep one")
        )
    return front, True


def _note_id(relpath: str, front: dict[str, Any]) -> tuple[str, bool]:
    """(id, derived): the front matter's, else one derived from the path."""
    raw = front.get("id")
    if isinstance(raw, (str, int)) and not isinstance(raw, bool) and str(raw).strip():
        return str(raw).strip(), False
    return derived_id(relpath), True


def _title(relpath: str, front: dict[str, Any]) -> str:
    """The front matter's title, else the file name's stem (as Obsidian shows a note)."""
    raw = front.get("title")
    if isinstance(raw, (str, int, float)) and str(raw).strip():
        return str(raw).strip()
    return file_stem(relpath)


def _note_type(front: dict[str, Any]) -> str:
    raw = front.get("type")
    return str(raw).strip() if isinstance(raw, str) and raw.strip() else "note"


def _tags(front: dict[str, Any], body: str, code_free: str) -> tuple[str, ...]:
    """The front matter's tags, then the body's inline #tags (outside code), each once."""
    tags: dict[str, None] = {}
    for tag in _string_list(front.get("tags")):
        tag = normalize_tag(tag)
        if tag:
            tags.setdefault(tag, None)
    for tag in extract_tags(body, code_free):
        tags.setdefault(tag, None)
    return tuple(tags)
