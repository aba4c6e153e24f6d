"""Wikilinks vaultmem resolves that Obsidian does not: `lint` names them, `lint --fix`
writes them by file name, in the body and in properties (`related: "[[Wine: basics]]"`,
vault/property_links.py).

vaultmem resolves a target by id, path, file name, title or alias (SPEC §2); Obsidian by
path and file name only. A link a person typed by a title that is not the file name
(`[[Wine: basics]]` for `Wine basics.md`, a title changed by `note update --title`), a
bare alias or an id works in vaultmem and opens nothing in Obsidian. vaultmem's own writes
store such links by file name (services/notes.py file_linked_text); these are the ones
written outside it."""

from __future__ import annotations

from collections.abc import Callable

from vaultmem.config import VaultConfig
from vaultmem.errors import Conflict, InvalidInput, NotFound
from vaultmem.index.resolve import NameEntry, Resolver, name_key
from vaultmem.models import Problem
from vaultmem.services.app import App
from vaultmem.services.moves import hash_kept
from vaultmem.services.revisions import holds_unseen_words, record_written, version_of
from vaultmem.vault import store
from vaultmem.vault.frontmatter import rewrite_document
from vaultmem.vault.layout import Location, classify, seen_by_readers_of
from vaultmem.vault.markdown import Link
from vaultmem.vault.note import ParsedNote, parse_note
from vaultmem.vault.property_links import OWN_NAMES, file_linked_properties, property_links
from vaultmem.vault.relink import file_linked, wiki_target

CODE = "not_a_file_name"


def _links(note: ParsedNote) -> list[Link]:
    """The links `--fix` writes: the body's, then its properties' (`parent: "[[X]]"` too, a
    link to Obsidian; a note's own names are left as given, property_links.OWN_NAMES)."""
    return [*note.links, *property_links(note.front_matter, leave_out=OWN_NAMES)]


def _misses(note: ParsedNote, resolver: Resolver, files: Resolver) -> list[tuple[str, str, str | None]]:
    """(target, the note vaultmem resolves it to, the note Obsidian does or None), once each."""
    out: dict[str, tuple[str, str, str | None]] = {}
    for link in _links(note):  # the body's and the properties'
        if link.kind == "markdown" or name_key(link.target) in out:
            continue
        dst = resolver.resolve(link.target, note.relpath)
        there = files.resolve(link.target, note.relpath)
        if dst is not None and there != dst:
            out[name_key(link.target)] = (link.target, dst, there)
    return list(out.values())


def not_file_named(
    notes: list[ParsedNote], resolver: Resolver, config: VaultConfig, operator: bool = True
) -> list[Problem]:
    """A warning for each such link of `notes` (resolved among `notes`, what the linter
    sees). `operator`: the linter sees the whole vault (a person), whose `--fix` writes them."""
    files = Resolver(NameEntry(n.relpath, "", "") for n in notes)
    problems = []
    for note in notes:
        for target, dst, there in _misses(note, resolver, files):
            is_id = resolver.is_id(target)
            written = wiki_target(dst, False) if is_id else f"{wiki_target(dst, False)}|{target}"
            opens = f"opens {there}" if there else "finds no note" if operator else "finds none you may see"
            who = "`lint --fix`" if operator else "a person's `lint --fix`"
            fix = (
                f"{who} writes [[{written}]]"
                if seen_by_readers_of(note.location, classify(dst), config)
                else "`lint --fix` leaves it: its path would show readers of this note one they may not see"
            )
            message = (
                f"link target {target!r} resolves to {dst} by its id, title or alias; Obsidian links by "
                f"file name and {opens}: {fix}"
            )
            problems.append(Problem(note.relpath, "warning", CODE, message))
    return problems


def link_by_file_names(
    app: App, notes: list[ParsedNote], editable: Callable[[ParsedNote], bool]
) -> tuple[list[dict[str, str]], list[ParsedNote]]:
    """`lint --fix`: each such link of a note the caller may write, written by the note's
    vault path (file_linked), its text shown as before. Only notes every reader of the
    linking note may see take part: a shared note's `[[alice's title]]` never becomes the
    path of alice's private note. Returns (the `fixed` entries, `notes` as they are now).
    A ghost fixes none: which note Obsidian opens by a file name may be one it cannot see,
    and it would point a person's link elsewhere (nor may it learn that from the fix)."""
    if app.ghost is not None:
        return [], notes
    names = [(n.relpath, n.id, n.title, n.aliases) for n in notes]
    everyone = Resolver(NameEntry(*n) for n in names)
    all_files = Resolver(NameEntry(n[0], "", "") for n in names)
    by_readers: dict[Location, tuple[Resolver, Resolver]] = {}
    fixed: list[dict[str, str]] = []
    now: dict[str, ParsedNote] = {}
    for note in notes:
        if (app.ghost is not None and not app.can_write(note.location)) or not note.fm_ok or not editable(note):
            continue
        if not _misses(note, everyone, all_files):
            continue
        where = note.location
        if where not in by_readers:
            safe = [n for n in names if seen_by_readers_of(where, classify(n[0]), app.config)]
            by_readers[where] = (Resolver(NameEntry(*n) for n in safe), Resolver(NameEntry(n[0], "", "") for n in safe))
        new_data = _rewritten(app, note, *by_readers[where])
        if new_data is None:
            continue
        fixed.append({"path": note.relpath, "links": "by file name, as Obsidian resolves them"})
        parsed = parse_note(note.relpath, new_data)
        if isinstance(parsed, ParsedNote):
            now[note.relpath] = parsed
    return fixed, [now.get(n.relpath, n) for n in notes]


def _rewritten(app: App, note: ParsedNote, resolver: Resolver, files: Resolver) -> bytes | None:
    """Write the note's links by file name and record the write, or None when nothing
    changes or the file changed since it was read. A note as vaultmem wrote it gets its
    `hash` and `version` anew, as a move's rewrite does (moves.hash_kept): a link vaultmem
    rewrote is no person's word."""
    path = note.relpath
    try:
        data, stamp = store.read_file(app.root, path)
        text = data.decode("utf-8")
        new_text = rewrite_document(
            text,
            lambda fm: file_linked_properties(fm, path, resolver.resolve, files.resolve, resolver.is_id),
            lambda body: file_linked(body, path, resolver.resolve, files.resolve, resolver.is_id),
        )
        if new_text is None or new_text == text:
            return None
        before = parse_note(path, data)
        rec = app.db.get(path)
        version = version_of(app, rec, before, stamp.sha256) if rec and isinstance(before, ParsedNote) else None
        if version is not None and isinstance(before, ParsedNote) and not holds_unseen_words(before, version):
            new_data = hash_kept(path, before, new_text, version + 1).encode("utf-8")
            store.replace_file(app.root, path, new_data, stamp)
            record_written(app, path, new_data, version + 1, was=stamp.sha256)
        else:
            new_data = new_text.encode("utf-8")
            store.replace_file(app.root, path, new_data, stamp)
            app.wrote([path], was={path: stamp.sha256})  # a person's words stay theirs (review.writers)
    except (Conflict, UnicodeDecodeError, NotFound, InvalidInput):
        return None  # changed meanwhile, or too large once fixed: left as it is
    return new_data
