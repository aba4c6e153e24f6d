"""Find one note by a reference: id, then vault-relative path, then title, then alias.

Only notes the caller may see take part, so a hidden note can neither be found nor make a
visible one ambiguous: asking for it is answered exactly like asking for nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from vaultmem.errors import Ambiguous, NotFound
from vaultmem.index.statedb import NoteRecord, StateDB
from vaultmem.vault.layout import Location

Visible = Callable[[Location], bool]


def location_of(rec: NoteRecord) -> Location:
    return Location(rec.scope or "shared", rec.owner, rec.project, rec.placed)


def not_found(ref: str) -> NotFound:
    return NotFound(f"no note matches {ref!r}")


def _one(ref: str, matches: list[NoteRecord]) -> NoteRecord:
    if len(matches) == 1:
        return matches[0]
    candidates = [{"id": r.id, "path": r.path, "title": r.title} for r in sorted(matches, key=lambda r: r.path)]
    listing = ", ".join(f"{c['id']} ({c['path']})" for c in candidates)
    raise Ambiguous(f"{ref!r} matches {len(matches)} notes: {listing}", candidates=candidates)


def find_note(db: StateDB, ref: str, visible: Visible) -> NoteRecord:
    ref = ref.strip()
    if not ref:
        raise not_found(ref)

    def seen(rows: list[NoteRecord]) -> list[NoteRecord]:
        return [r for r in rows if r.status == "note" and visible(location_of(r))]

    by_id = seen(db.by_id(ref))
    if by_id:
        return _one(ref, by_id)
    path = ref.lstrip("./")
    candidates = [path] if path.lower().endswith(".md") else [path, path + ".md"]
    by_path = seen([r for p in candidates if (r := db.get(p)) is not None])
    if by_path:
        return by_path[0]
    by_title = seen(db.records("status='note' AND title = ? COLLATE NOCASE", (ref,)))
    if by_title:
        return _one(ref, by_title)
    low = ref.lower()
    needle = json.dumps(ref, ensure_ascii=False)[1:-1].lower()
    rough = db.records("status='note' AND aliases != '[]' AND lower(aliases) LIKE ?", (f"%{needle}%",))
    by_alias = seen([r for r in rough if any(a.lower() == low for a in r.aliases)])
    if by_alias:
        return _one(ref, by_alias)
    raise not_found(ref)
