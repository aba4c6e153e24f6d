"""`query` (QueryMemory, seed 004): grep-style search over the files themselves.

Needs no Whoosh, Chroma or model: the state db (caught up with a stat walk) supplies
access, type and date filters; the files of visible notes are read and scored with the
formula in search/grep.py. `total_searched` counts only notes the caller may see.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vaultmem import clock
from vaultmem.errors import InvalidInput
from vaultmem.search.filters import SCOPE_ALIASES, parse_date_bound
from vaultmem.search.grep import (
    HALF_LIFE_DAYS,
    W_COVERAGE,
    W_FREQUENCY,
    W_RECENCY,
    keyword_pattern,
    keywords,
    match_excerpt,
    score_text,
)
from vaultmem.services.app import App
from vaultmem.services.lookup import location_of
from vaultmem.vault.dates import to_epoch
from vaultmem.vault.frontmatter import split_document
from vaultmem.vault.note import ParsedNote, parse_note

FORMULA = (
    f"relevance = {W_COVERAGE} x keyword coverage + {W_FREQUENCY} x (1 - exp(-hits / (2 x keywords)))"
    f" + {W_RECENCY} x 0.5^(age_days / {HALF_LIFE_DAYS:.0f})"
)


@dataclass(frozen=True, slots=True)
class QueryRequest:
    query: str
    types: Sequence[str] = field(default_factory=tuple)
    memory_type: str | None = None
    scope: str | None = None
    since: str | None = None
    until: str | None = None
    limit: int = 10
    min_relevance: float = 0.3
    regex: bool = False
    include_expired: bool = False


def _types(app: App, req: QueryRequest) -> set[str] | None:
    types = {t for t in req.types if t}
    if req.memory_type:
        group = app.config.memory_types.get(req.memory_type)
        if group is None:
            raise InvalidInput(
                f"unknown memory type {req.memory_type!r}; this vault defines: {', '.join(sorted(app.config.memory_types))}"
            )
        types = (types & set(group)) if types else set(group)
        if not types:
            return set()
    return types or None


def query(app: App, req: QueryRequest) -> dict[str, Any]:
    started = time.perf_counter()
    text = req.query.strip()
    if not text:
        raise InvalidInput("the query is empty")
    if not 1 <= req.limit <= 1000:
        raise InvalidInput("--limit must be between 1 and 1000")
    if not 0.0 <= req.min_relevance <= 1.0:
        raise InvalidInput("--min-relevance must be in [0, 1]")
    scope_key = (req.scope or "all").lower()
    if scope_key not in SCOPE_ALIASES:
        raise InvalidInput(f"unknown scope {req.scope!r}; use one of {', '.join(SCOPE_ALIASES)}")
    scopes = SCOPE_ALIASES[scope_key]
    words: list[str] | None
    if req.regex:
        try:
            pattern = re.compile(text, re.IGNORECASE | re.MULTILINE)
        except re.error as exc:
            raise InvalidInput(f"invalid regular expression: {exc}") from None
        words = None
    else:
        words = keywords(text)
        pattern = keyword_pattern(words)
    since = parse_date_bound(req.since, "since", end_of_day=False)
    until = parse_date_bound(req.until, "until", end_of_day=True)
    types = _types(app, req)
    app.catch_up()
    now = clock.epoch()
    searched = 0
    found: list[tuple[float, str, Any, Any]] = []
    # A bytes pattern rejects files that cannot match before any decoding (ASCII keywords
    # only: bytes regexes fold ASCII case alone).
    quick = None
    if words is not None and all(w.isascii() for w in words):
        quick = re.compile(pattern.pattern.encode("ascii"), re.IGNORECASE)
    root = str(app.root)
    for rec in app.db.light_records("status='note' ORDER BY path"):
        if not app.can_read(location_of(rec)):
            continue
        if scopes and rec.scope not in scopes:
            continue
        if types is not None and rec.type not in types:
            continue
        if not req.include_expired and rec.expires and (to_epoch(rec.expires, None) or now + 1) <= now:
            continue
        changed = to_epoch(rec.updated, None) or to_epoch(rec.created, None) or rec.mtime_ns // 1_000_000_000
        if (since is not None and changed < since) or (until is not None and changed > until):
            continue
        searched += 1
        try:
            with open(os.path.join(root, rec.path), "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        if quick is not None and quick.search(raw) is None and not pattern.search(rec.title or ""):
            continue
        body = split_document(raw.decode("utf-8", errors="replace")).body
        match = score_text(rec.title or "", body, pattern, words, (now - changed) / 86400.0, with_excerpt=False)
        if match is not None and match.relevance >= req.min_relevance:
            found.append((match.relevance, rec.path, rec, match))
    found.sort(key=lambda item: (-item[0], item[1]))
    matches = []
    for _, path, rec, match in found[: req.limit]:
        with open(app.root / path, "rb") as fh:
            parsed = parse_note(path, fh.read())
        metadata = dict(parsed.front_matter) if isinstance(parsed, ParsedNote) else {}
        body = parsed.body if isinstance(parsed, ParsedNote) else ""
        matches.append(
            {
                "path": path,
                "relevance": match.relevance,
                "type": rec.type,
                "excerpt": match_excerpt(body, pattern),
                "metadata": metadata,
                "id": rec.id,
                "title": rec.title,
                "scope": rec.scope,
                "scores": {
                    "coverage": match.coverage,
                    "frequency": match.frequency,
                    "recency": match.recency,
                    "hits": match.hits,
                },
            }
        )
    what = f"pattern /{text}/" if req.regex else f"'{text}'"
    summary = f"Found {len(found)} notes matching {what} among {searched} searched" + (
        f"; showing {len(matches)}" if len(found) > len(matches) else ""
    )
    return {
        "matches": matches,
        "query_summary": summary,
        "total_searched": searched,
        "total_matched": len(found),
        "search_time_ms": round((time.perf_counter() - started) * 1000, 1),
        "relevance_formula": FORMULA,
    }
