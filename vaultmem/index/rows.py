"""A vault file's row in the state db, and many files' rows read at once. Pure, but for
the reading.

record_for is what the catalog stage (catalog.py) stores of one parsed file; rows reads and
parses a batch of changed files, in worker processes when there are many (workers.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from vaultmem.config import VaultConfig
from vaultmem.index.statedb import NoteRecord
from vaultmem.index.workers import build_workers, in_processes
from vaultmem.units import as_unit
from vaultmem.vault.layout import FileEntry, classify
from vaultmem.vault.note import CANONICAL_KEYS, ParsedNote, Unreadable, effective_version
from vaultmem.vault.schema import check_note
from vaultmem.vault.store import read_entry


def prose_fields(fm: Mapping[str, object]) -> str:
    """Sentence-like text in front matter keys vaultmem does not manage (a `description`,
    a `summary`): often the best summary of a note, so it is searchable too. Single words
    (`permalink: links`, css classes) are left out: they are settings, not prose."""
    parts: list[str] = []
    for key, value in fm.items():
        if key in CANONICAL_KEYS:
            continue
        values = value if isinstance(value, list) else [value]
        for item in values:
            if isinstance(item, str) and " " in item.strip():
                parts.append(item.strip())
    return "\n".join(parts)[:4000]


def _text(value: object) -> str | None:
    return str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value) else None


def record_for(parsed: ParsedNote | Unreadable, entry: FileEntry, config: VaultConfig) -> NoteRecord:
    """Pure: the state db row of one parsed file."""
    if isinstance(parsed, Unreadable):
        loc = classify(entry.relpath)
        return NoteRecord(
            path=entry.relpath, size=entry.size, mtime_ns=entry.mtime_ns,
            hash=parsed.content_hash or f"unreadable:{parsed.problem.code}",
            status="unreadable", scope=loc.scope, owner=loc.owner, project=loc.project, placed=loc.placed,
            problems=(parsed.problem.to_dict(),),
        )  # fmt: skip
    fm = parsed.front_matter
    problems = [*parsed.problems, *check_note(parsed, config)]
    return NoteRecord(
        path=entry.relpath,
        size=entry.size,
        mtime_ns=entry.mtime_ns,
        hash=parsed.content_hash,
        status="note",
        id=parsed.id,
        id_derived=parsed.id_derived,
        title=parsed.title,
        type=parsed.type,
        scope=parsed.scope,
        owner=parsed.owner,
        project=parsed.project,
        placed=parsed.location.placed,
        parent=parsed.parent,
        tags=parsed.tags,
        aliases=parsed.aliases,
        created=_text(fm.get("created")),
        updated=_text(fm.get("updated")),
        expires=_text(fm.get("expires")),
        trust=as_unit(fm.get("trust_score")),
        confidence=as_unit(fm.get("confidence")),
        importance=as_unit(fm.get("importance")),
        # The file's own version, counting an edited body; catch_up adds what only the
        # previous row knows (an edit of the front matter, repeated edits).
        version=effective_version(parsed.version, parsed.body_edited, None),
        links=tuple(link.to_dict() for link in parsed.graph_links),
        problems=tuple(p.to_dict() for p in problems),
        extra={
            "source": _text(fm.get("source")),
            "body_hash": parsed.body_hash(),
            "prose": prose_fields(fm),
            "role": _text(fm.get("role")),
            "file_version": parsed.version,
            "body_edited": parsed.body_edited,
            # ids the note was known by before `lint --fix` wrote a real one: they still name it
            "former_ids": [str(i) for i in fm.get("former_ids") or [] if isinstance(i, str)]
            if isinstance(fm.get("former_ids"), list)
            else [],
        },
    )


READ_BATCH = 200  # files a worker reads and parses per job


def rows(
    root: Path, config: VaultConfig, changed: list[FileEntry]
) -> Iterator[tuple[FileEntry, NoteRecord, str | None]]:
    """Each changed file's row and body, in order. Many files (a first index, a clone, a
    checkout) are parsed in worker processes (index/workers.py), a third of a lexical build
    otherwise on one core; a batch whose worker failed is read here, so its error (if it
    is one) is this process's."""
    workers = build_workers(len(changed))
    if workers == 1:
        yield from _read_batch((root, config, changed))
        return
    batches = [(root, config, changed[i : i + READ_BATCH]) for i in range(0, len(changed), READ_BATCH)]
    for batch, made in in_processes(_read_batch, batches, workers):
        yield from _read_batch(batch) if isinstance(made, BaseException) else made


def _read_batch(
    job: tuple[Path, VaultConfig, list[FileEntry]],
) -> list[tuple[FileEntry, NoteRecord, str | None]]:
    root, config, entries = job
    out = []
    for entry in entries:
        parsed = read_entry(root, entry)
        out.append((entry, record_for(parsed, entry, config), parsed.body if isinstance(parsed, ParsedNote) else None))
    return out
