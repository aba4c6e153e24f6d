"""Use cases that create, change and read single notes (memory_note_* and memory_get)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from datetime import datetime, timedelta
from typing import Any

from vaultmem.clock import iso
from vaultmem.clock import now as utc_now
from vaultmem.config import validate_ghost_name, validate_name
from vaultmem.errors import Conflict, InvalidInput, NotFound
from vaultmem.index.resolve import NameEntry, Resolver
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import (
    CommentResult,
    Dangling,
    DeleteResult,
    LinkedNote,
    LinkIn,
    LinkOut,
    Links,
    NoteDocument,
    ValidateResult,
    WriteResult,
)
from vaultmem.services.app import App
from vaultmem.services.lookup import find_note, location_of, not_found
from vaultmem.units import as_unit
from vaultmem.vault import store
from vaultmem.vault.dates import parse_iso
from vaultmem.vault.frontmatter import FrontMatterError, load_yaml
from vaultmem.vault.ids import new_ulid
from vaultmem.vault.layout import Location, classify
from vaultmem.vault.markdown import normalize_tag
from vaultmem.vault.note import UNIT_FIELDS, ParsedNote, Unreadable, body_hash, parse_note, version_now
from vaultmem.vault.relink import file_linked
from vaultmem.vault.writer import (
    REMOVE,
    append_text,
    edit_note_text,
    new_note_text,
    normalize_body,
    replace_section,
)

MAX_TITLE_CHARS = 512
WRITABLE_SCOPES = ("shared", "private", "diary", "project")
# Keys the folder or vaultmem itself decides; `--set` may not touch them.
PROTECTED_KEYS = {"id", "scope", "owner", "project", "version", "hash", "created", "updated", "comments"}
# `--set KEY=` removes a key, except these, which are checked (an empty title is refused).
NOT_REMOVABLE = {"title", "type", "tags"}
# Only `note validate` records a validation: a hand-set one would be a forgery.
VALIDATION_KEYS = {"last_validated_at", "last_validated_by"}
_TAG_RE = re.compile(r"^[^\s#,]+$")


# --- validation at the boundary -----------------------------------------------------------


def check_title(title: str) -> str:
    text = title.strip()
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


# --- placement ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placement:
    folder: str
    location: Location


def placement(app: App, scope: str, project: str | None, *, today: datetime | None = None) -> Placement:
    if scope == "shared":
        return Placement("shared", Location("shared"))
    if scope in ("private", "diary"):
        ghost = require_ghost(app, f"a {scope} note")
        return Placement(f"{scope}/{ghost}", Location(scope, owner=ghost))
    if scope == "project":
        if not project:
            raise InvalidInput("a project note needs --project NAME")
        name = check_project(project)
        location = Location("project", project=name)
        if not app.can_write(location):
            raise NotFound(f"no project {name!r}")
        return Placement(f"project/{name}", location)
    if scope == "inbox-shared":
        return Placement("inbox/shared", Location("inbox"))
    if scope == "inbox":
        ghost = require_ghost(app, "a private capture")
        return Placement(f"inbox/{ghost}", Location("inbox", owner=ghost))
    raise InvalidInput(f"unknown scope {scope!r}; use one of {', '.join(WRITABLE_SCOPES)}")


def ensure_unique_title(app: App, title: str, scope: str, exclude_path: str | None = None) -> None:
    """Titles are unique, case-insensitively, among shared notes (SPEC §2)."""
    if scope != "shared":
        return
    rows = app.db.notes_titled(title, scope="shared")
    clash = [r for r in rows if r.path != exclude_path]
    if clash:
        raise Conflict(
            f"a shared note titled {clash[0].title!r} already exists ({clash[0].path})",
            existing={"id": clash[0].id, "path": clash[0].path},
        )


# --- links as Obsidian reads them -------------------------------------------------------------


def file_linked_text(app: App, text: str, source: str) -> str:
    """Wikilinks in text vaultmem writes, made to resolve by file name (Obsidian's rule) to
    the note vaultmem resolves them to: `[[Wine: basics]]` → `[[Wine basics|Wine: basics]]`.
    Only notes the ghost can see take part, so a rewrite never hints at a hidden one."""
    if "[[" not in text:
        return text
    names = [n for n in app.db.names() if app.can_read(classify(n[0]))]
    resolver = Resolver(NameEntry(*n) for n in names)
    files = Resolver(NameEntry(n[0], "", "") for n in names)

    def is_id(target: str) -> bool:
        return target in resolver.by_id or target.lower() in resolver.by_id

    return file_linked(text, source, resolver.resolve, files.resolve, is_id)


# --- create ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewNote:
    title: str
    type: str
    scope: str
    body: str = ""
    project: str | None = None
    parent: str | None = None
    tags: Sequence[str] = ()
    aliases: Sequence[str] = ()
    source: str | None = None
    trust: float | None = None
    confidence: float | None = None
    importance: float | None = None
    ttl_days: float | None = None
    extra: Mapping[str, Any] | None = None  # unknown keys, written after the canonical ones
    # When the note's content came to be (an aware event time; default now): written as `created`
    # and `updated` (a new note is unchanged since), and the TTL counts from it.
    created: datetime | None = None


def _resolve_parent(app: App, ref: str) -> NoteRecord:
    try:
        return find_note(app.db, ref, app.can_read)
    except NotFound:
        raise NotFound(f"parent {ref!r} not found") from None


def create_note(app: App, spec: NewNote, *, caught_up: bool = False) -> WriteResult:
    title = check_title(spec.title)
    note_type = check_type(app, spec.type)
    place = placement(app, spec.scope, spec.project)
    tags = check_tags(spec.tags)
    aliases = [check_title(a) for a in spec.aliases]
    trust = check_unit("trust_score", spec.trust)
    confidence = check_unit("confidence", spec.confidence)
    importance = check_unit("importance", spec.importance)
    # Written as a range test so NaN (every comparison false) is refused too.
    if spec.ttl_days is not None and not 0 <= spec.ttl_days <= 365 * 1000:
        raise InvalidInput(f"ttl-days must be between 0 and 365000, not {spec.ttl_days}")
    if not caught_up:
        app.catch_up()
    folder = place.folder
    parent_id = None
    if spec.parent:
        parent = _resolve_parent(app, spec.parent)
        parent_id = parent.id
        # Children sit beside their parent when it lives in the same scope folder.
        parent_folder = parent.path.rsplit("/", 1)[0] if "/" in parent.path else ""
        if parent_folder == folder or parent_folder.startswith(folder + "/"):
            folder = parent_folder
    ensure_unique_title(app, title, place.location.scope)
    now = utc_now() if spec.created is None else spec.created
    stem = store.name_for_title(title)
    body = file_linked_text(app, spec.body, f"{folder}/{stem}.md")
    fields: dict[str, Any] = {
        "id": new_ulid(),
        "title": title,
        "type": note_type,
        "scope": place.location.scope,
        "owner": place.location.owner,
        "project": place.location.project,
        "parent": parent_id,
        "tags": tags,
        "aliases": aliases or None,
        "source": spec.source,
        "trust_score": 0.5 if trust is None else trust,
        "confidence": confidence,
        "importance": importance,
        "created": iso(now),
        "updated": iso(now),
        "expires": iso(now + timedelta(days=spec.ttl_days)) if spec.ttl_days is not None else None,
        "version": 1,
    }
    fields["hash"] = body_hash(normalize_body(body))
    if spec.extra:
        fields.update({k: v for k, v in spec.extra.items() if k not in fields})
    text = new_note_text(fields, body)
    data = text.encode("utf-8")
    relpath = store.create_unique(app.root, folder, stem, data)
    record_written(app, relpath, data, 1)
    return WriteResult(fields["id"], relpath, 1)


# --- read-modify-write ------------------------------------------------------------------------


def version_of(app: App, rec: NoteRecord, note: ParsedNote, file_hash: str) -> int:
    """The version a note is at now, hand edits counted (SPEC §2). The file was just read,
    so an edit the index has not seen yet (a watcher still debouncing it) counts too."""
    known = [(rec.hash, rec.version)] if rec.is_note else []
    written = app.db.writes_of([rec.path]).get(rec.path)
    if written is not None:
        known.append(written)
    return version_now(file_hash, note.version, note.body_edited, known)


def record_written(app: App, relpath: str, data: bytes, version: int) -> None:
    """Remember what vaultmem wrote (so any other content is a hand edit), then report it."""
    app.db.record_write(relpath, hashlib.sha256(data).hexdigest(), version)
    app.wrote([relpath])


def check_expected(path: str, file_version: int, now_at: int, expected: int | None) -> None:
    """`--expect-version`: refuse, changing nothing, unless the note is at that version."""
    if expected is None or expected == now_at:
        return
    if now_at != file_version and expected < now_at:
        message = (
            f"{path} was edited by hand since version {expected} was read (the file was changed outside "
            f"vaultmem); it is now at version {now_at}: read it again and retry with --expect-version "
            f"{now_at}; nothing written"
        )
    else:
        message = f"{path} is at version {now_at}, not {expected}; nothing written"
    raise Conflict(message, current_version=now_at)


Mutation = Callable[[ParsedNote], tuple[dict[str, Any], str | None]]


@dataclass(frozen=True, slots=True)
class Loaded:
    record: NoteRecord
    note: ParsedNote
    text: str
    stamp: store.FileStamp


def load_for_write(app: App, ref: str) -> Loaded:
    app.catch_up()
    rec = find_note(app.db, ref, app.can_write)
    data, stamp = store.read_file(app.root, rec.path)
    parsed = parse_note(rec.path, data)
    if isinstance(parsed, Unreadable):
        raise InvalidInput(f"{rec.path}: {parsed.problem.message}; not editable")
    if not parsed.fm_ok:
        raise InvalidInput(f"{rec.path}: front matter is broken; fix it by hand (see `vaultmem lint`)")
    if any(p.code == "not_utf8" for p in parsed.problems):
        raise InvalidInput(f"{rec.path}: not valid UTF-8; vaultmem will not rewrite it")
    return Loaded(rec, parsed, data.decode("utf-8"), stamp)


def check_unseen_edit(path: str, file_version: int, now_at: int) -> None:
    """A write that replaces text, from a caller that states no version it read: refused
    while the note holds an edit made outside vaultmem (its effective version is past the
    one vaultmem wrote into the file), so a person's words are never replaced unseen."""
    if now_at == file_version:
        return
    raise Conflict(
        f"{path} holds an edit made by hand (outside vaultmem) that this write would replace; it is at "
        f"version {now_at}: read it, then retry with expect_version {now_at}; nothing written",
        current_version=now_at,
    )


def mutate(
    app: App,
    ref: str,
    mutation: Mutation,
    *,
    expect_version: int | None = None,
    bump: bool = True,
    refuse_unseen_edits: bool = False,
) -> tuple[WriteResult, dict[str, Any]]:
    """Read a note, apply `mutation`, write it back atomically unless it changed meanwhile.
    `refuse_unseen_edits`: without `expect_version`, a hand edit is a conflict
    (check_unseen_edit) rather than text to write over."""
    loaded = load_for_write(app, ref)
    note = loaded.note
    now_at = version_of(app, loaded.record, note, loaded.stamp.sha256)
    check_expected(loaded.record.path, note.version, now_at, expect_version)
    if refuse_unseen_edits and expect_version is None:
        check_unseen_edit(loaded.record.path, note.version, now_at)
    changes, new_body = mutation(note)
    version = now_at
    if bump:
        version = now_at + 1
        changes.setdefault("updated", iso(utc_now()))
        changes["version"] = version
    if new_body is not None:
        changes["hash"] = body_hash(normalize_body(new_body))
    edited = edit_note_text(loaded.text, note.front_matter, changes, new_body)
    if edited.text != loaded.text:
        data = edited.text.encode("utf-8")
        store.replace_file(app.root, loaded.record.path, data, loaded.stamp)
        record_written(app, loaded.record.path, data, version)
    return WriteResult(loaded.record.id or note.id, loaded.record.path, version), edited.front_matter


def check_set_key(key: str) -> str:
    """A front matter key a caller may set (or remove)."""
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_.\-]*$", key):
        raise InvalidInput(f"invalid key {key!r}")
    if key in VALIDATION_KEYS:
        raise InvalidInput(f"{key} is recorded by `vaultmem note validate`; it cannot be set by hand")
    if key in PROTECTED_KEYS:
        raise InvalidInput(f"{key} is managed by vaultmem or decided by the note's folder; it cannot be set")
    return key


def parse_set(assignment: str) -> tuple[str, Any]:
    """`KEY=VALUE`; VALUE is read as YAML, so numbers, booleans and [lists] keep their type."""
    if "=" not in assignment:
        raise InvalidInput(f"--set expects KEY=VALUE, got {assignment!r}")
    key, raw = assignment.split("=", 1)
    key = check_set_key(key.strip())
    try:
        value = load_yaml(f"v: {raw}")["v"] if raw.strip() else ""
    except FrontMatterError:
        value = raw
    return key, value


def _checked_set(app: App, note: ParsedNote, key: str, value: Any) -> Any:
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
            raise InvalidInput(f"expires must be an ISO-8601 time like 2026-11-21T10:00:00Z, not {value!r}")
        return iso(moment)
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


@dataclass(frozen=True, slots=True)
class NotePatch:
    title: str | None = None
    sets: Sequence[str] = ()
    add_tags: Sequence[str] = ()
    remove_tags: Sequence[str] = ()
    body: str | None = None
    append: str | None = None
    replace_section: str | None = None
    # Typed front matter values (key -> value; None or "" removes), as an API caller has
    # them; `sets` are the CLI's KEY=VALUE texts, whose VALUE is read as YAML.
    fields: Mapping[str, Any] = dataclass_field(default_factory=dict)

    @property
    def replaces_text(self) -> bool:
        """Whether it writes over what is there (not only adds to it: append, tags)."""
        return bool(self.body is not None or self.sets or self.fields or self.title is not None)


def update_note(
    app: App, ref: str, patch: NotePatch, expect_version: int | None = None, *, refuse_unseen_edits: bool = False
) -> WriteResult:
    """`refuse_unseen_edits`: a caller that states no version (an agent over MCP) may add to
    a note a person edited, but not replace its text (mutate)."""
    edits = [
        patch.body is not None and patch.replace_section is None,
        patch.append is not None,
        patch.replace_section is not None,
    ]
    if sum(edits) > 1:
        raise InvalidInput("use one of --body, --append, --replace-section (with --body) at a time")
    if patch.replace_section is not None and patch.body is None:
        raise InvalidInput("--replace-section needs --body with the new section content")
    sets = [parse_set(s) for s in patch.sets] + [
        (check_set_key(k), "" if v is None else v) for k, v in patch.fields.items()
    ]
    title = check_title(patch.title) if patch.title is not None else None
    add_tags = check_tags(patch.add_tags)
    remove = {normalize_tag(t).lower() for t in patch.remove_tags}
    section_found: list[bool] = []

    def mutation(note: ParsedNote) -> tuple[dict[str, Any], str | None]:
        changes: dict[str, Any] = {}
        for key, value in sets:
            if (value == "" or value is None) and key not in NOT_REMOVABLE:
                changes[key] = REMOVE
                continue
            changes[key] = _checked_set(app, note, key, value)
        if title is not None:
            changes["title"] = title
        new_title = changes.get("title")
        if isinstance(new_title, str) and new_title.lower() != note.title.lower():
            ensure_unique_title(app, new_title, note.scope, exclude_path=note.relpath)
        if add_tags or remove:
            fm_tags = note.front_matter.get("tags")
            current = [
                normalize_tag(t) for t in (fm_tags if isinstance(fm_tags, list) else ([fm_tags] if fm_tags else []))
            ]
            kept = [t for t in current if t.lower() not in remove]
            for tag in add_tags:
                if tag.lower() not in {k.lower() for k in kept}:
                    kept.append(tag)
            if kept != current or "tags" not in note.front_matter:
                changes["tags"] = kept
        # Only the text this command brings is relinked: the rest of the body stays as is.
        new_body: str | None = None
        if patch.replace_section is not None and patch.body is not None:
            section = file_linked_text(app, patch.body, note.relpath)
            new_body, found = replace_section(note.body, patch.replace_section, section)
            section_found.append(found)
        elif patch.append is not None:
            new_body = append_text(note.body, file_linked_text(app, patch.append, note.relpath))
        elif patch.body is not None:
            new_body = file_linked_text(app, patch.body, note.relpath)
        return changes, new_body

    guard = refuse_unseen_edits and patch.replaces_text
    result, _ = mutate(app, ref, mutation, expect_version=expect_version, refuse_unseen_edits=guard)
    if section_found and not section_found[0]:
        return WriteResult(result.id, result.path, result.version, {"section_created": True})
    return result


def validate_note(
    app: App, ref: str, by: str, trust: float | None, expect_version: int | None = None
) -> ValidateResult:
    if "/" not in by or not all(part.strip() for part in by.split("/", 1)):
        raise InvalidInput(f"--by must be GHOST/MODEL, e.g. alice/gpt-x; got {by!r}")
    validate_ghost_name(by.split("/", 1)[0])
    trust_value = check_unit("trust", trust)
    stamp = iso(utc_now())

    def mutation(note: ParsedNote) -> tuple[dict[str, Any], str | None]:
        changes: dict[str, Any] = {"last_validated_at": stamp, "last_validated_by": by, "updated": stamp}
        if trust_value is not None:
            changes["trust_score"] = trust_value
        return changes, None

    result, fm = mutate(app, ref, mutation, expect_version=expect_version)
    return ValidateResult(result.id, result.version, stamp, fm.get("trust_score"), result.path)


def comment_note(app: App, ref: str, text: str, model: str | None, expect_version: int | None = None) -> CommentResult:
    if not text.strip():
        raise InvalidInput("comment text must not be empty")
    stamp = iso(utc_now())
    entry = {"at": stamp, "by": app.ghost or "human", "model": model, "text": text}

    def mutation(note: ParsedNote) -> tuple[dict[str, Any], str | None]:
        existing = note.front_matter.get("comments")
        comments = list(existing) if isinstance(existing, list) else []
        comments.append(entry)
        return {"comments": comments, "updated": stamp}, None

    result, fm = mutate(app, ref, mutation, expect_version=expect_version)
    return CommentResult(result.id, result.version, fm.get("comments", []), result.path)


def delete_note(app: App, ref: str, expect_version: int | None = None) -> DeleteResult:
    app.catch_up()
    rec = find_note(app.db, ref, app.can_write)
    expected = None
    if expect_version is not None:
        loaded = load_for_write(app, rec.path)
        check_expected(
            rec.path, loaded.note.version, version_of(app, rec, loaded.note, loaded.stamp.sha256), expect_version
        )
        expected = loaded.stamp
    sources = app.db.by_paths({e.src for e in app.db.edges_to(rec.path) if e.kind != "parent" and e.src != rec.path})
    linked_from = [
        _linked(src) for _, src in sorted(sources.items()) if src.status == "note" and app.can_read(location_of(src))
    ]
    trashed = store.trash_file(app.root, rec.path, expected)
    app.wrote([rec.path])
    # Links to it now dangle: say where, so they can be fixed or the note restored.
    return DeleteResult(rec.id, rec.path, trashed, linked_from)


# --- read -------------------------------------------------------------------------------------


def _linked(rec: NoteRecord) -> LinkedNote:
    return LinkedNote(rec.id, rec.title, rec.path, rec.type, rec.scope)


def links_of(app: App, path: str) -> Links:
    """The links of the note at `path`, both ways, resolved among the notes the caller may
    see (services/reader_view.py): a link whose target the caller cannot see points where it
    would if that note did not exist, or dangles."""
    from vaultmem.index.statedb import Edge

    db = app.db
    reader = app.reader_links()
    out_edges = [replace(e, dst=reader.dst(e)) for e in db.edges_from(path)]
    in_edges = [e for e in db.edges_to(path) if reader.dst(e) == path]
    in_edges += [Edge(src, path, kind, "") for src, kind in reader.arrived.get(path, ())]
    # By source: the db's row order follows when each link was last resolved, which a
    # change to a hidden note can shift (the links out keep the order they are written in).
    in_edges.sort(key=lambda e: (e.src, e.kind))
    related = db.by_paths({e.dst for e in out_edges if e.dst} | {e.src for e in in_edges})

    def visible(other_path: str | None) -> NoteRecord | None:
        other = related.get(other_path) if other_path is not None else None
        return other if other is not None and other.status == "note" and app.can_read(location_of(other)) else None

    links = Links(out=[], in_=[])
    seen: set[tuple[str, str]] = set()
    for edge in out_edges:
        target = visible(edge.dst)
        if edge.kind == "parent":
            links = replace(links, parent=_linked(target) if target else None)
        elif target is None:
            links.dangling.append(Dangling(edge.target, edge.heading))
        elif ("out", target.path) not in seen:
            seen.add(("out", target.path))
            links.out.append(LinkOut(_linked(target), edge.kind, edge.heading, edge.label))
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
            links.children.append(_linked(source))
        else:
            links.in_.append(LinkIn(_linked(source), edge.kind, edge.heading or None, edge.label or None))
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
    if "version" in fm or version:
        note["version"] = version  # hand edits counted: what --expect-version compares with
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
        comments=fm["comments"] if isinstance(fm.get("comments"), list) else [],
        raw=data.decode("utf-8", errors="replace") if raw else None,
        part=part or None,
    )
