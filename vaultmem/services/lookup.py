"""Find one note by a reference: id, then vault-relative path, then title, then alias.

Only notes the caller may see take part, so a hidden note can neither be found nor make a
visible one ambiguous: asking for it is answered exactly like asking for nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from vaultmem.errors import Ambiguous, InvalidInput, NotFound
from vaultmem.index.resolve import name_key
from vaultmem.index.statedb import NoteRecord, StateDB
from vaultmem.models import LinkedNote
from vaultmem.vault.layout import Location

Visible = Callable[[Location], bool]


def location_of(rec: NoteRecord) -> Location:
    return Location(rec.scope or "shared", rec.owner, rec.project, rec.placed)


def not_found(ref: str, suggestions: list[NoteRecord] | None = None) -> NotFound:
    """The error for a reference that matches nothing the caller may see. `suggestions` must
    come from visible notes only (`suggest`), so a hidden note never shows through."""
    if not suggestions:
        return NotFound(f"no note matches {ref!r}")
    titles = [repr(r.title or "") for r in suggestions]
    listing = titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " or " + titles[-1]
    return NotFound(
        f"no note matches {ref!r}; did you mean {listing}?",
        suggestions=[{"id": r.id, "path": r.path, "title": r.title} for r in suggestions],
    )


def suggest(db: StateDB, ref: str, visible: Visible, n: int = 3) -> list[NoteRecord]:
    """Up to `n` visible notes whose titles are closest to `ref` (difflib, letter case
    ignored), best first. Only notes `visible` admits are considered: the answer for a hidden
    note's title is the answer for any other text."""
    import difflib

    wanted = name_key(ref.strip())
    if not wanted:
        return []
    by_title: dict[str, NoteRecord] = {}
    for rec in db.light_notes(titled=True):
        key = name_key(rec.title or "")
        if key and key not in by_title and visible(location_of(rec)):
            by_title[key] = rec
    return [by_title[t] for t in difflib.get_close_matches(wanted, list(by_title), n=n, cutoff=0.6)]


def _one(ref: str, matches: list[NoteRecord]) -> NoteRecord:
    if len(matches) == 1:
        return matches[0]
    candidates = [{"id": r.id, "path": r.path, "title": r.title} for r in sorted(matches, key=lambda r: r.path)]
    listing = ", ".join(f"{c['id']} ({c['path']})" for c in candidates)
    raise Ambiguous(f"{ref!r} matches {len(matches)} notes: {listing}", candidates=candidates)


def find_note(db: StateDB, ref: str, visible: Visible) -> NoteRecord:
    """The one visible note `ref` names: id, vault-relative path (`.md` optional), title,
    alias, then a bare file name in any folder, then a unique id fragment. A pasted
    `[[Target#Heading|label]]` names its Target."""
    ref = split_wikilink(ref)[0].strip()
    if not ref:
        raise not_found(ref)
    if len(ref) > MAX_REF_CHARS:
        # No id, path, title or alias is this long (SQLite refuses such a LIKE pattern).
        raise InvalidInput(f"a note reference is at most {MAX_REF_CHARS} characters, not {len(ref)}")

    def seen(rows: list[NoteRecord]) -> list[NoteRecord]:
        return [r for r in rows if r.status == "note" and visible(location_of(r))]

    # ULIDs are Crockford base32, which is case-insensitive: an exact hit first, then any case.
    by_id = seen(db.by_id(ref)) or seen(db.by_id(ref, any_case=True)) or seen(db.by_former_id(ref))
    if by_id:
        return _one(ref, by_id)
    path = ref[2:] if ref.startswith("./") else ref
    candidates = [path] if path.lower().endswith(".md") else [path, path + ".md"]
    by_path = seen([r for p in candidates if (r := db.get(p)) is not None])
    if by_path:
        return by_path[0]
    by_title = seen(db.notes_titled(ref))
    if by_title:
        return _one(ref, by_title)
    key = name_key(ref)
    by_alias = seen([r for r in db.notes_with_alias_text(ref) if any(name_key(a) == key for a in r.aliases)])
    if by_alias:
        return _one(ref, by_alias)
    by_name = _by_file_name(db, ref, visible) or _by_id_fragment(db, ref, visible)
    if by_name:
        return _one(ref, by_name)
    raise not_found(ref, suggest(db, ref, visible))


MIN_ID_PREFIX = 6
MAX_REF_CHARS = 4096  # a path's length limit on Linux; titles are at most 512 characters
# ULIDs are Crockford base32; derived ids are `p-` and hex (lint --fix writes real ones)
_ID_CHARS = set("0123456789ABCDEFGHJKMNPQRSTVWXYZ-")


def _by_file_name(db: StateDB, ref: str, visible: Visible) -> list[NoteRecord]:
    """Visible notes whose file is named `ref` (`Embed files.md` or `Embed files`) in any
    folder, or whose vault path is `ref`, letter case and Unicode normal form ignored (as
    links resolve): a name pasted from a file browser or `ls`, a path typed in another case."""
    name = name_key(ref).removeprefix("./")
    if not name:
        return []
    wanted = name if name.endswith(".md") else name + ".md"
    if "/" in wanted:
        return [r for r in db.light_notes() if name_key(r.path) == wanted and visible(location_of(r))]
    return [r for r in db.light_notes() if name_key(r.path.rsplit("/", 1)[-1]) == wanted and visible(location_of(r))]


def _by_id_fragment(db: StateDB, ref: str, visible: Visible) -> list[NoteRecord]:
    """Visible notes whose id holds `ref` anywhere, letter case ignored: at least
    MIN_ID_PREFIX characters of a ULID — its start, as `git` takes a short commit hash, or
    of its random part, since notes made in the same minute share their first characters —
    or of a derived id (`p-9a68a8`). Several are ambiguous (exit 7, the candidates listed)."""
    fragment = ref.upper()
    if len(fragment) < MIN_ID_PREFIX or not set(fragment) <= _ID_CHARS:
        return []
    return [r for r in db.light_notes() if fragment in (r.id or "").upper() and visible(location_of(r))]


def split_wikilink(ref: str) -> tuple[str, str | None]:
    """A pasted `[[Target#Heading|label]]` (or `![[…]]`) as (Target, Heading); any other
    reference as (itself, None)."""
    text = ref.strip()
    if text.startswith("!"):
        text = text[1:]
    if not (text.startswith("[[") and text.endswith("]]")):
        return ref, None
    inner = text[2:-2].split("|", 1)[0]
    if inner.endswith("\\"):
        inner = inner[:-1]  # `[[Target\|label]]` copied out of a table cell
    target, _, heading = inner.partition("#")
    return target.strip(), heading.strip() or None


def linked_note(rec: NoteRecord) -> LinkedNote:
    """A note at the other end of a link, as `get` and `note delete` show it."""
    return LinkedNote(rec.id, rec.title, rec.path, rec.type, rec.scope)
