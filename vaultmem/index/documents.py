"""What the derived indexes store per note, and the filters both retrievers apply.

One `IndexDoc` feeds Whoosh and Chroma alike, so a filter means the same in each: access
class, scope, types, tags, project, dates, trust, confidence, importance and expiry.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from vaultmem.index.statedb import NoteRecord
from vaultmem.vault.dates import FAR_FUTURE, to_epoch
from vaultmem.vault.layout import Location, reader_token

NEUTRAL = 0.5  # the value of a missing trust, confidence or importance


@dataclass(frozen=True, slots=True)
class IndexDoc:
    path: str
    id: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]  # lower-case
    body: str
    type: str
    scope: str
    owner: str
    project: str
    reader: str
    created: int  # epoch seconds (file mtime when the note has no date)
    updated: int
    expires: int  # FAR_FUTURE when the note never expires
    trust: float
    confidence: float
    importance: float
    hash: str
    prose: str = ""  # sentence-like front matter text (description, summary)
    when: str = ""  # a dated memory's day in words (event_words): BM25 only
    # Counter(analyze(body)) when the indexer counted it already (engine.py), else None
    body_counts: Counter[str] | None = None


# Memories whose `created` is when the thing happened (services/writes.py: a write's
# event time), not when the file was made.
DATED_TYPES = frozenset({"conversation", "episode"})


def event_words(epoch: int) -> str:
    """The day of an event as people name it in questions: "Monday 8 May 2023".

    Indexed with the note's body for BM25 (not embedded: a date in front of a turn's words
    moved MiniLM away from the question's meaning, R@5 0.448 -> 0.388 on the LoCoMo tune
    conversations, while the words lifted BM25 from 0.518 to 0.557 there): "What did Nate
    make on 9 November, 2022?" then finds that day's turns."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%A %d %B %Y").replace(" 0", " ")


def created_epoch(rec: NoteRecord) -> int:
    """When a note was made, for every `--since`/`--until`: its `created` field, else its
    `updated` field, else its file's time (a plain markdown page has neither field)."""
    created = to_epoch(rec.created, None)
    if created is not None:
        return created
    updated = to_epoch(rec.updated, None)
    return updated if updated is not None else rec.mtime_ns // 1_000_000_000


def changed_epoch(rec: NoteRecord) -> int:
    """When a note last changed, for every `--changed-since`/`--changed-until`: its
    `updated` (else `created`) field or, if later, its file (a hand edit in an editor
    leaves the front matter as it was)."""
    return max(to_epoch(rec.updated or rec.created, 0) or 0, rec.mtime_ns // 1_000_000_000)


def dated_epoch(rec: NoteRecord) -> int:
    """The date a note states for itself — its `updated`, else `created` field, else its
    file's time: the age `query`'s recency counts (independent of when a file was copied)."""
    stated = to_epoch(rec.updated or rec.created, None)
    return stated if stated is not None else rec.mtime_ns // 1_000_000_000


def doc_for(rec: NoteRecord, body: str, body_counts: Counter[str] | None = None) -> IndexDoc:
    mtime = rec.mtime_ns // 1_000_000_000
    created = to_epoch(rec.created, None)
    updated = to_epoch(rec.updated, None)
    location = Location(rec.scope or "shared", rec.owner, rec.project, rec.placed)
    return IndexDoc(
        path=rec.path,
        id=rec.id or rec.path,
        title=rec.title or "",
        aliases=tuple(rec.aliases),
        tags=tuple(t.lower() for t in rec.tags),
        body=body,
        type=rec.type or "note",
        scope=rec.scope or "shared",
        owner=rec.owner or "",
        project=rec.project or "",
        reader=reader_token(location),
        created=created_epoch(rec),
        updated=updated if updated is not None else (created if created is not None else mtime),
        expires=to_epoch(rec.expires, FAR_FUTURE) or FAR_FUTURE,
        trust=rec.trust if rec.trust is not None else NEUTRAL,
        confidence=rec.confidence if rec.confidence is not None else NEUTRAL,
        importance=rec.importance if rec.importance is not None else NEUTRAL,
        hash=rec.hash,
        prose=str((rec.extra or {}).get("prose") or ""),
        when=event_words(created) if created is not None and rec.type in DATED_TYPES else "",
        body_counts=body_counts,
    )


@dataclass(frozen=True, slots=True)
class Filters:
    """Search filters of SPEC §5, applied inside each retriever before ranking (each
    rule stated once, in index/filter_rules.py).

    `readers` carries the access rules: only notes of these access classes exist for the
    query. Missing trust, confidence and importance count as 0.5 (neutral)."""

    readers: tuple[str, ...]
    now: int
    scopes: tuple[str, ...] = ()
    types: tuple[str, ...] = ()  # any of
    tags: tuple[str, ...] = ()  # all of, lower-case
    project: str | None = None
    since: int | None = None  # created >= since
    until: int | None = None  # created <= until
    min_trust: float | None = None
    min_confidence: float | None = None
    min_importance: float | None = None
    include_expired: bool = False


def body_text(doc: IndexDoc) -> str:
    """The `body` field's text: the body, and a dated memory's day in words. Counted
    already when the indexer analyzed the body (analysis.Analyzed)."""
    text = f"{doc.body}\n{doc.when}" if doc.when else doc.body
    if doc.body_counts is None:
        return text
    from vaultmem.index.analysis import Analyzed, analyze

    counts = doc.body_counts + Counter(analyze(doc.when)) if doc.when else doc.body_counts
    return Analyzed(text, counts)


def filter_fields(doc: IndexDoc) -> dict[str, Any]:
    """The fields filter_rules tests, stored alike in Whoosh and in Chroma's metadata."""
    return {
        "type": doc.type,
        "scope": doc.scope,
        "owner": doc.owner,
        "project": doc.project,
        "reader": doc.reader,
        "created": doc.created,
        "updated": doc.updated,
        "expires": doc.expires,
        "trust": float(doc.trust),
        "confidence": float(doc.confidence),
        "importance": float(doc.importance),
    }


def whoosh_fields(doc: IndexDoc) -> dict[str, Any]:
    """A note's document in the lexical index (fulltext._schema's fields)."""
    return {
        "path": doc.path,
        "id": doc.id,
        "head": (
            doc.title,
            " ".join(doc.aliases),
            " ".join(t.replace("/", " ").replace("-", " ") for t in doc.tags),
            doc.prose,
        ),
        "tagset": ",".join(doc.tags),
        # A dated memory's day in words counts as its text: a question names the day as
        # it names the rest ("what did Nate make on 9 November?")
        "body": body_text(doc),
        **filter_fields(doc),
    }
