"""Passage coverage: how much of a query one sentence or line of a note says. Pure.

BM25 scores a note as a bag of words, so a page that uses each query word once, in
different places, ties with one that says the whole question in one line. People write
the line: a question about a note usually repeats one of its sentences, list items or
table rows in other order or with words left out. The coverage of a passage is the share
of the query's weight (each distinct term's idf) its terms hold; a note's coverage is its
best passage's. A query word no visible note holds keeps its weight (the highest), so a
question about something the vault does not hold covers little anywhere: that is what
lets the relevance cut of search/fusion.py leave it out.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping

from vaultmem.index.tokens import NOSPACE_RE, WORD_CHAR, words

# Sentence ends, semicolons and colons (a list item's "Do this:" before its example), and
# line breaks: a markdown line is a paragraph, a list item, a table row or a heading.
PASSAGE_BREAK = re.compile(r"(?<=[.!?:;])\s+|\n+")
# The same breaks, matched from the punctuation (no look-behind: ~6x faster to scan); a
# passage starts where one ends.
BREAK_END = re.compile(r"\n+|[.!?:;]\s+")

TermMap = Callable[[Iterable[str]], Mapping[str, str]]  # lower-cased words -> their index terms


def passages(text: str) -> list[str]:
    return [p for p in PASSAGE_BREAK.split(text) if p.strip()]


def coverage(text: str, weights: Mapping[str, float], term_map: TermMap) -> float:
    """The best share of the query's weight one passage of `text` holds, in [0, 1].
    `weights`: each query term -> its weight; `term_map`: the index's analyzer."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    low = text.lower()
    # The note's distinct words are analyzed once; only the words that mean a query term
    # are looked for again (a third of a hybrid search's time at 10k notes went to
    # splitting and analyzing every passage).
    vocab = set(words(low))
    # English words are stemmed by Porter, which only rewrites a word's end: at most its last
    # two characters are not the word's own, so a word that does not start with a term's
    # stem less three characters cannot mean that term (tests/unit/test_passages.py checks it over every Porter suffix).
    prefixes = tuple(_stem_prefix(t) for t in weights)
    vocab = {w for w in vocab if w[0] >= "\u0400" or w.startswith(prefixes)}
    hits = {w: t for w, t in term_map(vocab).items() if t in weights}
    if not hits:
        return 0.0
    if len(set(hits.values())) == 1:
        held_by = [set(hits.values())]  # one term: any passage holding it is the best
    elif NOSPACE_RE.search(low):  # pairs of characters: words are not substrings to find
        held_by = _held_passage_by_passage(low, hits)
    else:
        held_by = _held_by_position(low, hits)
    best = 0.0
    for held in held_by:
        share = sum(w for term, w in weights.items() if term in held) / total
        if share > best:
            best = share
            if best >= 1.0:
                break
    return min(best, 1.0)


def _stem_prefix(term: str) -> str:
    """What every English word whose stem is `term` starts with ("" when too short to tell)."""
    return term[: max(len(term) - 3, 1)] if len(term) >= 3 else ""


def _held_passage_by_passage(low: str, hits: Mapping[str, str]) -> list[set[str]]:
    """The query terms each passage holds, splitting each passage that may hold one."""
    out = []
    for passage in passages(low):
        if any(w in passage for w in hits):
            out.append({hits[w] for w in words(passage) if w in hits})
    return out


def _held_by_position(low: str, hits: Mapping[str, str]) -> list[set[str]]:
    """The query terms each passage holds, from where each hit word occurs as a whole
    word (index/tokens.py: a run of word characters, inner dots joining runs)."""
    ends = [m.end() for m in BREAK_END.finditer(low)]
    held: dict[int, set[str]] = {}
    size = len(low)
    for word, term in hits.items():
        at = low.find(word)
        while at != -1:
            end = at + len(word)
            if _whole_word(low, at, end, size):
                held.setdefault(bisect_right(ends, at), set()).add(term)
            at = low.find(word, at + 1)
    return list(held.values())


def _whole_word(text: str, start: int, end: int, size: int) -> bool:
    match = WORD_CHAR.match
    if start and (match(text, start - 1) or (text[start - 1] == "." and start >= 2 and match(text, start - 2))):
        return False
    return not (end < size and (match(text, end) or (text[end] == "." and end + 1 < size and match(text, end + 1))))


__all__ = ["coverage", "passages"]
