"""What writes answer: notes created, updated, validated, commented on, deleted,
captured, ingested, moved, trashed and restored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vaultmem.models.base import Result, inline, named
from vaultmem.models.reads import (
    LinkedNote,
)

# --- writes ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WriteResult(Result):
    """A note written: `note create`, `note update`."""

    id: str
    path: str
    version: int
    extra: dict[str, Any] = inline(dict)


@dataclass(frozen=True, slots=True)
class ValidateResult(Result):
    id: str
    version: int
    last_validated_at: str
    trust_score: Any
    path: str


@dataclass(frozen=True, slots=True)
class CommentResult(Result):
    id: str
    version: int
    comments: list[Any]
    path: str


@dataclass(frozen=True, slots=True)
class DeleteResult(Result):
    id: str | None
    path: str
    trashed_to: str
    linked_from: list[LinkedNote]


@dataclass(frozen=True, slots=True)
class CaptureResult(Result):
    id: str
    path: str


@dataclass(frozen=True, slots=True)
class PromoteResult(Result):
    id: str
    path: str
    version: int
    capture: dict[str, Any]


@dataclass(frozen=True, slots=True)
class InboxEntry(Result):
    id: str | None
    title: str | None
    path: str
    owner: str | None
    created: str | None
    tags: list[str]
    excerpt: str


@dataclass(frozen=True, slots=True)
class InboxList(Result):
    captures: list[InboxEntry]
    count: int


@dataclass(frozen=True, slots=True)
class IngestResult(Result):
    """`write`: one entry per item, by its index in the input."""

    written: list[dict[str, Any]]
    duplicates: list[dict[str, Any]]
    rejected: list[dict[str, Any]]
    warnings: list[str]


@dataclass(frozen=True, slots=True)
class Move(Result):
    id: str | None
    from_: str = named("from")
    to: str = named("to")


@dataclass(frozen=True, slots=True)
class MoveReport(Result):
    moves: list[Move]
    links_updated: list[str]
    skipped: list[dict[str, str]]
    dry_run: bool


@dataclass(frozen=True, slots=True)
class Trashed(Result):
    id: str
    title: str
    path: str  # where the note lived, and goes back to
    trashed_to: str  # vault-relative path in the trash
    deleted_at: str


@dataclass(frozen=True, slots=True)
class TrashList(Result):
    trashed: list[Trashed]
    count: int


@dataclass(frozen=True, slots=True)
class RestoreResult(Result):
    id: str
    path: str
    restored_from: str
