"""Reading one note (memory_get): the note by any reference, its body or a part of it, and
its links both ways as the caller resolves them."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from vaultmem.errors import InvalidInput, NotFound
from vaultmem.index.statedb import Edge, NoteRecord
from vaultmem.models import (
    Dangling,
    LinkIn,
    LinkOut,
    Links,
    NoteDocument,
)
from vaultmem.services.app import App
from vaultmem.services.lookup import find_note, linked_note, location_of, not_found
from vaultmem.services.revisions import version_of
from vaultmem.vault import store
from vaultmem.vault.attachments import Attachments
from vaultmem.vault.comments import read as comments_of
from vaultmem.vault.note import Unreadable, parse_note

if TYPE_CHECKING:
    from vaultmem.index.graph import ReaderLinks


def edges_in(app: App, path: str, reader: ReaderLinks | None = None) -> list[Edge]:
    """The links to the note at `path` as the caller resolves them (index/views.py): not one
    that reaches it only because a note the caller cannot see is missing from its view, and
    one that would reach another note, which the caller cannot see, instead. By source: the
    db's row order follows when each link was last resolved, which a change to a hidden note
    can shift."""
    reader = reader or app.reader_links()
    edges = [e for e in app.db.edges_to(path) if reader.dst(e) == path]
    edges += [Edge(src, path, kind, "") for src, kind in reader.arrived.get(path, ())]
    return sorted(edges, key=lambda e: (e.src, e.kind))


def links_of(app: App, path: str) -> Links:
    """The links of the note at `path`, both ways, resolved among the notes the caller may
    see (index/views.py, the readers' links): a link whose target the caller cannot see points where it
    would if that note did not exist, or dangles."""
    db = app.db
    reader = app.reader_links()
    out_edges = [replace(e, dst=reader.dst(e)) for e in db.edges_from(path)]
    in_edges = edges_in(app, path, reader)
    related = db.by_paths({e.dst for e in out_edges if e.dst} | {e.src for e in in_edges})

    def visible(other_path: str | None) -> NoteRecord | None:
        other = related.get(other_path) if other_path is not None else None
        return other if other is not None and other.status == "note" and app.can_read(location_of(other)) else None

    links = Links(out=[], in_=[])
    seen: set[tuple[str, str]] = set()
    files = Attachments(app.root, app.can_read)  # `![[pic.png]]`: no note, but there
    for edge in out_edges:
        target = visible(edge.dst)
        if edge.kind == "parent":
            links = replace(links, parent=linked_note(target) if target else None)
        elif target is None:
            if not files.resolves(edge.target, path):
                links.dangling.append(Dangling(edge.target, edge.heading))
        elif ("out", target.path) not in seen:
            seen.add(("out", target.path))
            links.out.append(LinkOut(linked_note(target), edge.kind, edge.heading, edge.label))
    for edge in in_edges:
        source = visible(edge.src)
        if source is None or source.path == path:
            continue
        # A parent edge pointing here comes from a child note: listed apart from links,
        # mirroring `parent` on the child's side.
        relation = "child" if edge.kind == "parent" else "in"
        if (relation, source.path) in seen:
            continue
        seen.add((relation, source.path))
        if relation == "child":
            links.children.append(linked_note(source))
        else:
            links.in_.append(LinkIn(linked_note(source), edge.kind, edge.heading or None, edge.label or None))
    return links


def get_note(
    app: App,
    ref: str,
    raw: bool = False,
    scope: str | None = None,
    section: str | None = None,
    lines: str | None = None,
) -> NoteDocument:
    """One note by id, path, title, alias, file name or id prefix (lookup.find_note).
    `scope` (memory_get's, as in `search --scope`) narrows where the reference is resolved:
    a note outside it is not found. `section` (or the heading of a pasted
    `[[Note#Heading]]`) and `lines` (`A:B`) make `body` that part of the body only."""
    from vaultmem.search.filters import scopes_for
    from vaultmem.services.lookup import split_wikilink
    from vaultmem.vault.sections import lines_of, parse_line_range, section_of

    scopes = scopes_for(scope)
    if lines is not None:
        parse_line_range(lines)  # a bad range is a usage problem, whatever the note
    section = section or split_wikilink(ref)[1]
    app.catch_up()
    visible = app.can_read if not scopes else lambda loc: loc.scope in scopes and app.can_read(loc)
    rec = find_note(app.db, ref, visible)
    try:
        data, stamp = store.read_file(app.root, rec.path)
    except (NotFound, InvalidInput):
        # Gone or grown since the catch-up a moment ago: answer as for any missing note.
        raise not_found(ref) from None
    parsed = parse_note(rec.path, data)
    if isinstance(parsed, Unreadable):
        raise not_found(ref)
    version = version_of(app, rec, parsed, stamp.sha256)
    fm = dict(parsed.front_matter)
    note = {
        **fm,
        "id": rec.id or parsed.id,  # the state db carries ids of id-less notes across moves
        "title": parsed.title,
        "type": parsed.type,
        "scope": parsed.scope,
        "owner": parsed.owner,
        "project": parsed.project,
        "path": rec.path,
    }
    # always, 0 for a note no write has counted yet: hand edits counted, what
    # --expect-version compares with (a person's note refuses an agent's unread replace)
    note["version"] = version
    body = parsed.body
    part: dict[str, Any] = {}
    if section is not None:
        body, at = section_of(body, section)
        part.update(section=section, section_line=at)
    if lines is not None:
        body, first, last, total = lines_of(body, lines)
        part.update(lines=[first, last], total_lines=total)
    return NoteDocument(
        note=note,
        body=body,
        tags=list(parsed.tags),
        links=links_of(app, rec.path),
        comments=[c.to_dict() for c in comments_of(fm.get("comments"))],
        raw=data.decode("utf-8", errors="replace") if raw else None,
        part=part or None,
    )
