"""The inbox: raw captures (memory_capture) and their curation into structured notes."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from vaultmem.clock import note_time
from vaultmem.clock import now as utc_now
from vaultmem.errors import InvalidInput, NotFound
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import CaptureResult, InboxEntry, InboxList, PromoteResult
from vaultmem.services.app import App, batched_writes, naming
from vaultmem.services.lookup import find_note, location_of
from vaultmem.services.notes import NewNote, create_note
from vaultmem.services.revisions import check_expected, version_of
from vaultmem.vault import store
from vaultmem.vault.note import ParsedNote, parse_note

MAX_CAPTURE_BYTES = 1024 * 1024


def capture_title(text: str, limit: int = 80) -> str:
    """A title from the first line of free text.

    Tabs and other control characters become spaces: titles may not hold them, and a
    capture must never fail because of how its first line happens to be indented."""
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    cleaned = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in first_line)
    first = " ".join(cleaned.split()).strip(" #")
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0].rstrip(",.;:") + "…"
    return first or "capture"


def capture(
    app: App,
    text: str,
    scope: str = "private",
    tags: Sequence[str] = (),
    source: str | None = None,
    allow_secret: bool = False,
) -> CaptureResult:
    if scope not in ("private", "shared"):
        raise InvalidInput(f"capture scope must be private or shared, not {scope!r}")
    if scope == "private" and app.ghost is None:
        raise InvalidInput(
            "a private capture needs a ghost: pass --ghost NAME, set VAULTMEM_GHOST, or use --scope shared"
        )
    if not text.strip():
        raise InvalidInput("nothing to capture: the text is empty")
    if len(text.encode("utf-8")) > MAX_CAPTURE_BYTES:
        raise InvalidInput(f"capture is larger than {MAX_CAPTURE_BYTES} bytes")
    # Captures are not shared knowledge: title uniqueness does not apply. Files are named
    # after their titles like every note (" 1", " 2" for repeats); `created` keeps the time.
    result = create_note(
        app,
        NewNote(
            title=capture_title(text),
            type="capture",
            scope="inbox" if scope == "private" else "inbox-shared",
            body=text,
            tags=tags,
            source=source,
            allow_secret=allow_secret,
        ),
        caught_up=True,
    )
    return CaptureResult(result.id, result.path)


def _capture_entry(rec: NoteRecord, parsed: ParsedNote | None) -> InboxEntry:
    excerpt = " ".join(parsed.body.split())[:200] if parsed else ""
    return InboxEntry(rec.id, rec.title, rec.path, rec.owner, rec.created, list(rec.tags), excerpt)


def list_inbox(app: App) -> InboxList:
    app.catch_up()
    rows = app.db.notes_in_scope("inbox")
    out = []
    for rec in rows:
        if not app.can_read(location_of(rec)):
            continue
        try:
            data, _ = store.read_file(app.root, rec.path)
            parsed = parse_note(rec.path, data)
        except NotFound:
            continue
        out.append(_capture_entry(rec, parsed if isinstance(parsed, ParsedNote) else None))
    return InboxList(out, len(out))


@batched_writes
@naming
def promote(
    app: App,
    ref: str,
    title: str,
    note_type: str,
    scope: str,
    project: str | None = None,
    parent: str | None = None,
    expect_version: int | None = None,
    allow_secret: bool = False,
) -> PromoteResult:
    app.catch_up()
    rec = find_note(app.db, ref, app.can_write)
    if rec.scope != "inbox":
        raise InvalidInput(f"{rec.path} is not in an inbox; only captures can be promoted")
    data, stamp = store.read_file(app.root, rec.path)
    parsed = parse_note(rec.path, data)
    if not isinstance(parsed, ParsedNote):
        raise InvalidInput(f"{rec.path}: {parsed.problem.message}")
    check_expected(rec.path, parsed.version, version_of(app, rec, parsed, stamp.sha256), expect_version)
    fm_source = parsed.front_matter.get("source")
    source = f"capture:{rec.id or parsed.id}" + (f" ({fm_source})" if fm_source else "")
    result = create_note(
        app,
        NewNote(
            title=title,
            type=note_type,
            scope=scope,
            project=project,
            parent=parent,
            body=parsed.body,
            tags=[t for t in parsed.tags],
            source=source,
            extra={"captured": parsed.front_matter.get("created") or note_time(utc_now())},
            allow_secret=allow_secret,
            persons_words=not parsed.body_as_written,  # a capture a person wrote stays theirs
        ),
        caught_up=True,
    )
    # The note exists before the capture leaves the inbox: a crash in between duplicates,
    # never loses.
    # Only the capture as read leaves the inbox: one edited meanwhile stays (a duplicate to
    # curate, never a lost edit).
    trashed = store.trash_file(app.root, rec.path, stamp)
    app.wrote([rec.path])
    return PromoteResult(result.id, result.path, result.version, {"id": rec.id or parsed.id, "trashed_to": trashed})
