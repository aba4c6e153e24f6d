"""`edit` and `diary`: a person opens a note in an editor, or adds a line to today's entry.

The editor is the caller's (the CLI runs $VISUAL/$EDITOR): this module gets a function that
edits a file in place and returns when the editor exits. It edits a copy of the note, in a
folder of its own: an agent may write the note while the editor is open, and an editor that
saves over the file would drop that write without a word. When the editor exits, the copy
goes back in one atomic write if the note is as it was; if it changed meanwhile, the
person's edit is merged into it three-way, as sync merges notes (vault/merge.py), and where
both changed the same lines both are kept between conflict markers and the command says so.
What the editor saved is a hand edit (SPEC §2: a new version, written by the person, not by
vaultmem); afterwards the state db catches up and the note's changes and lint problems are
reported.
"""

from __future__ import annotations

import difflib
import hashlib
import shutil
import tempfile
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

from vaultmem import clock
from vaultmem.errors import Conflict, InvalidInput, NotFound
from vaultmem.models import EditResult, Problem
from vaultmem.services.app import App
from vaultmem.services.checks import require_ghost
from vaultmem.services.documents import links_of
from vaultmem.services.lookup import find_note
from vaultmem.services.notes import NewNote, create_note
from vaultmem.services.revisions import mutate, version_of
from vaultmem.vault import store
from vaultmem.vault.note import ParsedNote, Unreadable, parse_note
from vaultmem.vault.schema import check_note
from vaultmem.vault.when import parse_when

Editor = Callable[[Path], None]


def _parsed(app: App, relpath: str) -> tuple[bytes, ParsedNote | Unreadable]:
    data, _ = store.read_file(app.root, relpath)
    return data, parse_note(relpath, data)


def _put_back(app: App, relpath: str, before: bytes, edited: bytes, copy: Path) -> int:
    """Write the editor's `edited` text of the note at `relpath` (read as `before`); merged
    three-way if the note changed meanwhile. Returns how many places both changed (kept
    between conflict markers). If the note is gone or cannot be merged, nothing is written
    and the error names `copy`, where the edit stays."""
    from vaultmem.vault.git import GitError, merge_text
    from vaultmem.vault.merge import merge_note

    kept = f"the edit is kept in {copy}"
    for _ in range(3):  # a write between reading the note and writing it: merge again
        try:
            now, stamp = store.read_file(app.root, relpath)
        except (NotFound, InvalidInput):
            raise Conflict(f"{relpath} was removed or moved while it was open in the editor; {kept}") from None
        conflicts = 0
        text = edited
        if now != before:
            base, ours, theirs = (b.decode("utf-8", "surrogateescape") for b in (before, edited, now))
            try:
                merged = merge_note(base, ours, theirs, merge_text)
            except GitError as exc:
                raise Conflict(f"{relpath} changed while it was open in the editor ({exc}); {kept}") from None
            text, conflicts = merged.text.encode("utf-8", "surrogateescape"), merged.conflicts
        try:
            store.replace_file(app.root, relpath, text, stamp)
        except Conflict:
            continue
        except InvalidInput as exc:  # over the size limit, a NUL character
            raise InvalidInput(f"{exc}; {kept}") from None
        return conflicts
    raise Conflict(f"{relpath} kept changing while the edit was saved; {kept}")


def _fields(parsed: ParsedNote | Unreadable) -> dict[str, object]:
    return dict(parsed.front_matter) if isinstance(parsed, ParsedNote) else {}


def note_problems(app: App, relpath: str, parsed: ParsedNote | Unreadable) -> list[Problem]:
    """What `lint` says about this one note: its file, its fields, its dangling links."""
    if isinstance(parsed, Unreadable):
        return [parsed.problem]
    problems = list(parsed.problems) + list(check_note(parsed, app.config))
    for d in links_of(app, relpath).dangling:
        problems.append(Problem(relpath, "warning", "dangling_link", f"link target {d.target!r} does not resolve"))
    return problems


def open_in_editor(app: App, ref: str, editor: Editor, created: bool = False) -> EditResult:
    """Run `editor` on the note `ref` names (one the ghost may write), then report what the
    editor changed: lines added and removed, front matter fields, lint problems."""
    app.catch_up()
    rec = find_note(app.db, ref, app.can_write)
    before, _ = _parsed(app, rec.path)
    before_fields = _fields(parse_note(rec.path, before))
    folder = Path(tempfile.mkdtemp(prefix="vaultmem-edit-"))
    copy = folder / Path(rec.path).name
    copy.write_bytes(before)
    try:
        editor(copy)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # nothing was edited
        raise
    try:
        edited = store.read_note_bytes(copy)
    except store.TooLarge:
        raise InvalidInput(f"the edit is over the note size limit; it is kept in {copy}") from None
    except OSError:
        edited = before  # the editor removed its file: nothing to put back
    merged = _put_back(app, rec.path, before, edited, copy) if edited != before else 0
    shutil.rmtree(folder, ignore_errors=True)  # only once the edit is in the note
    after, parsed = _parsed(app, rec.path)
    app.catch_up()
    if edited != before:  # what the editor opened, for the journal (review.writers)
        app.wrote([rec.path], was={rec.path: hashlib.sha256(before).hexdigest()})
    if merged:
        app.notice(
            f"warning: {rec.path} changed while it was open in the editor; {merged} place(s) both changed "
            "are kept between conflict markers: resolve them (`vaultmem lint` names the note)"
        )
    diff = list(
        difflib.ndiff(before.decode("utf-8", "replace").splitlines(), after.decode("utf-8", "replace").splitlines())
    )
    after_fields = _fields(parsed)
    keys = [k for k in {**before_fields, **after_fields} if before_fields.get(k) != after_fields.get(k)]
    now = app.db.get(rec.path)
    version = None
    if isinstance(parsed, ParsedNote) and now is not None:
        version = version_of(app, now, parsed, store.read_file(app.root, rec.path)[1].sha256)
    return EditResult(
        id=(now.id if now is not None else rec.id), path=rec.path, created=created, changed=after != before,
        version=version, lines_added=sum(1 for d in diff if d.startswith("+ ")),
        lines_removed=sum(1 for d in diff if d.startswith("- ")), fields_changed=keys,
        problems=note_problems(app, rec.path, parsed),
    )  # fmt: skip


# --- diary ------------------------------------------------------------------------------------


def local_now() -> datetime:
    """Now on the person's clock: a diary day is a local day, as in Obsidian."""
    return datetime.fromtimestamp(clock.epoch()).astimezone()


def diary_day(value: str | None, now: datetime) -> date:
    """`--date`: an ISO date, or relative (`yesterday`, `2d`); default today."""
    if value is None:
        return now.date()
    text = value.strip()
    if len(text) == 10 and text[4] == "-" and text[7] == "-":
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    moment = parse_when(value, "date", now)
    assert moment is not None
    return moment.astimezone(now.tzinfo).date()


def diary_path(ghost: str, day: date) -> str:
    """Obsidian's daily-note name (`YYYY-MM-DD.md`) in the ghost's diary folder."""
    return f"diary/{ghost}/{day.isoformat()}.md"


def diary_entry(app: App, day_text: str | None, append: str | None = None, editor: Editor | None = None) -> EditResult:
    """Open (creating it first if needed) the ghost's diary entry for a day. With `append`,
    add `- HH:MM text` to it without an editor; else run `editor` on it."""
    ghost = require_ghost(app, "the diary")
    now = local_now()
    day = diary_day(day_text, now)
    if append is not None and not append.strip():
        raise InvalidInput("--append needs some text")
    if append is None and editor is None:
        raise InvalidInput("nothing to do: give --append TEXT, or an editor")
    app.catch_up()
    path = diary_path(ghost, day)
    rec = app.db.get(path)
    created = rec is None or not rec.is_note
    if created:
        # Two appends at once both find no entry for the day: the first makes it, the
        # other adds to it (never a second, numbered file for the same day).
        day_note = NewNote(title=day.isoformat(), type="episode", scope="diary", numbered=False)
        try:
            create_note(app, day_note, caught_up=True)
        except FileExistsError:
            created = False
    if append is None:
        assert editor is not None
        return open_in_editor(app, path, editor, created=created)
    line = f"- {now.strftime('%H:%M')} {' '.join(append.split())}"

    def add_line(note: ParsedNote) -> tuple[dict[str, object], str]:
        base = note.body.rstrip("\n")
        return {}, (f"{base}\n{line}\n" if base else f"{line}\n")

    written, _ = mutate(app, path, add_line, unseen_caller=app.ghost is not None, addition=True)
    return EditResult(written.id, written.path, created, True, written.version, lines_added=1)
