"""How a search shows a note: its summary and, as a result's neighbour, its compact form."""

from __future__ import annotations

from vaultmem.index.statedb import NoteRecord
from vaultmem.models import Neighbour, NoteSummary


def summary_of(rec: NoteRecord, score: float | None = None, snippet: str | None = None) -> NoteSummary:
    return NoteSummary(
        id=rec.id or "",
        title=rec.title or "",
        type=rec.type or "note",
        scope=rec.scope or "shared",
        path=rec.path,
        owner=rec.owner,
        project=rec.project,
        score=score,
        snippet=snippet,
        trust_score=rec.trust,
        created=rec.created,
        updated=rec.updated,
        role=text_value((rec.extra or {}).get("role")) if rec.type == "conversation" else None,
    )


def text_value(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def neighbour(rec: NoteRecord, hops: int, is_result: bool) -> Neighbour:
    """A result's neighbour, compact: `{id}` for one of the results, else `{id, title}` and
    `hops` when more than one."""
    if is_result:
        return Neighbour(rec.id or "")
    return Neighbour(rec.id or "", rec.title or "", hops)
