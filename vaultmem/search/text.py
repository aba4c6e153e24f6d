"""Snippets and near-duplicate detection. Pure functions over note text."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

_WS_RE = re.compile(r"\s+")
_WORD_RE = re.compile(r"\w+", re.UNICODE)
_SPLIT_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_WIKILINK_RE = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_LEAD_RE = re.compile(r"^[#>\-*+\s]+")
_EMPHASIS_RE = re.compile(r"[*_`]{1,3}")

Analyzer = Callable[[str], list[str]]
SNIPPET_CHARS = 240


def _clean(text: str) -> str:
    """Plain reading text: link labels instead of link syntax, no list/heading markers."""
    text = _WIKILINK_RE.sub(lambda m: m.group(2) or m.group(1), text)
    text = _EMPHASIS_RE.sub("", _LEAD_RE.sub("", text))
    return _WS_RE.sub(" ", text).strip()


def shorten(text: str, limit: int) -> str:
    """Cut at a word boundary, marking the cut with an ellipsis."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ""
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def best_passage(body: str, terms: Sequence[str], analyze: Analyzer | None, limit: int = SNIPPET_CHARS) -> str:
    """The stretch of the body that holds the most query terms, about `limit` characters."""
    pieces = [p for p in (_clean(s) for s in _SPLIT_RE.split(body)) if p]
    if not pieces:
        return ""
    wanted = set(terms)
    best_i, best_score = 0, -1
    if wanted and analyze is not None:
        for i, piece in enumerate(pieces):
            found = set(analyze(piece)) & wanted
            score = len(found) * 10 + min(len(piece), 200) // 100
            if score > best_score:
                best_i, best_score = i, score
    text = pieces[best_i]
    j = best_i + 1
    while len(text) < limit and j < len(pieces):
        text += " " + pieces[j]
        j += 1
    if best_i > 0 and len(text) < limit // 2:
        text = pieces[best_i - 1] + " " + text
    return shorten(text, limit)


def shingles(text: str, size: int = 3) -> set[tuple[str, ...]]:
    words = [w.lower() for w in _WORD_RE.findall(text)]
    if len(words) < size:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class NearDuplicates:
    """Streaming near-duplicate detection: `first_twin(key, body)` returns the key of an
    earlier body it repeats (identical after whitespace and case, or word-3-gram Jaccard
    at least `threshold`), else remembers it and returns None."""

    def __init__(self, threshold: float = 0.85) -> None:
        self.threshold = threshold
        self._kept: list[tuple[str, str, set[tuple[str, ...]]]] = []

    def first_twin(self, key: str, body: str) -> str | None:
        norm = _WS_RE.sub(" ", body.lower()).strip()
        sig = shingles(norm)
        for other_key, other_norm, other_sig in self._kept:
            if norm == other_norm:
                return other_key
            # Jaccard >= t needs the smaller set to hold at least t of the larger: a cheap
            # test that skips almost every comparison of unrelated notes.
            small, large = sorted((len(sig), len(other_sig)))
            if norm and sig and small >= self.threshold * large and jaccard(sig, other_sig) >= self.threshold:
                return other_key
        self._kept.append((key, norm, sig))
        return None


def collapse_near_duplicates(
    ordered: Iterable[tuple[str, str]], threshold: float = 0.85
) -> tuple[list[str], dict[str, str]]:
    """Keep the first of every group of near-identical bodies, in the given order.

    `ordered` yields (key, body). Returns (kept keys, dropped key -> the key it repeats)."""
    seen = NearDuplicates(threshold)
    kept: list[str] = []
    dropped: dict[str, str] = {}
    for key, body in ordered:
        twin = seen.first_twin(key, body)
        if twin is None:
            kept.append(key)
        else:
            dropped[key] = twin
    return kept, dropped
