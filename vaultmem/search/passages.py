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
from collections.abc import Callable, Iterable, Mapping

from vaultmem.index.tokens import words

# Sentence ends, semicolons and colons (a list item's "Do this:" before its example), and
# line breaks: a markdown line is a paragraph, a list item, a table row or a heading.
PASSAGE_BREAK = re.compile(r"(?<=[.!?:;])\s+|\n+")

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
    # The note's distinct words are analyzed once, and only passages holding one of the
    # words that mean a query term are split into words again: most passages of a note
    # hold none (a third of a hybrid search's time at 10k notes went to analyzing them all).
    hits = {w: t for w, t in term_map(set(words(low))).items() if t in weights}
    if not hits:
        return 0.0
    best = 0.0
    for passage in passages(low):
        if not any(w in passage for w in hits):
            continue
        held = {hits[w] for w in words(passage) if w in hits}
        share = sum(w for term, w in weights.items() if term in held) / total
        if share > best:
            best = share
            if best >= 1.0:
                break
    return min(best, 1.0)


__all__ = ["coverage", "passages"]
