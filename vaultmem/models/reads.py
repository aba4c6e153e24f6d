"""What reading the vault answers: search results, notes with their links, queries,
reference searches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vaultmem.models.base import Result, inline, named, opt

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
    # Who said a conversation memory (its `role`); with `created`, when it was said.
    role: str | None = opt()


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
class SessionTurn(Result):
    """A turn said around a conversation result, in its session (search/sessions.py):
    `offset` -1 is the turn just before it, 1 the one just after. `{id, offset, role, text}`;
    a turn that is itself one of the results returned is `{id, offset}` only."""

    id: str
    offset: int
    role: str | None = opt()
    text: str | None = opt()


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
    # a conversation memory's turns said around it (the caller's own, as every neighbour)
    context: list[SessionTurn] = opt([], empty=True)
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
