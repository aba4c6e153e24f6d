"""Browsing the vault as the reader sees it: `list` (with recent activity), `links`, `tags`
and `orphans`.

Every answer is computed over the notes the caller may see (SPEC §3): a hidden note is
neither listed nor counted, and its links resolve as if it did not exist (the reader's view
of links, index/views.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vaultmem.errors import InvalidInput
from vaultmem.index.documents import changed_epoch, created_epoch
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import (
    DeletedNote,
    LinkedNote,
    LinkReport,
    ListedNote,
    NoteList,
    OrphanList,
    TagCount,
    TagList,
)
from vaultmem.search.filters import parse_date_bound, scopes_for
from vaultmem.services.app import App
from vaultmem.services.lookup import find_note, location_of
from vaultmem.vault.dates import epoch_to_iso, to_epoch
from vaultmem.vault.layout import classify
from vaultmem.vault.markdown import normalize_tag

SORTS = ("updated", "created", "title", "trust", "importance")
MAX_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class ListSpec:
    """What `list` asks for, as typed; dates may be relative (`2h`, `3d`, `yesterday`)."""

    scope: str | None = None
    types: Sequence[str] = ()
    tags: Sequence[str] = ()
    project: str | None = None
    owner: str | None = None
    since: str | None = None  # created at or after (index/documents.py created_epoch)
    until: str | None = None  # created at or before
    changed_since: str | None = None  # changed (front matter `updated` or the file) at or after
    changed_until: str | None = None
    sort: str = "updated"
    limit: int = 20
    offset: int = 0
    include_deleted: bool = False


def _visible_notes(app: App) -> list[NoteRecord]:
    """Every note the caller may see (full records: tags included), by path."""
    return [rec for rec in app.db.notes() if app.can_read(location_of(rec))]


def _modified(rec: NoteRecord) -> int:
    return rec.mtime_ns // 1_000_000_000


def listed(rec: NoteRecord) -> ListedNote:
    return ListedNote(
        id=rec.id, title=rec.title, type=rec.type, scope=rec.scope, path=rec.path, owner=rec.owner,
        project=rec.project, trust_score=rec.trust, importance=rec.importance, created=rec.created,
        updated=rec.updated, modified=epoch_to_iso(_modified(rec)), tags=list(rec.tags),
    )  # fmt: skip


def _has_tags(rec: NoteRecord, wanted: Sequence[str]) -> bool:
    """Every wanted tag, or a tag nested under it (`wine` matches `wine/red`), letter case ignored."""
    have = {t.lower() for t in rec.tags}
    return all(w in have or any(h.startswith(w + "/") for h in have) for w in wanted)


def _sort_key(sort: str) -> tuple[object, bool]:
    """(key function, descending) for a sort name."""
    if sort == "updated":
        return (lambda r: (changed_epoch(r), r.path)), True
    if sort == "created":
        return (lambda r: (created_epoch(r), r.path)), True
    if sort == "title":
        return (lambda r: ((r.title or r.path).casefold(), r.path)), False
    if sort == "trust":
        return (lambda r: (-1.0 if r.trust is None else r.trust, r.path)), True
    return (lambda r: (-1.0 if r.importance is None else r.importance, r.path)), True


def list_notes(app: App, spec: ListSpec) -> NoteList:
    if spec.sort not in SORTS:
        raise InvalidInput(f"unknown sort {spec.sort!r}; use one of {', '.join(SORTS)}")
    if not 0 <= spec.limit <= MAX_LIMIT:
        raise InvalidInput(f"--limit must be between 0 and {MAX_LIMIT}, not {spec.limit}")
    if spec.offset < 0:
        raise InvalidInput(f"--offset must not be negative, not {spec.offset}")
    scopes = scopes_for(spec.scope)
    since = parse_date_bound(spec.since, "since", end_of_day=False)
    until = parse_date_bound(spec.until, "until", end_of_day=True)
    changed_since = parse_date_bound(spec.changed_since, "changed-since", end_of_day=False)
    changed_until = parse_date_bound(spec.changed_until, "changed-until", end_of_day=True)
    types = {t for t in spec.types if t}
    tags = [normalize_tag(t).lower() for t in spec.tags if normalize_tag(t)]
    app.catch_up()

    def keep(rec: NoteRecord) -> bool:
        created = created_epoch(rec)
        return (
            (not scopes or rec.scope in scopes)
            and (not types or rec.type in types)
            and (spec.project is None or rec.project == spec.project)
            and (spec.owner is None or rec.owner == spec.owner)
            and (since is None or created >= since)
            and (until is None or created <= until)
            and (changed_since is None or changed_epoch(rec) >= changed_since)
            and (changed_until is None or changed_epoch(rec) <= changed_until)
            and _has_tags(rec, tags)
        )

    found = [rec for rec in _visible_notes(app) if keep(rec)]
    key, descending = _sort_key(spec.sort)
    found.sort(key=key, reverse=descending)  # type: ignore[arg-type]
    page = found[spec.offset : spec.offset + spec.limit]
    deleted = None
    if spec.include_deleted:
        deleted = _deleted(app, scopes, spec.project, spec.owner, changed_since)
    return NoteList(
        notes=[listed(r) for r in page], total=len(found), returned=len(page), offset=spec.offset,
        limit=spec.limit, sort=spec.sort, deleted=deleted,
    )  # fmt: skip


def _deleted(
    app: App, scopes: tuple[str, ...], project: str | None, owner: str | None, since: int | None
) -> list[DeletedNote]:
    """Deletions the caller could see before them, newest first: notes vaultmem moved to the
    trash (with the time), then files gone from disk that the state db still remembers
    (time unknown: it forgets them once every index has dropped them)."""
    from vaultmem.services.trash import trashed_notes

    out: list[DeletedNote] = []
    for t in trashed_notes(app):
        if since is None or (to_epoch(t.deleted_at, 0) or 0) >= since:
            out.append(DeletedNote(t.id or None, t.title, t.path, classify(t.path).scope, t.deleted_at, t.trashed_to))
    trashed = {d.path for d in out}
    for rec in app.db.tombstones():
        if rec.path not in trashed and app.can_read(location_of(rec)):
            out.append(DeletedNote(rec.id, rec.title, rec.path, rec.scope, None))
    return [
        d
        for d in out
        if (not scopes or d.scope in scopes)
        and (project is None or classify(d.path).project == project)
        and (owner is None or classify(d.path).owner == owner)
    ]


# --- links, tags, orphans ---------------------------------------------------------------------


def note_links(app: App, ref: str) -> LinkReport:
    """`links REF`: links out (with the heading and label written), links in, the parent,
    children and dangling targets of one note, as `get` reports them."""
    from vaultmem.services.documents import links_of

    app.catch_up()
    rec = find_note(app.db, ref, app.can_read)
    return LinkReport(LinkedNote(rec.id, rec.title, rec.path, rec.type, rec.scope), links_of(app, rec.path))


def tag_counts(app: App, sort: str = "count", prefix: str | None = None) -> TagList:
    """Every tag of the visible notes (front matter and inline), letter case folded as
    Obsidian folds it, with nested tags rolled up into their parents."""
    if sort not in ("count", "name"):
        raise InvalidInput(f"unknown sort {sort!r}; use count or name")
    app.catch_up()
    spelling: dict[str, str] = {}
    exact: dict[str, int] = {}
    rolled: dict[str, int] = {}
    for rec in _visible_notes(app):
        own: set[str] = set()
        under: set[str] = set()
        for tag in rec.tags:
            text = normalize_tag(tag).strip("/")
            if not text:
                continue
            key = text.lower()
            own.add(key)
            parts, spelled = key.split("/"), text.split("/")
            for i in range(1, len(parts) + 1):
                k = "/".join(parts[:i])
                under.add(k)
                spelling.setdefault(k, "/".join(spelled[:i]))
        for k in own:
            exact[k] = exact.get(k, 0) + 1
        for k in under:
            rolled[k] = rolled.get(k, 0) + 1
    wanted = (normalize_tag(prefix).lower() if prefix else "").strip("/")
    keys = [k for k in rolled if not wanted or k == wanted or k.startswith(wanted + "/")]
    if sort == "name":
        keys.sort()
    else:
        keys.sort(key=lambda k: (-rolled[k], k))
    return TagList([TagCount(spelling[k], rolled[k], exact.get(k, 0)) for k in keys], len(keys))


def orphan_notes(app: App) -> OrphanList:
    """Visible notes with no link or parent edge to or from another visible note (a link to
    a hidden note counts as it resolves for this reader, a dangling link as none)."""

    app.catch_up()
    notes = _visible_notes(app)
    shown = {rec.path for rec in notes}
    reader = app.reader_links()
    connected: set[str] = set()
    for edge in app.db.all_edges():
        dst = reader.dst(edge)  # where the link lands for this reader (a hidden note wins none)
        if edge.src in shown and dst in shown and dst != edge.src:
            connected.update((edge.src, dst))
    orphans = [listed(rec) for rec in notes if rec.path not in connected]
    return OrphanList(orphans, len(orphans))
