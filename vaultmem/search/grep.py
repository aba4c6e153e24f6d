"""QueryMemory scoring (seed 004): grep-style matching with a documented relevance. Pure.

relevance = 0.60 × coverage + 0.25 × frequency + 0.15 × recency, in [0, 1], where
- coverage  = share of the query's keywords found in the note (title or body); in regex
              mode 1 when the pattern matches;
- frequency = 1 − exp(−hits / (2 × keywords)): saturating in the number of matches, so a
              note that repeats a keyword a few times outranks one that names it once;
- recency   = 0.5 ^ (age in days / 180): a half-life of about six months on the note's
              last change (updated, else created, else file mtime).
A note with no match at all has relevance 0 and is never returned.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

W_COVERAGE, W_FREQUENCY, W_RECENCY = 0.60, 0.25, 0.15
HALF_LIFE_DAYS = 180.0
EXCERPT_CHARS = 500

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "my",
        "me",
        "we",
        "you",
        "your",
        "our",
        "about",
        "into",
        "than",
    ]
)
_WORD_RE = re.compile(r"\w+", re.UNICODE)


def keywords(query: str) -> list[str]:
    """Distinct lower-case query words, stop words dropped (all kept if nothing else is)."""
    words = [w.lower() for w in _WORD_RE.findall(query)]
    kept = [w for w in words if w not in STOPWORDS and (len(w) > 1 or not w.isascii())]
    return list(dict.fromkeys(kept or words))


def keyword_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """One pattern for all keywords; a keyword matches at a word start (wine → wines).
    Keywords are whole words (\\w+), so a word boundary marks the start."""
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})", re.IGNORECASE)


class Pattern(Protocol):
    """What scoring needs of a pattern: `re.Pattern[str]`, or a `BoundedRegex`."""

    @property
    def pattern(self) -> Any: ...

    def finditer(self, string: str) -> Iterator[Any]: ...

    def search(self, string: str) -> Any: ...


class RegexTimeout(Exception):
    """A user's regular expression ran out of its time budget."""


class BoundedRegex:
    """A user's regular expression with a time budget for the whole query. Python's `re`
    backtracks without bound: `(a+)+$` over 27 `a`s and a `b` takes 44 s, and a watcher
    serving it serves nobody else meanwhile. The `regex` module matches the same syntax
    with a timeout (and releases the GIL while it matches); every call gets what is left
    of the budget and raises RegexTimeout when it is spent."""

    def __init__(self, text: str, budget_s: float) -> None:
        import regex

        self._compiled = regex.compile(text, regex.IGNORECASE | regex.MULTILINE | regex.VERSION0)
        self.pattern = text
        self._deadline = time.monotonic() + budget_s

    def _left(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise RegexTimeout
        return left

    def finditer(self, string: str) -> Iterator[Any]:
        try:
            yield from self._compiled.finditer(string, concurrent=True, timeout=self._left())
        except TimeoutError:
            raise RegexTimeout from None

    def search(self, string: str) -> Any:
        try:
            return self._compiled.search(string, concurrent=True, timeout=self._left())
        except TimeoutError:
            raise RegexTimeout from None


@dataclass(frozen=True, slots=True)
class Match:
    relevance: float
    coverage: float
    frequency: float
    recency: float
    hits: int
    excerpt: str


def recency(age_days: float) -> float:
    return 0.5 ** (max(0.0, age_days) / HALF_LIFE_DAYS)


def frequency(hits: int, n_keywords: int) -> float:
    return 1.0 - math.exp(-hits / (2.0 * max(1, n_keywords)))


def relevance(coverage: float, freq: float, rec: float) -> float:
    return round(min(1.0, W_COVERAGE * coverage + W_FREQUENCY * freq + W_RECENCY * rec), 4)


def excerpt(text: str, spans: Sequence[tuple[int, int]], limit: int = EXCERPT_CHARS) -> str:
    """At most `limit` characters of `text` around the densest cluster of matches."""
    if not spans:
        return text[:limit].strip()
    # The window of limit/2 characters holding the most match starts (two pointers: linear
    # even for a note that repeats a keyword thousands of times).
    starts = [s for s, _ in spans]
    best_start, best_count, lo = starts[0], 0, 0
    for hi, start in enumerate(starts):
        while start - starts[lo] >= limit // 2:
            lo += 1
        if hi - lo + 1 > best_count:
            best_start, best_count = starts[lo], hi - lo + 1
    begin = max(0, best_start - limit // 4)
    line_start = text.rfind("\n", 0, best_start)
    if line_start >= begin:
        begin = line_start + 1
    chunk = text[begin : begin + limit]
    prefix = "…" if begin > 0 else ""
    suffix = "…" if begin + limit < len(text) else ""
    room = limit - len(prefix) - len(suffix)
    return (prefix + chunk[:room].strip() + suffix)[:limit]


def score_text(
    title: str,
    body: str,
    pattern: Pattern,
    words: Sequence[str] | None,
    age_days: float,
    with_excerpt: bool = True,
) -> Match | None:
    """Score one note. `words` None means regex mode (`pattern` is the user's regex).
    `with_excerpt=False` leaves the excerpt empty: a caller that scores every note only
    needs excerpts of the few it returns (see `match_excerpt`)."""
    spans = [(m.start(), m.end()) for m in pattern.finditer(body) if m.end() > m.start()]
    title_hits = [m.group(0).lower() for m in pattern.finditer(title) if m.end() > m.start()]
    hits = len(spans) + len(title_hits)
    if hits == 0:
        return None
    if words is None:
        coverage = 1.0
        n = 1
    else:
        found = {body[s:e].lower() for s, e in spans} | set(title_hits)
        matched = {w for w in words if any(f.startswith(w) for f in found)}
        coverage = len(matched) / len(words)
        n = len(words)
    freq = frequency(hits, n)
    rec = recency(age_days)
    text = excerpt(body, spans) if with_excerpt else ""
    return Match(relevance(coverage, freq, rec), round(coverage, 4), round(freq, 4), round(rec, 4), hits, text)


def match_excerpt(body: str, pattern: Pattern, limit: int = EXCERPT_CHARS) -> str:
    return excerpt(body, [(m.start(), m.end()) for m in pattern.finditer(body) if m.end() > m.start()], limit)
