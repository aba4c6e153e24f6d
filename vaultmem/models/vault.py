"""What the vault's own commands answer: index, status, lint, init, ghosts, tokens, and
the browsing commands (list, links, tags, orphans, edit)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vaultmem.models.base import Result, inline, internal, opt, to_json
from vaultmem.models.reads import (
    LinkedNote,
    Links,
    Problem,
)

# --- indexing and the vault ---------------------------------------------------------------------


@dataclass(slots=True)
class IndexReport(Result):
    """What one reconcile did. Mutable while the indexer runs; `seconds` to the millisecond."""

    added: int = 0
    updated: int = 0
    deleted: int = 0
    moved: int = 0
    unchanged: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    # The indexer's own counters: None (left out) in a ghost's view of the report, whose
    # counts above are of its notes only (services/indexing.py run_index).
    fulltext_docs: int | None = opt(0)
    embedded_notes: int | None = opt(0)
    embedded_chunks: int | None = opt(0)  # chunk texts the model embedded
    kept_chunks: int | None = opt(0)  # chunks of those notes whose text, unchanged, kept its stored vector
    vectors: str = "none"
    # path -> "added" | "updated" | "deleted" | "moved" (the new path): what a reader's view
    # of the report is counted from (services/indexing.py run_index)
    changes: dict[str, str] = internal(dict)

    def to_dict(self) -> dict[str, Any]:
        data = to_json(self)
        data["seconds"] = round(self.seconds, 3)
        return data


@dataclass(frozen=True, slots=True)
class StatusReport(Result):
    vault: str
    notes: dict[str, Any]
    index: dict[str, Any]
    watcher: dict[str, Any]


@dataclass(frozen=True, slots=True)
class LintReport(Result):
    problems: list[Problem]
    errors: int
    warnings: int
    checked: int
    fixed: list[dict[str, str]] | None = opt()


@dataclass(frozen=True, slots=True)
class InitResult(Result):
    vault: str
    ghosts: list[str]
    examples: bool
    existing_notes: int
    added: list[str]
    appended: list[str]
    kept: list[str]


@dataclass(frozen=True, slots=True)
class GhostsResult(Result):
    ghosts: list[str]
    added: bool | None = opt()


# --- browsing: list, links, tags, orphans, diary ------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListedNote(Result):
    """A note in `list`: a NoteSummary's keys (without search's score and snippet), its
    tags and importance, and `modified`, the file's modification time (a hand edit in an
    editor changes it even when the front matter's `updated` stays)."""

    id: str | None
    title: str | None
    type: str | None
    scope: str | None
    path: str
    owner: str | None
    project: str | None
    trust_score: float | None
    importance: float | None
    created: str | None
    updated: str | None
    modified: str
    tags: list[str]


@dataclass(frozen=True, slots=True)
class DeletedNote(Result):
    """A note the vault no longer has: moved to the trash by vaultmem (`deleted_at` known)
    or removed from disk and not yet forgotten by the state db (`deleted_at` null)."""

    id: str | None
    title: str | None
    path: str
    scope: str | None
    deleted_at: str | None
    trashed_to: str | None = opt()


@dataclass(frozen=True, slots=True)
class NoteList(Result):
    """`list`: one page of notes, and how many match in all (`total`)."""

    notes: list[ListedNote]
    total: int
    returned: int
    offset: int
    limit: int
    sort: str
    deleted: list[DeletedNote] | None = opt()


@dataclass(frozen=True, slots=True)
class LinkReport(Result):
    """`links REF`: the note, and its links as the reader sees them (the `links` of `get`)."""

    note: LinkedNote
    links: Links = inline()


@dataclass(frozen=True, slots=True)
class TagCount(Result):
    """One tag: `count` notes carry it or a tag nested under it (`a` counts `a/b`, as
    Obsidian's tag pane rolls them up); `notes` carry exactly it."""

    tag: str
    count: int
    notes: int


@dataclass(frozen=True, slots=True)
class TagList(Result):
    tags: list[TagCount]
    total: int


@dataclass(frozen=True, slots=True)
class OrphanList(Result):
    """Notes nothing links to that link to nothing (among the notes the reader can see)."""

    orphans: list[ListedNote]
    total: int


@dataclass(frozen=True, slots=True)
class EditResult(Result):
    """`edit` and `diary`: the note, whether the file changed (or was created), and what
    lint finds wrong with it now."""

    id: str | None
    path: str
    created: bool
    changed: bool
    version: int | None
    lines_added: int = 0
    lines_removed: int = 0
    fields_changed: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TokenCreated(Result):
    ghost: str
    token: str  # shown this once; only its hash is kept
    id: str
    created: str
    file: str


@dataclass(frozen=True, slots=True)
class TokenInfo(Result):
    id: str
    ghost: str
    created: str
    last_used: str | None


@dataclass(frozen=True, slots=True)
class TokenList(Result):
    tokens: list[TokenInfo]
    file: str


@dataclass(frozen=True, slots=True)
class TokenRevoked(Result):
    id: str
    ghost: str
