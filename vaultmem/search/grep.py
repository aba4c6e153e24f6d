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

import importlib
import itertools
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


MAX_REPEAT = 1000  # the largest count of a `{m,n}` repeat
MAX_REPEATS = 100_000  # the product of every count in a pattern
_REPEAT_RE = re.compile(r"(?<!\\)\{\s*(\d*)\s*(?:,\s*(\d*)\s*)?\}")


def check_repeats(text: str) -> None:
    """Refuse counted repeats the matcher would build out in memory before any time budget
    starts: `a{1000000000}` took one compile 23 GB and the machine's OOM killer (about 280
    bytes a repeat). Each count at most MAX_REPEAT, and all of them multiplied (nested
    ones multiply: `(a{1000}){1000}`) at most MAX_REPEATS. ValueError says which."""
    product = 1
    for low, high in _REPEAT_RE.findall(text):
        for count in (low, high):
            if len(count) > 6 or (count and int(count) > MAX_REPEAT):
                raise ValueError(f"a repeat count is at most {MAX_REPEAT}, not {count}")
        product *= max(int(low or 0), int(high or 0), 1)
        if product > MAX_REPEATS:
            raise ValueError(f"the repeat counts multiply past {MAX_REPEATS}; use fewer or smaller ones")


class BoundedRegex:
    """A user's regular expression with a time budget for the whole query. Python's `re`
    backtracks without bound: `(a+)+$` over 27 `a`s and a `b` takes 44 s, and a watcher
    serving it serves nobody else meanwhile. The `regex` module matches the same syntax
    with a timeout (and releases the GIL while it matches); every call gets what is left
    of the budget and raises RegexTimeout when it is spent."""

    def __init__(self, text: str, budget_s: float) -> None:
        import regex

        check_repeats(text)
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
    if words is None:
        title_hits = sum(1 for m in pattern.finditer(title) if m.end() > m.start())
        if not spans and not title_hits:
            return None
        text = excerpt(body, spans) if with_excerpt else ""
        return _scored(len(spans) + title_hits, 1.0, 1, age_days, text)
    found = {body[s:e].lower() for s, e in spans}
    covered = {w for w in words if any(f.startswith(w) for f in found)}
    title_hits, title_covered = keyword_counts(title, pattern, words)
    match = score_counts(len(spans) + title_hits, covered | title_covered, len(words), age_days)
    if match is None or not with_excerpt:
        return match
    return Match(match.relevance, match.coverage, match.frequency, match.recency, match.hits, excerpt(body, spans))


def keyword_counts(text: str, pattern: Pattern, words: Sequence[str]) -> tuple[int, set[str]]:
    """A text's keyword matches: how many, and the keywords they cover (a keyword is covered
    when some match starts with it: `wines` covers both `wine` and `wines`)."""
    found = [m.group(0).lower() for m in pattern.finditer(text) if m.end() > m.start()]
    return len(found), {w for w in words if any(f.startswith(w) for f in found)}


def score_counts(hits: int, covered: set[str], n_keywords: int, age_days: float) -> Match | None:
    """`score_text` in keyword mode from a note's counted matches (title and body) and the
    keywords they cover; no excerpt."""
    if hits == 0:
        return None
    return _scored(hits, len(covered) / n_keywords, n_keywords, age_days, "")


def _scored(hits: int, coverage: float, n_keywords: int, age_days: float, text: str) -> Match:
    freq = frequency(hits, n_keywords)
    rec = recency(age_days)
    return Match(relevance(coverage, freq, rec), round(coverage, 4), round(freq, 4), round(rec, 4), hits, text)


def match_excerpt(body: str, pattern: Pattern, limit: int = EXCERPT_CHARS) -> str:
    return excerpt(body, [(m.start(), m.end()) for m in pattern.finditer(body) if m.end() > m.start()], limit)


# --- Keyword scan: a note is decoded and scored only when its bytes can match -------------
#
# `keyword_pattern` matches with re.IGNORECASE over decoded text, at a Unicode word start.
# Most notes of a large vault hold none of the keywords, and a note that is plain ASCII can
# be scored without the regex: with its bytes folded (ASCII letters to lower case, ASCII
# word characters kept, every other byte a space), an ASCII keyword matches at a word
# start exactly where " keyword" occurs (or the text starts with it). Outside ASCII the
# fold is only a necessary condition, and the few characters outside ASCII that
# re.IGNORECASE matches with ASCII letters are looked for separately; keywords outside
# ASCII are looked for in the lower-cased text, in each case spelling re allows.

_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_")
FOLD = bytes(c + 32 if 65 <= c <= 90 else c if c in _WORD_BYTES else 32 for c in range(256))

# Characters outside ASCII that re.IGNORECASE matches with an ASCII character (either way
# round): İ (U+0130) and ı (U+0131) with i, the Kelvin sign (U+212A) with k, ſ (U+017F)
# with s. tests/unit/test_grep_keyword_scan.py checks this against `re`.
ASCII_CASE_TWINS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
_TWIN_CHARS = frozenset("".join(ASCII_CASE_TWINS.values()))

# Spelling many case variants of a keyword is costly; a piece of it is looked for instead.
_MAX_VARIANTS = 16


def _extra_cases() -> dict[int, tuple[int, ...]] | None:
    """re's table of lower-case letters that also match other lower-case letters (i and
    dotless ı, s and long ſ, Greek and Cyrillic symbol forms), or None when this Python
    keeps it elsewhere (then decoded text is not prefiltered)."""
    try:
        table = importlib.import_module("re._casefix")._EXTRA_CASES
    except (ImportError, AttributeError):
        return None
    return table if isinstance(table, dict) else None


_EXTRA_CASES = _extra_cases()


def case_variants(word: str) -> tuple[frozenset[str], bool] | None:
    """Strings one of which the lower-cased text (str.lower()) holds wherever `word` (a
    lower-case keyword) matches under re.IGNORECASE, and whether a capital İ in the text
    must count as a possible match too. re matches a text character with a pattern
    character when the text character's simple lower case is the pattern character's or
    one of re's extra cases of it; str.lower() gives that simple lower case for every
    character but İ (two characters: i and a combining dot) and a final Σ (ς, an extra
    case of σ). When the whole word has too many variants, those of its longest piece
    with few are given. None when this Python's table of extra cases is unknown."""
    if _EXTRA_CASES is None:
        return None
    groups = [ch + "".join(chr(c) for c in _EXTRA_CASES.get(ord(ch), ())) for ch in word]
    best, lo, size = (0, 0), 0, 1
    for hi, group in enumerate(groups):
        size *= len(group)
        while size > _MAX_VARIANTS:
            size //= len(groups[lo])
            lo += 1
        if hi + 1 - lo > best[1] - best[0]:
            best = (lo, hi + 1)
    piece = groups[best[0] : best[1]]
    variants = frozenset("".join(chars) for chars in itertools.product(*piece))
    return variants, any("i" in group for group in piece)


class KeywordScan:
    """`keyword_pattern(words)` over a note's bytes, for `query`. `may_match_*` reject a
    note before it is decoded or scored, and never one that `score_text` would match in
    its body (the title is the caller's to check). `counts` scores an ASCII text from its
    folded bytes, with exactly the numbers `score_text` finds in it."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self.ascii = all(w.isascii() for w in self.words)
        # An ASCII text is scored from its bytes when no keyword outside ASCII can match
        # it: each has a character that matches no ASCII character.
        self.ascii_text_counts = all(
            any(not ch.isascii() and ch not in _TWIN_CHARS for ch in w) for w in self.words if not w.isascii()
        )
        plain = [w for w in self.words if w.isascii()]
        self._starts = [b" " + w.encode("ascii") for w in plain]
        self._heads = tuple(w.encode("ascii") for w in plain)
        # Where keywords start alike the pattern matches the longest, once: matches are
        # counted on the keywords no other keyword starts (a keyword only an ASCII one
        # can start is ASCII itself).
        counted = [not any(o != w and w.startswith(o) for o in self.words) for w in plain]
        self._count_plan = list(zip(plain, self._starts, self._heads, counted, strict=True))
        twins = {t for w in plain for ch in set(w) for t in ASCII_CASE_TWINS.get(ch, "")}
        self._twins = tuple(t.encode("utf-8") for t in sorted(twins))
        self._variants: list[tuple[frozenset[str], bool]] | None = None
        if not self.ascii:
            found = [case_variants(w) for w in self.words]
            self._variants = None if any(v is None for v in found) else [v for v in found if v is not None]

    def may_match_bytes(self, raw: bytes, folded: bytes) -> bool:
        """Can the note match? `folded` is raw.translate(FOLD). For a note outside ASCII,
        only when every keyword is ASCII (else `may_match_text`)."""
        if folded.startswith(self._heads):
            return True
        for start in self._starts:
            if start in folded:
                return True
        if self._twins and not raw.isascii():
            for twin in self._twins:
                if twin in raw:
                    return True
        return False

    def may_match_text(self, text: str) -> bool:
        """Can the decoded note match?"""
        if self._variants is None:
            return True
        low = text.lower()
        return any(
            any(v in low for v in variants) or (dotted_i and "\u0130" in text) for variants, dotted_i in self._variants
        )

    def counts(self, folded_text: bytes) -> tuple[int, set[str]]:
        """An ASCII text's matches and the keywords they cover, from its folded bytes (only
        when `ascii_text_counts`): one match per word start where a keyword starts, and a
        keyword is covered where it matches, as in `keyword_counts`."""
        hits, covered = 0, set()
        for word, start, head, counted in self._count_plan:
            n = folded_text.count(start)
            if folded_text.startswith(head):
                n += 1
            if n:
                covered.add(word)
                if counted:
                    hits += n
        return hits, covered

    def title_counts(self, title: str, pattern: Pattern) -> tuple[int, set[str]]:
        """`keyword_counts` of a title (`pattern` is `keyword_pattern(words)`)."""
        if self.ascii_text_counts and title.isascii():
            return self.counts(title.encode("ascii").translate(FOLD))
        return keyword_counts(title, pattern, self.words)
