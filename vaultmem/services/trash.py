"""Deleted notes wait in `.trash/<UTC time>/<path>` (the folder Obsidian moves deleted files
to); `trash restore` brings one back. Notes deleted by earlier versions, in
`.vaultmem/trash/`, are listed and restored the same way.

A trashed note keeps the readers of the folder it was deleted from: a ghost lists and
restores only what it could see before the delete.
"""

from __future__ import annotations

import os

from vaultmem.errors import Ambiguous, Conflict, InvalidInput, NotFound
from vaultmem.models import RestoreResult, Trashed, TrashList
from vaultmem.paths import LEGACY_TRASH_RELPATH, TRASH_RELPATH
from vaultmem.services.app import App
from vaultmem.vault import store
from vaultmem.vault.layout import DELETE_BATCH, classify, is_note_path
from vaultmem.vault.note import ParsedNote, parse_note


def _deleted_at(stamp: str) -> str:
    """`20261123T101500123456Z` -> `2026-11-23T10:15:00Z`."""
    return f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z"


def _batch(trashed_to: str) -> str:
    """The delete's folder name in a `trashed_to` path."""
    for base in (TRASH_RELPATH, LEGACY_TRASH_RELPATH):
        if trashed_to.startswith(base + "/"):
            return trashed_to[len(base) + 1 :].split("/", 1)[0]
    return ""


def trashed_notes(app: App) -> list[Trashed]:
    """Every trashed note this ghost may see, newest first."""
    batches: list[tuple[str, str]] = []
    for rel in (TRASH_RELPATH, LEGACY_TRASH_RELPATH):
        base = app.root / rel
        if base.is_symlink() or not base.is_dir():
            continue
        batches += [(name, rel) for name in os.listdir(base) if DELETE_BATCH.match(name)]
    out: list[Trashed] = []
    for batch, rel in sorted(batches, reverse=True):
        folder = app.root / rel / batch
        if folder.is_symlink() or not folder.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)))
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                original = os.path.relpath(full, folder).replace(os.sep, "/")
                if os.path.islink(full) or not is_note_path(original):
                    continue
                if not app.can_read(classify(original)):
                    continue
                trashed_to = f"{rel}/{batch}/{original}"
                try:
                    data, _ = store.read_file(app.root, trashed_to)
                except (NotFound, InvalidInput):
                    continue
                parsed = parse_note(original, data)
                note_id = parsed.id if isinstance(parsed, ParsedNote) else ""
                title = parsed.title if isinstance(parsed, ParsedNote) else original.rsplit("/", 1)[-1][:-3]
                out.append(Trashed(note_id, title, original, trashed_to, _deleted_at(batch)))
    return out


def list_trash(app: App) -> TrashList:
    notes = trashed_notes(app)
    return TrashList(notes, len(notes))


def _pick(app: App, ref: str) -> Trashed:
    ref = ref.strip()
    if not ref:
        raise InvalidInput("which note? give its id, its old path or its path in the trash")
    notes = trashed_notes(app)
    low = ref.lower()
    bare = low[:-3] if low.endswith(".md") else low
    matches = [t for t in notes if t.id.lower() == low or t.trashed_to.lower() == low]
    if not matches:
        matches = [t for t in notes if t.path.lower() in (low, bare + ".md")]
    if not matches:
        raise NotFound(f"no trashed note matches {ref!r} (see `vaultmem trash list`)")
    newest = [t for t in matches if _batch(t.trashed_to) == _batch(matches[0].trashed_to)]
    if len({t.path for t in newest}) > 1:
        candidates = [t.to_dict() for t in newest]
        raise Ambiguous(f"{ref!r} matches {len(newest)} trashed notes", candidates=candidates)
    return matches[0]  # newest first: the last delete of that note


def restore(app: App, ref: str) -> RestoreResult:
    """Move a trashed note back to its path; exit 4 if that path is taken (nothing overwritten)."""
    entry = _pick(app, ref)
    if not app.can_write(classify(entry.path)):
        raise NotFound(f"no trashed note matches {ref!r} (see `vaultmem trash list`)")
    if (app.root / entry.path).exists():
        raise Conflict(
            f"{entry.path} exists again; nothing restored (move that note away, or restore by hand from "
            f"{entry.trashed_to})",
            existing={"path": entry.path},
        )
    try:
        store.move_file(app.root, entry.trashed_to, entry.path)
    except Conflict:
        raise Conflict(f"{entry.path} exists again; nothing restored", existing={"path": entry.path}) from None
    app.wrote([entry.path])
    return RestoreResult(entry.id, entry.path, entry.trashed_to)
