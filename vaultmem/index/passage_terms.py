"""A note's index terms by passage (sentence or line), made once when the note is
indexed: search/passages.py measures from them how much of a query one passage says,
without reading the note's file at search time. Pure, stdlib only."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from vaultmem.index.tokens import words

# Sentence ends, semicolons and colons (a list item's "Do this:" before its example), and
# line breaks: a markdown line is a paragraph, a list item, a table row or a heading.
# (The lookahead first, as search/text.py's _SPLIT_RE: ~1.5x faster, the same splits.)
PASSAGE_BREAK = re.compile(r"(?=\s)(?:(?<=[.!?:;])\s+|\n+)")

TermMap = Callable[[Iterable[str]], Mapping[str, str]]  # lower-cased words -> their index terms


def passages(text: str) -> list[str]:
    return [p for p in PASSAGE_BREAK.split(text) if p.strip()]


def passage_terms(text: str, term_map: TermMap) -> str:
    """The index terms of `text` with the passages that hold each, for
    `Coverage.of_terms`: ` term@0,3,7` per distinct term in order of first use (passages
    numbered from 0), the whole framed by spaces (no term holds a space, `@` or `,`). Made
    once when a note is indexed (index/engine.py), so a search reads ~1.5 kB per candidate
    instead of scanning its body: the same coverage, found with one string search per
    query term (tests/unit/test_passages.py checks both ways agree)."""
    return passage_analysis(text, term_map)[1]


def passage_analysis(text: str, term_map: TermMap) -> tuple[Counter[str], str]:
    """(how often each index term occurs in `text`, its `passage_terms`), in one pass over
    its words: the indexer counts a body's terms for BM25 from the same analysis that
    gives its passage terms (the counts are those of analysis.analyze: no word runs across
    a passage break, tests/unit/test_passages.py checks)."""
    per_passage = [words(p) for p in passages(text.lower())]
    meaning = term_map({w for ws in per_passage for w in ws})
    every: list[str] = []
    where: dict[str, list[str]] = {}
    for i, ws in enumerate(per_passage):
        terms = [meaning[w] for w in ws if w in meaning]
        if terms:
            every += terms
            at = str(i)
            for term in dict.fromkeys(terms):
                where.setdefault(term, []).append(at)
    found = " ".join(f"{term}@{','.join(held)}" for term, held in where.items())
    return Counter(every), f" {found} " if found else ""


__all__ = ["PASSAGE_BREAK", "TermMap", "passage_analysis", "passage_terms", "passages"]
