"""Use cases that create and change single notes (memory_note_* and memory_save): where a new
note goes and what it is named, and each patch, validation, comment and delete as one
read-modify-write (services/revisions.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import datetime, timedelta
from typing import Any

from vaultmem.clock import note_time
from vaultmem.clock import now as utc_now
from vaultmem.config import validate_ghost_name
from vaultmem.errors import Conflict, InvalidInput, NotFound, VaultmemError
from vaultmem.index.resolve import NameEntry, Resolver
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import (
    CommentResult,
    DeleteResult,
    ValidateResult,
    WriteResult,
)
from vaultmem.services.app import App, naming
from vaultmem.services.checks import (
    NOT_REMOVABLE,
    WRITABLE_SCOPES,
    check_project,
    check_set_key,
    check_tags,
    check_title,
    check_type,
    check_unit,
    checked_set,
    parse_set,
    require_ghost,
)
from vaultmem.services.documents import edges_in
from vaultmem.services.lookup import find_note, linked_note, location_of
from vaultmem.services.revisions import check_expected, load_for_write, mutate, record_written, version_of
from vaultmem.vault import store
from vaultmem.vault.comments import Comment, as_property
from vaultmem.vault.comments import read as comments_of
from vaultmem.vault.ids import new_ulid
from vaultmem.vault.layout import Location, classify, seen_by_readers_of
from vaultmem.vault.markdown import normalize_tag
from vaultmem.vault.note import ParsedNote, body_hash
from vaultmem.vault.property_links import OWN_NAMES, file_linked_value, property_links
from vaultmem.vault.relink import Resolve, file_linked
from vaultmem.vault.secrets import refuse_secrets
from vaultmem.vault.writer import (
    REMOVE,
    append_text,
    new_note_text,
    normalize_body,
    replace_section,
)

# --- placement ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placement:
    folder: str
    location: Location


def placement(app: App, scope: str, project: str | None, *, today: datetime | None = None) -> Placement:
    if project and scope != "project":
        # not dropped in silence: a caller who named a project (members only, perhaps) would
        # find the note where its scope puts it, seen by whoever may read that
        raise InvalidInput(f"a project (--project {project!r}) goes with --scope project, not --scope {scope}")
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


class FileNames:
    """How one note's write resolves links: (vaultmem's resolution, Obsidian's, which
    targets are ids) among the notes the writer can see and every reader of `source` can
    see, so a rewrite never hints at a hidden one: to its writer, or, through the note's
    text, to its readers (alice's `[[<id>]]` of her private note stays as written in a shared
    note). Built on first use, once for the body and the properties of a write."""

    def __init__(self, app: App, source: str) -> None:
        self.app, self.source = app, source
        self._built: tuple[Resolve, Resolve, Callable[[str], bool]] | None = None

    def get(self) -> tuple[Resolve, Resolve, Callable[[str], bool]]:
        if self._built is None:
            app, where = self.app, classify(self.source)
            names = [
                n
                for n in app.db.names()
                for loc in [classify(n[0])]
                if app.can_read(loc) and seen_by_readers_of(where, loc, app.config)
            ]
            resolver = Resolver(NameEntry(*n) for n in names)
            files = Resolver(NameEntry(n[0], "", "") for n in names)
            self._built = (resolver.resolve, files.resolve, resolver.is_id)
        return self._built


def file_linked_text(names: FileNames, text: str) -> str:
    """Wikilinks in text vaultmem writes, made to resolve by file name (Obsidian's rule) to
    the note vaultmem resolves them to: `[[Wine: basics]]` → `[[Wine basics|Wine: basics]]`."""
    if "[[" not in text:
        return text
    return file_linked(text, names.source, *names.get())


def file_linked_fields(names: FileNames, fields: Mapping[str, Any]) -> dict[str, Any]:
    """Property values vaultmem writes, their links (`related: "[[Wine: basics]]"`, an item
    of a list) written by file name as the body's are (file_linked_text). A note's own names
    stay as given (property_links.OWN_NAMES)."""
    out = dict(fields)
    if not property_links(out, leave_out=OWN_NAMES):
        return out
    for key, value in out.items():
        if key not in OWN_NAMES:
            out[key] = file_linked_value(value, names.source, *names.get())
    return out


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
    allow_secret: bool = False  # --allow-secret: store text with a detected secret (vault/secrets.py)
    # the body is words a person wrote outside vaultmem (a capture made in Obsidian): no
    # `hash`, so no agent replaces them unread
    persons_words: bool = False
    # False: `stem.md` itself or nothing (FileExistsError), never `stem 1.md` (a diary's day)
    numbered: bool = True


def _resolve_parent(app: App, ref: str) -> NoteRecord:
    try:
        return find_note(app.db, ref, app.can_read)
    except NotFound:
        raise NotFound(f"parent {ref!r} not found") from None


def _beside_parent(app: App, folder: str, ref: str | None) -> tuple[str, str | None]:
    """(the new note's folder, its parent's id): children sit beside their parent when it
    lives in the same scope folder."""
    if not ref:
        return folder, None
    parent = _resolve_parent(app, ref)
    parent_folder = parent.path.rsplit("/", 1)[0] if "/" in parent.path else ""
    if parent_folder == folder or parent_folder.startswith(folder + "/"):
        folder = parent_folder
    return folder, parent.id


@naming
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
    folder, parent_id = _beside_parent(app, place.folder, spec.parent)
    ensure_unique_title(app, title, place.location.scope)
    now = utc_now() if spec.created is None else spec.created
    stem = store.name_for_title(title)
    names = FileNames(app, f"{folder}/{stem}.md")
    body = file_linked_text(names, spec.body)
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
        "created": note_time(now),
        "updated": note_time(now),
        "expires": note_time(now + timedelta(days=spec.ttl_days)) if spec.ttl_days is not None else None,
        "version": 1,
    }
    if not spec.persons_words:  # see vault/note.py as_written
        fields["hash"] = body_hash(normalize_body(body))
    if spec.extra:
        fields.update({k: v for k, v in spec.extra.items() if k not in fields})
    fields = file_linked_fields(names, fields)
    text = new_note_text(fields, body)
    refuse_secrets(text, what="the note", allow=spec.allow_secret)
    data = text.encode("utf-8")
    if spec.numbered:
        relpath = store.create_unique(app.root, folder, stem, data)
    else:
        relpath = f"{folder}/{stem}.md"
        store.create_file(app.root, relpath, data)
    record_written(app, relpath, data, 1)
    return WriteResult(fields["id"], relpath, 1)


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
        """Whether it writes over what is there (not only adds to it: append, new tags)."""
        return bool(self.body is not None or self.sets or self.fields or self.title is not None or self.remove_tags)


MAX_SETS = 200  # front matter is edited key by key: 100,000 keys took one update 115 s


def update_note(
    app: App,
    ref: str,
    patch: NotePatch,
    expect_version: int | None = None,
    *,
    refuse_unseen_edits: bool = False,
    allow_secret: bool = False,
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
    if len(patch.sets) + len(patch.fields) > MAX_SETS:
        raise InvalidInput(f"at most {MAX_SETS} fields set in one update, not {len(patch.sets) + len(patch.fields)}")
    sets = [parse_set(s) for s in patch.sets] + [
        (check_set_key(k), "" if v is None else v) for k, v in patch.fields.items()
    ]
    title = check_title(patch.title) if patch.title is not None else None
    add_tags = check_tags(patch.add_tags)
    remove = {normalize_tag(t).lower() for t in patch.remove_tags}
    section_found: list[bool] = []

    def mutation(note: ParsedNote) -> tuple[dict[str, Any], str | None]:
        changes: dict[str, Any] = {}
        names = FileNames(app, note.relpath)
        for key, value in sets:
            if (value == "" or value is None) and key not in NOT_REMOVABLE:
                changes[key] = REMOVE
                continue
            changes[key] = checked_set(app, note, key, value)
        # The values this command brings, as its body text (below): the rest stay as written.
        changes = file_linked_fields(names, changes)
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
            section = file_linked_text(names, patch.body)
            new_body, found = replace_section(note.body, patch.replace_section, section)
            section_found.append(found)
        elif patch.append is not None:
            new_body = append_text(note.body, file_linked_text(names, patch.append))
        elif patch.body is not None:
            new_body = file_linked_text(names, patch.body)
        return changes, new_body

    guard = refuse_unseen_edits and patch.replaces_text
    result, _ = mutate(
        app,
        ref,
        mutation,
        expect_version=expect_version,
        refuse_unseen_edits=guard,
        unseen_caller=refuse_unseen_edits,
        allow_secret=allow_secret,
        addition=not patch.replaces_text,
    )
    if section_found and not section_found[0]:
        return WriteResult(result.id, result.path, result.version, {"section_created": True})
    return result


def validate_note(
    app: App,
    ref: str,
    by: str,
    trust: float | None,
    expect_version: int | None = None,
    *,
    refuse_unseen_edits: bool = False,
) -> ValidateResult:
    """`refuse_unseen_edits`: a caller that states no version may not set `trust_score` on a
    note holding an edit it has not read (a person's own rating among them), as `--set`."""
    if "/" not in by or not all(part.strip() for part in by.split("/", 1)):
        raise InvalidInput(f"--by must be GHOST/MODEL, e.g. alice/gpt-x; got {by!r}")
    validator = validate_ghost_name(by.split("/", 1)[0])
    if app.ghost is not None and validator != app.ghost:
        # who validates is the caller (SPEC §3: identity comes from the transport)
        raise InvalidInput(f"--by names the ghost that validates, {app.ghost}: {app.ghost}/MODEL; got {by!r}")
    trust_value = check_unit("trust", trust)
    stamp = note_time(utc_now())

    def mutation(note: ParsedNote) -> tuple[dict[str, Any], str | None]:
        changes: dict[str, Any] = {"last_validated_at": stamp, "last_validated_by": by, "updated": stamp}
        if trust_value is not None:
            changes["trust_score"] = trust_value
        return changes, None

    guard = refuse_unseen_edits and trust_value is not None
    result, fm = mutate(
        app, ref, mutation, expect_version=expect_version, refuse_unseen_edits=guard, unseen_caller=refuse_unseen_edits
    )
    return ValidateResult(result.id, result.version, stamp, fm.get("trust_score"), result.path)


def comment_note(
    app: App,
    ref: str,
    text: str,
    model: str | None,
    expect_version: int | None = None,
    *,
    allow_secret: bool = False,
    unseen_caller: bool = False,
) -> CommentResult:
    """`unseen_caller`: an agent that states no version it read (mutate)."""
    if not text.strip():
        raise InvalidInput("comment text must not be empty")
    stamp = note_time(utc_now())
    entry = Comment(stamp, app.ghost or app.person or "person", model, text)  # as review names them

    def mutation(note: ParsedNote) -> tuple[dict[str, Any], str | None]:
        # the whole list in the form Obsidian shows (vault/comments.py): an old nested one
        # is rewritten here, with the comment it gets
        comments = [*comments_of(note.front_matter.get("comments")), entry]
        return {"comments": as_property(comments), "updated": stamp}, None

    result, fm = mutate(
        app,
        ref,
        mutation,
        expect_version=expect_version,
        allow_secret=allow_secret,
        unseen_caller=unseen_caller,
        addition=True,
    )
    return CommentResult(result.id, result.version, [c.to_dict() for c in comments_of(fm.get("comments"))], result.path)


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
    sources = app.db.by_paths({e.src for e in edges_in(app, rec.path) if e.kind != "parent" and e.src != rec.path})
    linked_from = [
        linked_note(src)
        for _, src in sorted(sources.items())
        if src.status == "note" and app.can_read(location_of(src))
    ]
    try:  # what the delete found, for the journal: a person's words stay theirs (review.writers)
        found = (expected or store.read_file(app.root, rec.path)[1]).sha256
    except (VaultmemError, OSError):
        found = ""
    trashed = store.trash_file(app.root, rec.path, expected)
    app.wrote([rec.path], was={rec.path: found} if found else None)
    # Links to it now dangle: say where, so they can be fixed or the note restored.
    return DeleteResult(rec.id, rec.path, trashed, linked_from)
