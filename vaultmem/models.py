"""The results every use case returns, as frozen dataclasses, and the one serializer that
turns them into the JSON of SPEC §6.

Field order is key order in the JSON. `to_json` walks a result's fields in that order; a
field marked `omitted` (see `opt`) is left out when it holds nothing, which is how the
contract's optional keys (`explain`, `warnings`, `budget_tokens`, …) appear only when they
mean something. Services build these; the CLI serializes them (`--json`) or renders them
for people; renderers read the fields, never the JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

# --- the serializer ---------------------------------------------------------------------------

_OMIT = "omit_if"
_KEY = "json_key"
_INLINE = "inline"


def _none(value: Any) -> bool:
    return value is None


def _empty(value: Any) -> bool:
    return not value


def opt(default: Any = None, *, empty: bool = False, key: str | None = None, unless_default: bool = False) -> Any:
    """A field left out of the JSON when None (or, with `empty`, when empty; with
    `unless_default`, when it holds its default: `hops` of a direct neighbour)."""
    omit: Callable[[Any], bool] = _empty if empty else _none
    if unless_default:
        omit = lambda value: value is None or value == default  # noqa: E731
    meta: dict[str, Any] = {_OMIT: omit}
    if key:
        meta[_KEY] = key
    if isinstance(default, (list, dict)):
        return field(default_factory=type(default), metadata=meta)
    return field(default=default, metadata=meta)


def named(key: str, default: Any = ...) -> Any:
    """A field whose JSON key is not a Python name (`from`)."""
    if default is ...:
        return field(metadata={_KEY: key})
    return field(default=default, metadata={_KEY: key})


def _always(value: Any) -> bool:
    return True


def internal(default_factory: Callable[[], Any]) -> Any:
    """A field the services read and the JSON never shows."""
    return field(default_factory=default_factory, metadata={_OMIT: _always})


def inline(default_factory: Callable[[], Any] | None = None) -> Any:
    """A mapping (or result) whose keys join the enclosing object's, in their order."""
    if default_factory is None:
        return field(metadata={_INLINE: True})
    return field(default_factory=default_factory, metadata={_INLINE: True})


def to_json(value: Any) -> Any:
    """JSON-ready data (dicts, lists, str, numbers, bools, None) from a result."""
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in fields(value):
            item = getattr(value, f.name)
            meta = f.metadata
            if _OMIT in meta and meta[_OMIT](item):
                continue
            if meta.get(_INLINE):
                inner = to_json(item)
                if isinstance(inner, dict):
                    out.update(inner)
                continue
            out[meta.get(_KEY, f.name)] = to_json(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    return value


class Result:
    """Mixin: `to_dict()` is `to_json(self)`."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        data = to_json(self)
        assert isinstance(data, dict)
        return data


# --- files and notes --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Problem(Result):
    """Something wrong with a file. Never carries note contents: operators see paths only."""

    path: str
    severity: str  # "error" | "warning"
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class NoteSummary(Result):
    id: str
    title: str
    type: str
    scope: str
    path: str
    owner: str | None = None
    project: str | None = None
    score: float | None = None
    snippet: str | None = None
    trust_score: float | None = None
    created: str | None = None
    updated: str | None = None


@dataclass(frozen=True, slots=True)
class Neighbour(Result):
    """A note related to a result (parent, link in, link out), `hops` away from it: compact,
    with no null-valued keys. `{id, title}`, and `hops` only when more than one; a neighbour
    that is itself one of the results returned is `{id}` only (its summary is there).
    `get ID` reads any of them."""

    id: str
    title: str | None = opt()
    hops: int = opt(1, unless_default=True)

    @property
    def is_result(self) -> bool:
        """True for a reference to one of the results (id only)."""
        return self.title is None


@dataclass(frozen=True, slots=True)
class RankPart(Result):
    rank: int
    score: float | None = opt()
    distance: float | None = opt()


@dataclass(frozen=True, slots=True)
class Explain(Result):
    """Why a result scored what it did: each retriever's rank, the fusion, the trust factor."""

    bm25: RankPart | None
    vector: RankPart | None
    # relevance fusion: cos, bm25 (saturated), logit; rrf: each ranking's w / (k + rank)
    parts: dict[str, float]
    fused: float  # relevance (or the RRF sum) before the trust factor
    trust_factor: float
    final: float


@dataclass(frozen=True, slots=True)
class MemoryResult(Result):
    summary: NoteSummary
    parents: list[Neighbour] = field(default_factory=list)
    links_in: list[Neighbour] = field(default_factory=list)
    links_out: list[Neighbour] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    duplicates: list[str] = opt([], empty=True)
    explain: Explain | None = opt()
    # reference search: each retriever's rank of the file, and its vector distance
    ranks: dict[str, int] | None = opt()
    distance: float | None = opt()


@dataclass(frozen=True, slots=True)
class SearchResult(Result):
    query: str
    mode: str
    results: list[MemoryResult]
    returned: int
    tokens_used: int
    token_estimate: str
    search_time_ms: float
    budget_tokens: int | None = opt()
    collapsed_duplicates: int | None = opt()
    requested_mode: str | None = opt()
    warnings: list[str] = opt([], empty=True)


@dataclass(frozen=True, slots=True)
class LinkedNote(Result):
    """A note at the other end of a link, in `get`."""

    id: str | None
    title: str | None
    path: str
    type: str | None
    scope: str | None


@dataclass(frozen=True, slots=True)
class LinkOut(Result):
    note: LinkedNote = inline()
    kind: str = "link"
    heading: str | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class LinkIn(Result):
    note: LinkedNote = inline()
    kind: str = "link"
    heading: str | None = opt()  # `[[This note#Heading]]`: the heading the link points at
    label: str | None = opt()  # `[[This note|label]]`: the text the link shows


@dataclass(frozen=True, slots=True)
class Dangling(Result):
    """A link to nothing the reader can see (a hidden note looks exactly like none)."""

    target: str
    heading: str | None


@dataclass(frozen=True, slots=True)
class Links(Result):
    out: list[LinkOut]
    in_: list[LinkIn] = named("in")
    dangling: list[Dangling] = field(default_factory=list)
    parent: LinkedNote | None = None
    children: list[LinkedNote] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class NoteDocument(Result):
    """`get`: the note's front matter (hand edits counted in `version`) and path, its body,
    tags, links both ways and comments."""

    note: dict[str, Any]
    body: str
    tags: list[str]
    links: Links
    comments: list[Any]
    raw: str | None = opt()
    # `get --section`/`--lines` (or a pasted `[[Note#Heading]]`): which part `body` holds
    part: dict[str, Any] | None = opt()


@dataclass(frozen=True, slots=True)
class QueryMatch(Result):
    path: str
    relevance: float
    type: str | None
    excerpt: str
    metadata: dict[str, Any]
    id: str | None
    title: str | None
    scope: str | None
    scores: dict[str, Any]


@dataclass(frozen=True, slots=True)
class QueryResult(Result):
    matches: list[QueryMatch]
    query_summary: str
    total_searched: int
    total_matched: int
    search_time_ms: float
    relevance_formula: str


@dataclass(frozen=True, slots=True)
class TopicInfo(Result):
    id: str
    title: str
    path: str
    summary: str | None
    files: int


@dataclass(frozen=True, slots=True)
class ReferenceResult(Result):
    topic: TopicInfo
    question: str
    results: list[MemoryResult]
    returned: int
    mode: str
    search_time_ms: float


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
