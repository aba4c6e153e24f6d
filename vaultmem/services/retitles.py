"""`note update`, and what a new title brings: the links that reached the note by its old
title follow it, and a note named after its title, as Obsidian names notes, takes the new
title's file name (README: "`note update --title` renames a note named after its title").
"""

from __future__ import annotations

import os
import re

from vaultmem.errors import Conflict, InvalidInput, VaultmemError
from vaultmem.index.resolve import name_key
from vaultmem.models import WriteResult
from vaultmem.services.app import App, naming
from vaultmem.services.lookup import find_note
from vaultmem.services.moves import apply_moves, carry_out, plan_moves
from vaultmem.services.notes import NotePatch, update_note
from vaultmem.vault import store
from vaultmem.vault.note import ParsedNote, parse_note


def update_named(
    app: App, ref: str, patch: NotePatch, expect_version: int | None = None, **options: bool
) -> WriteResult:
    """`note update` (services/notes.py update_note), and a note named after its title
    renamed after its new one (follow_title): what the CLI and MCP run. A new title is
    checked free and taken in the naming turn (vault/writers.py)."""
    if patch.title is not None:
        return _retitled(app, ref, patch, expect_version, **options)
    return _updated(app, ref, patch, expect_version, **options)


@naming
def _retitled(app: App, ref: str, patch: NotePatch, expect_version: int | None = None, **options: bool) -> WriteResult:
    return _updated(app, ref, patch, expect_version, **options)


def _updated(app: App, ref: str, patch: NotePatch, expect_version: int | None, **options: bool) -> WriteResult:
    if patch.replaces_text:
        app.catch_up()
    old_title = find_note(app.db, ref, app.can_write).title if patch.replaces_text else None
    result = update_note(app, ref, patch, expect_version, **options)
    if old_title is None:
        return result
    try:
        now = parse_note(result.path, store.read_file(app.root, result.path)[0])
    except VaultmemError:
        return result
    if not isinstance(now, ParsedNote) or now.title == old_title:
        return result
    return follow_title(app, result, old_title, now.title)


def follow_title(app: App, result: WriteResult, old_title: str, new_title: str) -> WriteResult:
    """After a title change (`note update --title`): a note named after its title, as
    Obsidian names notes (the title is the file name), takes the new title's name, every
    link to it rewritten as `note move` does, so that `[[New title]]` typed in Obsidian
    finds it. A note named otherwise keeps its name; so does one whose new name is taken
    meanwhile (its title changed all the same). Either way the links that reached it by its
    old title (vaultmem's, not Obsidian's) are rewritten to reach it still."""
    titles = {result.path: (old_title, new_title)}
    new = _new_name(app, result.path, old_title, new_title)
    if new is None:
        return _relinked(app, result, titles)
    try:
        apply_moves(app, {result.path: new}, dry_run=False, titles=titles)
    except (Conflict, InvalidInput):  # taken meanwhile; too large with its own links rewritten
        return _relinked(app, result, titles)
    # its own links to itself were rewritten too: a version more (apply_moves caught up)
    rec = app.db.get(new)
    version = max(result.version, rec.version) if rec is not None else result.version
    return WriteResult(result.id, new, version, {**result.extra, "moved_from": result.path})


def _new_name(app: App, path: str, old_title: str, new_title: str) -> str | None:
    """The path a note named after its old title takes after its new one, or None."""
    folder, _, name = path.rpartition("/")
    old_stem, stem = name[:-3], store.name_for_title(new_title)
    named_after = store.name_for_title(old_title)
    if old_stem == stem or not re.fullmatch(rf"{re.escape(named_after)}(?: \d{{1,3}})?", old_stem):
        return None
    try:
        taken = {name_key(n) for n in os.listdir(app.root / folder)} - {name_key(name)}
    except OSError:
        return None
    free = next((n for n in store.candidate_names(stem) if name_key(n) not in taken), None)
    if free is None:
        return None
    return f"{folder}/{free}" if folder else free


def _relinked(app: App, result: WriteResult, titles: dict[str, tuple[str, str]]) -> WriteResult:
    """`result` with the links to its note by its old title rewritten, in the notes the
    caller may write, as a move rewrites them (services/moves.py carry_out): a note changed
    on disk meanwhile is left as it is and reported."""
    report = carry_out(app, plan_moves(app, {}, titles=titles), dry_run=False)
    extra = dict(result.extra)
    if report.links_updated:
        extra["links_updated"] = report.links_updated
    if report.skipped:
        extra["skipped"] = report.skipped
    rec = app.db.get(result.path)  # a link of its own to itself rewritten: a version more
    version = max(result.version, rec.version) if rec is not None else result.version
    return WriteResult(result.id, result.path, version, extra)
