"""Text analysis for the lexical index, and the Whoosh field type that uses it.

Whoosh's StemmingAnalyzer, reimplemented without a Token object per word: lower-casing,
the English stop list (words under 2 characters dropped) and the Porter stemmer for
English, as Whoosh does; words of other scripts are split as index/tokens.py says and
stemmed by their script's Snowball stemmer (Russian for Cyrillic, Arabic, Hindi for
Devanagari; PyStemmer), character pairs of scripts without spaces kept as they are (a
single character too). Indexing spends most of its time here, so this is the hot path. This module
imports Whoosh at import time because Whoosh pickles the field class into its index; it
is itself imported only by code that opens an index.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Generator, Iterable, Iterator
from typing import Any

from whoosh import fields
from whoosh.analysis import STOP_WORDS, StemmingAnalyzer
from whoosh.lang.porter import stem
from whoosh.system import pack_uint

from vaultmem.index.tokens import NOSPACE_RE, words

_STOP = frozenset(STOP_WORDS)
# The first letter's script picks the stemmer: Cyrillic, Arabic, Devanagari.
_SCRIPTS = (("\u0400", "\u052f", "russian"), ("\u0600", "\u06ff", "arabic"), ("\u0900", "\u097f", "hindi"))


@functools.lru_cache(maxsize=8)
def _snowball(language: str) -> Any:
    import Stemmer

    return Stemmer.Stemmer(language)


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    first = word[0]
    if first < "\u0400":  # Latin and everything before Cyrillic: English, as before
        return str(stem(word))
    for low, high, language in _SCRIPTS:
        if low <= first <= high:
            return str(_snowball(language).stemWord(word))
    return word


def _kept(word: str) -> bool:
    return (len(word) >= 2 and word not in _STOP) or (len(word) == 1 and NOSPACE_RE.match(word) is not None)


def analyze(text: str) -> Iterator[str]:
    """The index terms of a text: stemmed, lower-cased, stop words removed."""
    for word in words(text.lower()):
        if _kept(word):
            yield _stem(word)


def term_map(tokens: Iterable[str]) -> dict[str, str]:
    """Each of `tokens` (lower-cased, from tokens.words) that `analyze` keeps -> its term."""
    kept = {w for w in tokens if _kept(w)}
    return dict(zip(kept, map(_stem, kept), strict=True))


class Analyzed(str):
    """A text with its term counts (`Counter(analyze(text))`), made where the text was
    analyzed for something else too (index/engine.py: a body's passage terms), so that
    FastText does not analyze it again."""

    counts: Counter[str]

    def __new__(cls, text: str, counts: Counter[str]) -> Analyzed:
        made = super().__new__(cls, text)
        made.counts = counts
        return made

    def __reduce__(self) -> tuple[type[Analyzed], tuple[str, Counter[str]]]:
        # Pickled to a parallel build's workers (index/workers.py) with its counts.
        return (Analyzed, (str(self), self.counts))


class FastText(fields.TEXT):
    """A TEXT field that stores term frequencies but no positions (queries are bags of
    words; positions would double indexing time and postings size), counting terms with
    `analyze` instead of Whoosh's token pipeline."""

    def __init__(self, boost: float = 1.0) -> None:
        super().__init__(analyzer=StemmingAnalyzer(), phrase=False, field_boost=boost)

    def index(self, value: Any, **kwargs: Any) -> Generator[tuple[bytes, int, float | int, bytes], Any, None]:
        counts = getattr(value, "counts", None)  # an Analyzed text's: counted already
        if counts is None:
            counts = Counter(analyze(value if isinstance(value, str) else " ".join(value)))
        boost = self.format.field_boost if self.format is not None else 1.0
        for word, freq in counts.items():
            yield word.encode("utf-8"), freq, freq * boost, pack_uint(freq)


# The parts of a note's head and their weights in the `head` field: a term's weight there
# is the weighted count of its occurrences (BM25F proper: weighted term frequencies, one
# saturation), so a word in both title and aliases does not score twice.
HEAD_WEIGHTS = {"title": 1.0, "aliases": 1.0, "tags": 1.0, "prose": 1.0}


class WeightedText(fields.TEXT):
    """A field indexed from several texts at once: `(title, aliases, tags, prose)`.
    Each term's posting weight is the weighted sum of its counts in the parts; its
    frequency (which makes up the field length) is the plain count."""

    def __init__(self) -> None:
        super().__init__(analyzer=StemmingAnalyzer(), phrase=False)

    def index(self, value: Any, **kwargs: Any) -> Generator[tuple[bytes, int, float | int, bytes], Any, None]:
        parts = [value] if isinstance(value, str) else list(value)
        counts: Counter[str] = Counter()
        weights: dict[str, float] = {}
        for weight, text in zip(HEAD_WEIGHTS.values(), parts, strict=False):
            for word in analyze(text):
                counts[word] += 1
                weights[word] = weights.get(word, 0.0) + weight
        for word, freq in counts.items():
            yield word.encode("utf-8"), freq, float(weights[word]), pack_uint(freq)
