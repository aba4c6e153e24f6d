"""Moving and renaming notes with every link to them kept working (`note move`, `fix-names`).

Obsidian's "automatically update internal links": a note gets a new path, its id stays, and
every link that pointed at it is rewritten to point at the new path — only the link target
changes. A link that already names the note in a way that still resolves (a title that is
now the file name, an id) is left alone, so `git diff` shows exactly the renames and the
link targets that had to change.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from vaultmem.clock import note_time
from vaultmem.clock import now as utc_now
from vaultmem.errors import Conflict, InvalidInput, NotFound, VaultmemError
from vaultmem.index.catalog import names_met_by
from vaultmem.index.resolve import NameEntry, name_key
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import Move, MoveReport
from vaultmem.services.app import App, naming
from vaultmem.services.lookup import find_note, location_of
from vaultmem.services.notes import NotePatch, ensure_unique_title, update_note
from vaultmem.services.relinker import Relinker
from vaultmem.services.revisions import holds_unseen_words, record_written, version_of
from vaultmem.vault import store
from vaultmem.vault.frontmatter import rewrite_document
from vaultmem.vault.layout import classify, is_note_path, reader_token, seen_by_readers_of
from vaultmem.vault.note import ParsedNote, Unreadable, body_hash, file_stem, parse_note
from vaultmem.vault.writer import edit_note_text

# --- moving files ---------------------------------------------------------------------------


def _linking_sources(
    app: App, moves: Mapping[str, str], operator: bool, titles: Mapping[str, tuple[str, str]]
) -> list[str]:
    """Notes whose links may need rewriting: the moved notes themselves (their relative
    markdown links), and those linking to a moved note — as the whole vault resolves the
    links (for the notes the mover cannot see) and as the mover does (index/views.py):
    a link of a note it sees may reach the moved note only in its view, because the note it
    reaches among all notes is hidden from it. Missing those would tell it so. A child
    counts: its `parent` may be a link (`parent: "[[Note]]"`), which Obsidian rewrites."""
    sources = set(moves)
    reader = None if operator else app.reader_links()
    for old in moves:
        sources.update(e.src for e in app.db.edges_to(old))
        if reader is not None:
            sources.update(src for src, _kind in reader.arrived.get(old, ()))
    # And, in one pass over the link texts: those with a link a moved note may now take from
    # the note it reaches (its new file name nearer to them: `[[X]]` beside a note moved to
    # `X.md`, Relinker._shadowed), and those linking by a retitled note's old title (or its
    # new one) where _retitle_reaches.
    moved = names_met_by(NameEntry(new, "", "") for new in moves.values())
    retitled = names_met_by(NameEntry(p, "", t) for p, both in titles.items() for t in both)
    for src, target in app.db.edge_targets():
        if moved(target) or (titles and retitled(target) and _retitle_reaches(app, moves, operator, src)):
            sources.add(src)
    return sorted(sources)


def _retitle_reaches(app: App, moves: Mapping[str, str], operator: bool, source: str) -> bool:
    """Whether the links of `source` by a retitled note's old title follow the note: when it
    moves too, in every note, as every link to a moved note (plan_moves); when only its title
    changes, in the notes the caller may write, as an edit reaches: a title is vaultmem's
    name for a note, no file name Obsidian keeps, and another's private link is theirs."""
    return operator or bool(moves) or app.can_write(classify(source))


def _rewritten(app: App, relinker: Relinker, source: str) -> tuple[str, str] | None:
    """(old text, new text) of a note whose links change, or None."""
    try:
        data, _ = store.read_file(app.root, source)
    except (NotFound, InvalidInput):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None  # never rewrite bytes we cannot read back exactly
    new_text = rewrite_document(
        text, lambda fm: relinker.rewrite_properties(source, fm), lambda body: relinker.rewrite(source, body)
    )
    return None if new_text is None or new_text == text else (text, new_text)


@dataclass(frozen=True, slots=True)
class MovePlan:
    """What a move will write, all decided before anything is written."""

    moves: Mapping[str, str]  # old path -> new path
    operator: bool
    edits: dict[str, tuple[str, str]]  # linking note (its old path) -> (text read, text relinked)
    skipped: list[dict[str, str]]  # notes left as they are, only those the caller may see


TOO_LARGE = "its links rewritten, it would be over the note size limit; links left as they were"
GONE = "gone before its links were updated"
CHANGED = "changed on disk meanwhile; links left as they were"
UNWRITABLE = "could not be written; links left as they were"


def plan_moves(
    app: App, moves: Mapping[str, str], operator: bool = False, titles: Mapping[str, tuple[str, str]] | None = None
) -> MovePlan:
    """Each note whose links a move changes, with its new text. A moved note that would be
    too large after its own links are rewritten refuses the move here, before any file
    moves (the caller may write it, so naming it tells nothing); any other note that would
    be is left as it is, as one changed on disk is (carry_out): one linking note never
    stops a move, nor names a note the caller may not see. `titles`: path -> (old title,
    new title) of a note retitled: the links that reached it by its old title follow it."""
    # Links are the vault's integrity, as Obsidian keeps them: every link to a moved note is
    # rewritten, in every note, whoever moves it. What the caller is told follows SPEC §3:
    # only the notes it may see. Each note is relinked among the notes every one of its
    # readers can see (its owner's view for a private note, what everyone sees for a shared
    # one) and, in a note the mover can see, among the notes the mover can see too (with full
    # paths): its new text never depends on a note hidden from a reader or from the mover.
    # A retitled note's links by its old title are rewritten where _retitle_reaches: in
    # another note, its old title resolves no more before than after.
    titles = titles or {}
    retitled = {p: new for p, (_old, new) in titles.items()}
    names = app.db.names()
    relinkers: dict[tuple[str, bool, bool], Relinker] = {}

    def names_ok(source: str, dst: str) -> bool:
        return seen_by_readers_of(classify(source), classify(dst), app.config)

    def relinker_for(source: str) -> Relinker:
        where = classify(source)
        mover_view = not operator and _visible(app, source)
        old = 0 if _retitle_reaches(app, moves, operator, source) else 1  # the title it knew
        key = (reader_token(where), mover_view, old == 0)
        if key not in relinkers:
            kept = [
                (p, i, titles[p][old] if p in titles else t, a)
                for p, i, t, a in names
                for loc in [classify(p)]
                if seen_by_readers_of(where, loc, app.config) and (not mover_view or app.can_read(loc))
            ]
            relinkers[key] = Relinker.build(kept, moves, short=operator, names_ok=names_ok, titles=retitled)
        return relinkers[key]

    plan = MovePlan(moves, operator, {}, [])
    for source in _linking_sources(app, moves, operator, titles):
        changed = _rewritten(app, relinker_for(source), source)
        if changed is None:
            continue
        if _fits(changed[1]):
            plan.edits[source] = changed
        elif source in moves:
            raise InvalidInput(
                f"{source}: with its links rewritten the note would be over {store.MAX_NOTE_BYTES} bytes, "
                "the most a note may be; nothing moved"
            )
        elif operator or _visible(app, source):
            plan.skipped.append({"path": source, "reason": TOO_LARGE})
    return plan


def _fits(text: str) -> bool:
    """Whether a note's new text is one the store writes (store.check_size: its size, no
    NUL). Its refusal is not passed on: it names the note, maybe one hidden from the caller."""
    try:
        store.check_size("", text.encode("utf-8"))
    except InvalidInput:
        return False
    return True


def apply_moves(
    app: App,
    moves: Mapping[str, str],
    *,
    dry_run: bool,
    operator: bool = False,
    titles: Mapping[str, tuple[str, str]] | None = None,
) -> MoveReport:
    """Move notes (old path -> new path) and rewrite the links that pointed at them."""
    return carry_out(app, plan_moves(app, moves, operator, titles), dry_run=dry_run)


def carry_out(app: App, plan: MovePlan, *, dry_run: bool) -> MoveReport:
    """Files move first (a move of unchanged content keeps ids, versions and vectors); then the
    notes whose links changed are rewritten in place, each only if unchanged since read. A
    note that cannot be is left as it is and the rest go on: once a file has moved, a
    stop would leave links to it broken in the notes not yet rewritten."""
    moves, operator = plan.moves, plan.operator
    if not moves and not plan.edits:
        return MoveReport([], [], [], dry_run)
    rows = app.db.by_paths(moves)
    report = MoveReport(
        moves=[Move(rows[old].id if old in rows else None, old, new) for old, new in moves.items()],
        links_updated=sorted(moves.get(p, p) for p in plan.edits if operator or _visible(app, p)),
        skipped=list(plan.skipped),
        dry_run=dry_run,
    )
    if dry_run:
        return report
    if moves:  # none for a retitle (services/retitles.py): only links change
        found = {old: _sha256(app, old) for old in moves}  # what each move found, for the journal
        for old, new in moves.items():
            store.move_file(app.root, old, new)
        app.wrote(list(moves) + list(moves.values()), was={old: sha for old, sha in found.items() if sha})
        app.catch_up()
    for source, (before, after) in plan.edits.items():
        path = moves.get(source, source)
        tell = operator or _visible(app, source)
        reason = _relink_one(app, path, before, after, upkeep=not tell)
        if reason is not None and tell:
            report.skipped.append({"path": path, "reason": reason})
            report.links_updated.remove(path)
    app.catch_up()
    return report


def _relink_one(app: App, path: str, before: str, after: str, *, upkeep: bool) -> str | None:
    """Write one linking note's rewritten links; why it was left as it was, or None. No
    error leaves here: its message would name the note, maybe to a caller who may not see it."""
    try:
        data, stamp = store.read_file(app.root, path)
    except (NotFound, InvalidInput):
        return GONE
    if data.decode("utf-8", errors="replace") != before:
        return CHANGED
    rec = app.db.get(path)
    parsed = parse_note(path, data)
    version = version_of(app, rec, parsed, stamp.sha256) if rec and isinstance(parsed, ParsedNote) else 0
    # a field a person changed by hand stays unseen: the version in the file stays behind
    unseen = not isinstance(parsed, ParsedNote) or holds_unseen_words(parsed, version)
    new_text = after if unseen else hash_kept(path, parsed, after, version + 1)
    if not _fits(new_text):  # its new `version` one digit longer, on a note at the limit
        return TOO_LARGE
    new_data = new_text.encode("utf-8")
    try:
        store.replace_file(app.root, path, new_data, stamp)
    except Conflict:
        return CHANGED
    except (VaultmemError, OSError):  # a symlink out of the vault, a read-only file, a full disk
        return UNWRITABLE
    # A changed body is a new version (what an agent read before has other links).
    record_written(app, path, new_data, version + 1, upkeep=upkeep, was=stamp.sha256)
    return None


def _sha256(app: App, path: str) -> str | None:
    try:
        return store.read_file(app.root, path)[1].sha256
    except (VaultmemError, OSError):
        return None


def hash_kept(path: str, before: ParsedNote | Unreadable, after: str, version: int) -> str:
    """`after` (links rewritten) with its `hash` and `version` recorded anew when the body
    before was as vaultmem wrote it: a link vaultmem rewrote is no person's word, and a
    stale hash, or a version in the file behind the note's, would make the note look edited
    by hand (services/revisions.py, what an agent may replace)."""
    if not isinstance(before, ParsedNote) or not before.body_as_written:
        return after
    now = parse_note(path, after.encode("utf-8"))
    if not isinstance(now, ParsedNote) or not now.fm_ok or now.problems:
        return after
    changes = {"hash": body_hash(now.body), "version": version}
    return edit_note_text(after, now.front_matter, changes).text


def _visible(app: App, path: str) -> bool:
    return app.can_read(classify(path))


# --- note move ------------------------------------------------------------------------------


def _target_path(app: App, rec: NoteRecord, target: str) -> str:
    """`TARGET` as `mv` reads it: an existing folder or one ending in `/` keeps the file
    name; a name without `/` renames in place; anything else is a new vault path."""
    raw = target.strip()
    if not raw:
        raise InvalidInput("target must not be empty")
    name = rec.path.rsplit("/", 1)[-1]
    folder = rec.path.rsplit("/", 1)[0] if "/" in rec.path else ""
    if "/" in raw:
        # Whether a folder exists is looked at only where the caller may write, and a
        # refusal names the target as given: else `private/bob/<guess>` would answer
        # whether bob has that folder (a hidden folder must answer as an absent one).
        clean = store.check_relpath(raw)
        places = [classify(store.disk_prefix(app.root, p)) for p in (f"{clean}/{name}", f"{clean}.md")]
        if not any(loc.placed and app.can_write(loc) for loc in places):
            raise InvalidInput(f"cannot move a note to {raw!r}: not a folder you may write")
    if raw.endswith("/") or (app.root / raw).is_dir():
        new = f"{store.check_relpath(raw)}/{name}"
    elif "/" not in raw:
        stem = raw[:-3] if raw.lower().endswith(".md") else raw
        if store.name_for_title(stem) != stem:
            raise InvalidInput(f"{raw!r} is not a file name Obsidian accepts; try {store.name_for_title(stem)!r}")
        new = f"{folder}/{stem}.md" if folder else f"{stem}.md"
    else:
        new = store.check_relpath(raw if raw.lower().endswith(".md") else raw + ".md")
    # The folders that exist, as the disk spells them: on a case-insensitive disk
    # `Private/alice/` is alice's folder, and is refused to bob as hers.
    new = store.disk_prefix(app.root, new)
    if not is_note_path(new):
        raise InvalidInput(f"{new!r} is not a note path (hidden or ignored folder, or not .md)")
    parts = new.split("/")
    for depth, part in enumerate(parts[:-1], start=1):
        # a new folder follows the rule of a new file name (one already there is a person's)
        if store.name_for_title(part) != part and not (app.root / "/".join(parts[:depth])).is_dir():
            raise InvalidInput(f"folder {part!r} is not a name Obsidian accepts; try {store.name_for_title(part)!r}")
    stem = parts[-1][:-3]
    if store.name_for_title(stem) != stem and parts[-1] != rec.path.rsplit("/", 1)[-1]:  # a new name only
        raise InvalidInput(f"{stem!r} is not a file name Obsidian accepts; try {store.name_for_title(stem)!r}")
    return new


@naming
def move_note(app: App, ref: str, target: str, *, dry_run: bool = False) -> MoveReport:
    app.catch_up()
    rec = find_note(app.db, ref, app.can_write)
    new = _target_path(app, rec, target)
    if new == rec.path:
        raise InvalidInput(f"{rec.path} is already there")
    location = classify(new)
    if not app.can_write(location) or not location.placed:
        raise InvalidInput(f"cannot move a note to {new}: not a folder you may write")
    if location != location_of(rec):
        raise InvalidInput(
            f"{rec.path} and {new} have different readers ({location_of(rec).scope} → {location.scope}); "
            "moving between scopes would change who can see the note: create a new note there instead"
        )
    taken = app.root / new
    if taken.exists() and not os.path.samefile(app.root / rec.path, taken):
        raise Conflict(f"{new} already exists; nothing moved")
    old_stem, new_stem = file_stem(rec.path), file_stem(new)
    retitled = rec.title == old_stem and new_stem != old_stem and _titled_in_file(app, rec.path)
    if retitled:  # refused before anything moves, not after (a shared title is one note's)
        try:
            ensure_unique_title(app, new_stem, location.scope, exclude_path=rec.path)
        except Conflict as clash:
            raise Conflict(f"{clash.message}; nothing moved", **clash.details) from None
    plan = plan_moves(app, {rec.path: new})
    if retitled:
        _check_retitle(app, rec, plan, new_stem)
    report = carry_out(app, plan, dry_run=dry_run)
    if not dry_run and retitled:
        # Its title was its file name, as in Obsidian: a rename renames the note. A note
        # without a `title:` (a person's; one whose front matter is broken) takes its
        # title from the new name by itself: nothing to write, and no error after the move.
        update_note(app, new, NotePatch(title=new_stem))
    return report


def _check_retitle(app: App, rec: NoteRecord, plan: MovePlan, title: str) -> None:
    """Refuse, before anything moves, a rename whose retitle (update_note, after the move)
    would make the note too large: else the move would be done and the title not."""
    try:
        data, stamp = store.read_file(app.root, rec.path)
    except VaultmemError:
        return
    read = parse_note(rec.path, data)
    text = plan.edits[rec.path][1] if rec.path in plan.edits else data.decode("utf-8", errors="replace")
    now = parse_note(rec.path, text.encode("utf-8"))
    if not isinstance(read, ParsedNote) or not isinstance(now, ParsedNote) or not now.fm_ok:
        return
    # the changes update_note makes (services/revisions.py mutate), a version more for the relink
    version = version_of(app, rec, read, stamp.sha256) + (2 if rec.path in plan.edits else 1)
    changes = {"title": title, "updated": note_time(utc_now()), "version": version}
    if not _fits(edit_note_text(text, now.front_matter, changes).text):
        raise InvalidInput(
            f"{rec.path}: retitled {title!r} the note would be over {store.MAX_NOTE_BYTES} bytes, "
            "the most a note may be; nothing moved"
        )


def _titled_in_file(app: App, path: str) -> bool:
    """Whether the note's front matter (readable, UTF-8) sets its title."""
    try:
        parsed = parse_note(path, store.read_file(app.root, path)[0])
    except VaultmemError:
        return False
    return isinstance(parsed, ParsedNote) and parsed.fm_ok and not parsed.problems and "title" in parsed.front_matter


# --- fix-names --------------------------------------------------------------------------------

_LEGACY_PREFIX = re.compile(r"^(?:\d{8}T\d{6}Z-|\d{4}-\d\d-\d\d-)")
_LEGACY_SUFFIX = re.compile(r"-\d{1,3}$")
_LEGACY_UNSAFE = re.compile(r"[^\w\-]+", re.UNICODE)


def legacy_slug(title: str) -> str:
    """The file stem vaultmem gave a title before names followed Obsidian: lower-case words
    joined by hyphens. Kept only to recognise those files."""
    import unicodedata

    text = unicodedata.normalize("NFKC", title)
    text = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)
    slug = _LEGACY_UNSAFE.sub("-", text.lower()).strip("-_.")
    return re.sub(r"-{2,}", "-", slug) or "note"


def slug_named(rec: NoteRecord) -> bool:
    """Whether a note's file name is the old slug of its title (`wine-basics.md`,
    `wine-basics-2.md`, `2026-11-21-wine-basics.md`, `20261121T100000Z-wine.md`)."""
    stem = rec.path.rsplit("/", 1)[-1][:-3]
    bare = _LEGACY_SUFFIX.sub("", _LEGACY_PREFIX.sub("", stem))
    slug = legacy_slug(rec.title or "")
    return (
        stem == slug
        or bare == slug
        or (bool(bare) and slug.startswith(bare) and _LEGACY_PREFIX.match(stem) is not None)
    )


def plan_names(records: Iterable[NoteRecord], existing: Iterable[str], every: bool) -> dict[str, str]:
    """Pure: old path -> new path for notes to be named after their titles. `every` renames
    every note whose title differs from its file name, else only old slug names. New names
    are unique in their folder in any letter case (" 1", " 2" as Obsidian numbers them)."""
    taken = {name_key(p) for p in existing}
    plan: dict[str, str] = {}
    # Shorter names first: `wine-basics.md` gets `Wine basics.md` before `wine-basics-2.md` does.
    for rec in sorted(records, key=lambda r: (len(r.path), r.path)):
        if not rec.is_note or not rec.title:
            continue
        folder, _, name = rec.path.rpartition("/")
        stem = store.name_for_title(rec.title)
        if name[:-3] == stem or not (every or slug_named(rec)):
            continue
        for candidate in store.candidate_names(stem):
            new = f"{folder}/{candidate}" if folder else candidate
            if name_key(new) == name_key(rec.path):
                break  # only the letter case differs: a rename there is not worth a collision risk
            if name_key(new) not in taken:
                taken.add(name_key(new))
                plan[rec.path] = new
                break
    return plan


def fix_names(app: App, *, dry_run: bool = False, every: bool = False) -> MoveReport:
    """Rename notes to their titles' file names (Obsidian's), links rewritten to match. An
    operator command over the whole vault, as lint and index are (paths, never contents);
    with a ghost, only the notes that ghost may write are renamed and reported."""
    app.catch_up()
    records = [r for r in app.db.notes() if r.status == "note"]
    existing = [r.path for r in records]
    if app.ghost is not None:
        records = [r for r in records if app.can_write(location_of(r))]
    plan = plan_names(records, existing, every)
    return apply_moves(app, plan, dry_run=dry_run, operator=app.ghost is None)
