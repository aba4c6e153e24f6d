"""Read-modify-write of one note: the version a note is at (hand edits counted), the checks
that refuse to write over what the caller has not seen, and the atomic write back."""

from __future__ import annotations

import hashlib
import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vaultmem.clock import note_time
from vaultmem.clock import now as utc_now
from vaultmem.errors import ChangedOnDisk, Conflict, InvalidInput
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import (
    WriteResult,
)
from vaultmem.services.app import App
from vaultmem.services.lookup import find_note
from vaultmem.vault import store
from vaultmem.vault.note import REPEATED_KEY, ParsedNote, Unreadable, body_hash, parse_note, version_now
from vaultmem.vault.secrets import refuse_secrets
from vaultmem.vault.writer import REMOVE, edit_note_text, normalize_body


def version_of(app: App, rec: NoteRecord, note: ParsedNote, file_hash: str) -> int:
    """The version a note is at now, hand edits counted (SPEC §2). The file was just read,
    so an edit the index has not seen yet (a watcher still debouncing it) counts too."""
    known = [(rec.hash, rec.version)] if rec.is_note else []
    written = app.db.writes_of([rec.path]).get(rec.path)
    if written is not None:
        known.append(written)
    version = version_now(file_hash, note.version, note.body_edited, known)
    if known and all(known_hash != file_hash for known_hash, _ in known):
        _remember_count(app, rec.path, file_hash, version)
    return version


def _remember_count(app: App, relpath: str, file_hash: str, version: int) -> None:
    """Record the version just counted for content nothing had recorded, as a reconcile
    does: otherwise a second hand edit before the index sees the first would be counted
    from the same row to the same version, the one this read reported, and a write stating
    it would pass over the person's second edit. Best effort: a read answers anyway."""
    if app.db.unwritable is not None:
        return
    try:
        app.db.record_write(relpath, file_hash, version)
    except (sqlite3.Error, OSError):
        # a full or read-only disk, a db another writer holds past the timeout: no reason to
        # fail a read (the next reconcile counts the edit)
        return


def record_written(
    app: App, relpath: str, data: bytes, version: int, upkeep: bool = False, was: str | None = None
) -> None:
    """Remember what vaultmem wrote (so any other content is a hand edit), then report it
    (`upkeep`: see App.wrote; `was`: the sha256 of the file the write changed, for the
    journal)."""
    app.db.record_write(relpath, hashlib.sha256(data).hexdigest(), version)
    app.wrote([relpath], upkeep=upkeep, was={relpath: was} if was else None)


def check_expected(path: str, file_version: int, now_at: int, expected: int | None) -> None:
    """`--expect-version`: refuse, changing nothing, unless the note is at that version."""
    if expected is None or expected == now_at:
        return
    if expected < 0:
        raise InvalidInput(f"expect_version must be 0 or more, not {expected}; nothing written")
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
BOOKKEEPING = ("updated", "version", "hash")  # what every write sets: not a change by itself


@dataclass(frozen=True, slots=True)
class Loaded:
    record: NoteRecord
    note: ParsedNote
    text: str
    stamp: store.FileStamp


def _changes_nothing(note: ParsedNote, changes: dict[str, Any], new_body: str | None) -> bool:
    """Whether `changes` and `new_body` leave the note as it is, its bookkeeping aside."""
    if new_body is not None and normalize_body(new_body) != normalize_body(note.body):
        return False
    fields = note.front_matter
    for key, value in changes.items():
        if key in BOOKKEEPING:
            continue
        if value is REMOVE:
            if key in fields:
                return False
        elif key not in fields or fields[key] != value:
            return False
    return True


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
    for problem in parsed.problems:
        if problem.code == REPEATED_KEY:
            raise InvalidInput(f"{rec.path}: {problem.message} by hand (see `vaultmem lint`); nothing written")
    return Loaded(rec, parsed, data.decode("utf-8"), stamp)


# An editor saving in place truncates the file, then writes it: a write landing in between
# would put an agent's line in place of the whole note, and the editor's text would go to a
# file no longer in the vault. An empty note changed this recently is waited on until it
# has text or has stayed empty this long (Obsidian's "new note" is an empty file); one
# still empty and changed less than EMPTY_FRESH_S ago is a conflict (a slow save: a large
# note, a network disk, a save hook), which the writer retries once the save is done.
EMPTY_SETTLE_S = 2.0
EMPTY_FRESH_S = 10.0


def _settled(app: App, ref: str, loaded: Loaded) -> Loaded:
    """`loaded` (an empty note), or the note as it is once an editor's save of it is done."""
    path = loaded.record.path
    stamp = loaded.stamp
    deadline = time.monotonic() + EMPTY_SETTLE_S  # a change time in the future waits no longer
    while stamp.size == 0 and time.time_ns() - stamp.mtime_ns < EMPTY_SETTLE_S * 1e9 and time.monotonic() < deadline:
        time.sleep(0.05)
        stamp = store.read_file(app.root, path)[1]
    if stamp.sha256 != loaded.stamp.sha256:
        return load_for_write(app, ref)
    age = (time.time_ns() - stamp.mtime_ns) / 1e9
    if age < EMPTY_FRESH_S:
        raise Conflict(
            f"{path} is empty, changed {max(age, 0):.0f} s ago: an editor may still be saving it; "
            f"retry in {EMPTY_FRESH_S:.0f} s; nothing written"
        )
    return loaded


def holds_unseen_words(note: ParsedNote, now_at: int) -> bool:
    """Whether the note holds words vaultmem did not write: an edit made outside vaultmem
    since its last write (its effective version past the one in the file), or a body not
    as vaultmem wrote it (vault/note.py as_written). A write that leaves the body alone (a
    tag, a comment) brings the version level with a hand edit before it, so the version
    alone would forget a person's words."""
    return now_at != note.version or not note.body_as_written


def check_unseen_edit(path: str, note: ParsedNote, now_at: int) -> None:
    """A write that replaces text, from a caller that states no version it read: refused
    while the note holds words vaultmem did not write, so a person's words are never
    replaced unseen."""
    if not holds_unseen_words(note, now_at):
        return
    what = (
        "an edit made by hand (outside vaultmem)"
        if now_at != note.version or note.body_edited
        else "a person's words (not written by vaultmem)"
    )
    raise Conflict(
        f"{path} holds {what} that this write would replace; it is at "
        f"version {now_at}: read it, then retry stating version {now_at} (--expect-version, expect_version over MCP); nothing written",
        current_version=now_at,
    )


# An addition that lost the race for a note to another writer reads it again and adds to
# what is there now, this many times: eight agents appending to one note at once all land.
ADDITION_RETRIES = 12


def mutate(
    app: App,
    ref: str,
    mutation: Mutation,
    *,
    expect_version: int | None = None,
    bump: bool = True,
    refuse_unseen_edits: bool = False,
    unseen_caller: bool = False,
    allow_secret: bool = False,
    addition: bool = False,
) -> tuple[WriteResult, dict[str, Any]]:
    """Read a note, apply `mutation`, write it back atomically unless it changed meanwhile.
    `refuse_unseen_edits`: without `expect_version`, a hand edit is a conflict
    (check_unseen_edit) rather than text to write over. `unseen_caller`: an agent that
    states no version it read; what it adds to a note holding a person's words leaves the
    note without `hash`, so the words stay a person's that no later unseen write replaces.
    A write that adds a secret is refused unless `allow_secret` (vault/secrets.py).
    `addition`: the mutation only adds (a line, a comment, a tag); without `expect_version`,
    a note another writer changed meanwhile is read again and added to, every check anew
    (a replace, or a caller that stated a version, gets the conflict)."""
    tries = ADDITION_RETRIES if addition and expect_version is None else 1
    for attempt in range(tries):
        try:
            return _mutate_once(
                app, ref, mutation, expect_version, bump, refuse_unseen_edits, unseen_caller, allow_secret
            )
        except ChangedOnDisk:
            if attempt == tries - 1:
                raise
            time.sleep(random.uniform(0.005, 0.02) * (attempt + 1))  # apart, not in step again
    raise AssertionError("unreachable")


def _mutate_once(
    app: App,
    ref: str,
    mutation: Mutation,
    expect_version: int | None,
    bump: bool,
    refuse_unseen_edits: bool,
    unseen_caller: bool,
    allow_secret: bool,
) -> tuple[WriteResult, dict[str, Any]]:
    loaded = load_for_write(app, ref)
    if not loaded.text and expect_version is None:
        loaded = _settled(app, ref, loaded)
    note = loaded.note
    if any(p.code == "unclosed_frontmatter" for p in note.problems):
        # as lint --fix: a block put in front of an unclosed `---` would make what the
        # person meant as front matter body text
        raise InvalidInput(
            f"{loaded.record.path}: front matter has no closing '---'; close it by hand (see `vaultmem lint`)"
        )
    now_at = version_of(app, loaded.record, note, loaded.stamp.sha256)
    check_expected(loaded.record.path, note.version, now_at, expect_version)
    if refuse_unseen_edits and expect_version is None:
        check_unseen_edit(loaded.record.path, note, now_at)
    # a note holding words vaultmem did not write keeps no `hash` through an agent's unread
    # addition (docstring): in its body, or in a field edited by hand (a person's
    # `trust_score`), which the addition's new version would otherwise make look seen
    unseen = unseen_caller and expect_version is None and holds_unseen_words(note, now_at)
    changes, new_body = mutation(note)
    if _changes_nothing(note, changes, new_body):
        # nothing the command asked for changes the note (a tag it already has, no flags):
        # no new version, which would make every other writer's --expect-version a conflict
        return WriteResult(loaded.record.id or note.id, loaded.record.path, now_at), dict(note.front_matter)
    version = now_at
    if bump:
        version = now_at + 1
        changes.setdefault("updated", note_time(utc_now()))
        changes["version"] = version
    if new_body is not None:
        changes["hash"] = REMOVE if unseen else body_hash(normalize_body(new_body))
    elif unseen and note.body_as_written:
        changes["hash"] = REMOVE
    edited = edit_note_text(loaded.text, note.front_matter, changes, new_body)
    if edited.text != loaded.text:
        refuse_secrets(edited.text, loaded.text, what=loaded.record.path, allow=allow_secret)
        data = edited.text.encode("utf-8")
        store.replace_file(app.root, loaded.record.path, data, loaded.stamp)
        record_written(app, loaded.record.path, data, version, was=loaded.stamp.sha256)
    return WriteResult(loaded.record.id or note.id, loaded.record.path, version), edited.front_matter
