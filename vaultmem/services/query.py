"""`query` (QueryMemory, seed 004): grep-style search over the files themselves.

Needs no Whoosh, Chroma or model: the state db (caught up with a stat walk) supplies
access, type and date filters; the files of visible notes are read and scored with the
formula in search/grep.py. `total_searched` counts only notes the caller may see.

A keyword query looks at a note's bytes first (search/grep.py KeywordScan): a note that
cannot match is never decoded, and an ASCII note is scored from its bytes with the numbers
the pattern would give. Excerpts are made only for the matches returned.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from vaultmem import clock
from vaultmem.errors import InvalidInput
from vaultmem.index.documents import changed_epoch, created_epoch, dated_epoch
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import QueryMatch, QueryResult
from vaultmem.search.filters import (
    QUERY_LIMIT,
    QUERY_MIN_RELEVANCE,
    parse_date_bound,
    scopes_for,
    types_for,
    unknown_types,
)
from vaultmem.search.grep import (
    FOLD,
    HALF_LIFE_DAYS,
    W_COVERAGE,
    W_FREQUENCY,
    W_RECENCY,
    BoundedRegex,
    KeywordScan,
    Match,
    Pattern,
    RegexTimeout,
    keyword_pattern,
    keywords,
    match_excerpt,
    score_counts,
    score_text,
)
from vaultmem.services.app import App
from vaultmem.services.lookup import location_of
from vaultmem.units import as_unit
from vaultmem.vault.dates import to_epoch
from vaultmem.vault.frontmatter import body_offset, split_document
from vaultmem.vault.note import ParsedNote
from vaultmem.vault.store import load_note, read_note_bytes

# The time a --regex query may spend matching over the whole vault (search/grep.py
# BoundedRegex): a pattern that backtracks without end is stopped, and the watcher serves
# the next request.
REGEX_BUDGET_S = 2.0

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
    since: str | None = None  # created at or after (as in `search` and `list`)
    until: str | None = None
    changed_since: str | None = None  # changed (the `updated` field or the file) at or after
    changed_until: str | None = None
    limit: int = QUERY_LIMIT
    min_relevance: float = QUERY_MIN_RELEVANCE
    regex: bool = False
    include_expired: bool = False


@dataclass(frozen=True, slots=True)
class _Plan:
    """A checked request: what to match, and which notes to look at."""

    text: str
    pattern: Pattern
    words: list[str] | None
    scan: KeywordScan | None  # keyword mode: rejects a file from its bytes before decoding
    scopes: tuple[str, ...]
    types: tuple[str, ...] | list[str]
    since: int | None
    until: int | None
    changed_since: int | None
    changed_until: int | None


def _plan(app: App, req: QueryRequest) -> _Plan:
    text = req.query.strip()
    if not text:
        raise InvalidInput("the query is empty")
    if not 1 <= req.limit <= 1000:
        raise InvalidInput("the limit (--limit; limit over MCP) must be between 1 and 1000")
    if as_unit(req.min_relevance) is None:
        raise InvalidInput("--min-relevance must be in [0, 1]")
    scopes = scopes_for(req.scope)
    words: list[str] | None
    pattern: Pattern
    words = None if req.regex else keywords(text)
    if words is not None and literal_query(text, words):
        # `C++`, `C#`, `🍣`, `???`: the words alone (`c`, none) would match every note with a
        # word starting with c, or none; the text itself is what a grep would look for
        words, text_pattern = None, re.escape(text)
    else:
        text_pattern = text
    if words is None:
        import regex

        try:
            pattern = BoundedRegex(text_pattern, REGEX_BUDGET_S)
        except (regex.error, ValueError, OverflowError, RecursionError) as exc:
            raise InvalidInput(f"invalid regular expression: {exc}") from None
    else:
        pattern = keyword_pattern(words)
    since = parse_date_bound(req.since, "since", end_of_day=False)
    until = parse_date_bound(req.until, "until", end_of_day=True)
    changed_since = parse_date_bound(req.changed_since, "changed-since", end_of_day=False)
    changed_until = parse_date_bound(req.changed_until, "changed-until", end_of_day=True)
    types = types_for(req.types, req.memory_type, app.config.memory_types)
    for warning in unknown_types(req.types, app.config.types):
        app.notice(f"warning: {warning}")
    scan = KeywordScan(words) if words is not None else None
    return _Plan(text, pattern, words, scan, tuple(scopes or ()), types, since, until, changed_since, changed_until)


def literal_query(text: str, words: Sequence[str]) -> bool:
    """Whether a keyword query is better matched as its literal text: it has no words, or
    only one-letter ones beside symbols (`C++`, `C#`, `F# & C#`)."""
    if not words:
        return True
    return all(len(w) == 1 and w.isascii() for w in words) and _SYMBOL_RE.search(text) is not None


_SYMBOL_RE = re.compile(r"[^\w\s]")


def _age_days(now: float, rec: NoteRecord) -> float:
    return (now - dated_epoch(rec)) / 86400.0


def _in_dates(plan: _Plan, rec: NoteRecord) -> bool:
    created, changed = created_epoch(rec), changed_epoch(rec)
    return (
        (plan.since is None or created >= plan.since)
        and (plan.until is None or created <= plan.until)
        and (plan.changed_since is None or changed >= plan.changed_since)
        and (plan.changed_until is None or changed <= plan.changed_until)
    )


def _score(plan: _Plan, title: str, raw: bytes, age_days: Callable[[], float]) -> Match | None:
    """One note's match, or None. `age_days()` gives its age (only a match needs it). In
    keyword mode a note that cannot match is rejected from its bytes (KeywordScan), an
    ASCII note is scored from its bytes (the same numbers as `score_text`), and only the
    others are decoded and matched with the pattern."""
    scan, pattern, words = plan.scan, plan.pattern, plan.words
    if scan is None or words is None:
        body = split_document(raw.decode("utf-8", errors="replace")).body
        return score_text(title, body, pattern, words, age_days(), with_excerpt=False)
    counted = scan.ascii_text_counts and raw.isascii()
    if scan.ascii or counted:
        folded = raw.translate(FOLD)
        if not scan.may_match_bytes(raw, folded) and not pattern.search(title):
            return None
        if counted:
            hits, covered = scan.counts(folded[body_offset(raw) :])
            title_hits, title_covered = scan.title_counts(title, pattern)
            return score_counts(hits + title_hits, covered | title_covered, len(words), age_days())
        text = raw.decode("utf-8", errors="replace")
    else:
        text = raw.decode("utf-8", errors="replace")
        if not scan.may_match_text(text) and not pattern.search(title):
            return None
    body = split_document(text).body
    return score_text(title, body, pattern, words, age_days(), with_excerpt=False)


def _scan(app: App, req: QueryRequest, plan: _Plan, now: float) -> tuple[list[tuple[float, NoteRecord, Any]], int]:
    """Every visible note that passes the filters, scored: (relevance, row, match) of the
    matches at or above the cut, and how many notes were searched."""
    searched = 0
    found: list[tuple[float, NoteRecord, Any]] = []
    root = str(app.root)
    readable: dict[tuple[Any, ...], bool] = {}  # access depends on the location alone
    dated = any(b is not None for b in (plan.since, plan.until, plan.changed_since, plan.changed_until))
    for rec in app.db.light_notes():
        where = (rec.scope, rec.owner, rec.project, rec.placed)
        visible = readable.get(where)
        if visible is None:
            visible = readable[where] = app.can_read(location_of(rec))
        if not visible:
            continue
        if plan.scopes and rec.scope not in plan.scopes:
            continue
        if plan.types and rec.type not in plan.types:
            continue
        if not req.include_expired and rec.expires and (to_epoch(rec.expires, None) or now + 1) <= now:
            continue
        if dated and not _in_dates(plan, rec):
            continue
        searched += 1
        try:
            raw = read_note_bytes(os.path.join(root, rec.path))
        except OSError:
            continue
        match = _score(plan, rec.title or "", raw, partial(_age_days, now, rec))
        if match is not None and match.relevance >= req.min_relevance:
            found.append((match.relevance, rec, match))
    found.sort(key=lambda item: (-item[0], item[1].path))
    return found, searched


def _match(app: App, rec: NoteRecord, match: Any, pattern: Pattern) -> QueryMatch | None:
    """The match as shown, read from the file again (for its metadata and excerpt); None
    when the file went away (or became unreadable) since the scan: a skipped note."""
    try:
        parsed = load_note(app.root / rec.path, rec.path)
    except OSError:
        return None
    if not isinstance(parsed, ParsedNote):
        return None
    metadata = dict(parsed.front_matter)
    body = parsed.body
    return QueryMatch(
        path=rec.path,
        relevance=match.relevance,
        type=rec.type,
        excerpt=match_excerpt(body, pattern),
        metadata=metadata,
        id=rec.id,
        title=rec.title,
        scope=rec.scope,
        scores={"coverage": match.coverage, "frequency": match.frequency, "recency": match.recency, "hits": match.hits},
    )


def query(app: App, req: QueryRequest) -> QueryResult:
    started = time.perf_counter()
    plan = _plan(app, req)
    app.catch_up()
    try:
        found, searched = _scan(app, req, plan, clock.epoch())
        matches: list[QueryMatch] = []
        gone = 0
        for _, rec, match in found:
            if len(matches) >= req.limit:
                break
            shown = _match(app, rec, match, plan.pattern)
            if shown is None:
                gone += 1  # deleted (or replaced by something unreadable) since the scan
            else:
                matches.append(shown)
        matched = len(found) - gone
    except RegexTimeout:
        raise InvalidInput(
            f"the regular expression took more than {REGEX_BUDGET_S:g} s over the vault and was stopped; "
            "nested repetition such as (a+)+ backtracks without end: simplify it"
        ) from None
    what = f"pattern /{plan.text}/" if req.regex else f"'{plan.text}'"
    summary = f"Found {matched} notes matching {what} among {searched} searched" + (
        f"; showing {len(matches)}" if matched > len(matches) else ""
    )
    return QueryResult(
        matches=matches,
        query_summary=summary,
        total_searched=searched,
        total_matched=matched,
        search_time_ms=round((time.perf_counter() - started) * 1000, 1),
        relevance_formula=FORMULA,
    )
