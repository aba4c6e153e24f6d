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
from collections.abc import Container, Iterable, Iterator, Mapping

from vaultmem.index.passage_terms import TermMap, passage_terms, passages
from vaultmem.index.tokens import NOSPACE_RE, WORD_CHAR, words
from vaultmem.index.tokens import WORD_CLASS as W

# The breaks of index/passage_terms.py's PASSAGE_BREAK, matched from the punctuation (no
# look-behind: ~6x faster to scan); a passage starts where one ends.
BREAK_END = re.compile(r"\n+|[.!?:;]\s+")


def coverage(text: str, weights: Mapping[str, float], term_map: TermMap) -> float:
    """The best share of the query's weight one passage of `text` holds, in [0, 1].
    `weights`: each query term -> its weight; `term_map`: the index's analyzer."""
    return Coverage(weights, term_map)(text)


class Meanings:
    """Which query term each word means (None: none), remembered from one text to the
    next: the texts one search reads (its candidates, its results' snippets) share most
    of their words."""

    def __init__(self, wanted: Container[str], term_map: TermMap) -> None:
        self.wanted = wanted
        self.term_map = term_map
        self.known: dict[str, str | None] = {}

    def __call__(self, word: str) -> str | None:
        known = self.known
        if word in known:
            return known[word]
        term = self.term_map([word]).get(word)
        found = known[word] = term if term in self.wanted else None
        return found


class Coverage:
    """`coverage` of one query, for one note after another: what each word of a note
    means (which query term, if any) is worked out once per query, since the candidates
    of a search share most of their words."""

    def __init__(self, weights: Mapping[str, float], term_map: TermMap) -> None:
        self.weights = dict(weights)
        self.total = sum(self.weights.values())
        self.term_map = term_map
        self._meaning_of = Meanings(self.weights, term_map)
        # English words are stemmed by Porter, which only rewrites a word's end, so a word
        # that does not start with a term's stem less two characters cannot mean that term
        # (_stem_prefix; tests/unit/test_passages.py checks every pair of Porter suffixes).
        self._prefixes = tuple({_stem_prefix(t) for t in self.weights})
        # When every term is such a word, a note's words that can mean one are found by a
        # search for those beginnings: far fewer than the note's words, which are then
        # neither split out nor analyzed (most of the time this took, at 50k notes).
        self._starts = english_starts(self.weights)

    def __call__(self, text: str) -> float:
        """The coverage of a note's body: a scan of its file, for a note whose terms are not
        indexed (one separate entry point, so tests can tell such scans apart)."""
        return self.measure(text)

    def measure(self, text: str) -> float:
        """The coverage of any text (a title as one line, say)."""
        if self.total <= 0:
            return 0.0
        low = text.lower()
        if NOSPACE_RE.search(low):  # pairs of characters: words are not substrings to find
            hits = self._hits(set(words(low)))
            if len(set(hits.values())) > 1:
                return self._best(_held_passage_by_passage(low, hits))
            found = [(0, t) for t in hits.values()]
        elif self._starts is not None:
            meaning = self._meaning_of
            found = [(at, t) for at, word in self._starts.finditer(low) if (t := meaning(word)) is not None]
        else:
            found = _positions(low, self._hits(set(words(low))))
        terms = {t for _, t in found}
        if len(terms) <= 1:  # one term (or none): any passage holding it is the best
            return self._best([terms])
        found.sort()
        return self._best(_passages_of(low, found))

    def of_terms(self, terms: str) -> float:
        """The coverage of the text whose `passage_terms` are `terms`: what calling this
        object on the text returns, to the last bit (each passage's weights are summed in
        the weights' order, as `_best` sums them)."""
        if self.total <= 0:
            return 0.0
        sums: dict[str, float] = {}
        for term, weight in self.weights.items():
            at = terms.find(f" {term}@")
            if at == -1:
                continue
            start = at + len(term) + 2
            for passage in terms[start : terms.find(" ", start)].split(","):
                sums[passage] = sums.get(passage, 0) + weight
        return min(max(sums.values(), default=0.0) / self.total, 1.0)

    def _hits(self, vocab: set[str]) -> dict[str, str]:
        """The words of `vocab` that mean a query term -> that term."""
        meaning = self._meaning_of.known
        new = [w for w in vocab if w not in meaning]
        if new:
            prefixes = self._prefixes
            mapped = self.term_map(w for w in new if w[0] >= "\u0400" or w.startswith(prefixes))
            for w in new:
                term = mapped.get(w)
                meaning[w] = term if term in self.weights else None
        return {w: t for w in vocab if (t := meaning[w]) is not None}

    def _best(self, held_by: Iterable[set[str]]) -> float:
        best = 0.0
        for held in held_by:
            # in the weights' order, so that equal sets always sum to the same float
            share = sum(w for term, w in self.weights.items() if term in held) / self.total
            if share > best:
                best = share
                if best >= 1.0:
                    break
        return min(best, 1.0)


def english_starts(terms: Iterable[str]) -> WordStarts | None:
    """The words that can mean one of `terms` (see Coverage), when every term is an English
    one; else None (a word must then be analyzed to know)."""
    prefixes = {_stem_prefix(t) for t in terms}
    english = prefixes and all(p and p[0] < "\u0400" and "." not in p for p in prefixes)
    return WordStarts(prefixes) if english else None


def _stem_prefix(term: str) -> str:
    """What every English word whose stem is `term` starts with: Porter rewrites at most
    the last two characters of what it keeps of a word ("sensybiliti" -> "sensyble"),
    never a word's first character, nor a word of two characters."""
    return term[: max(len(term) - 2, 1)]


# The rest of a word after its first characters (index/tokens.py: runs of word characters,
# inner dots joining runs), and the pattern of a whole word that begins with a prefix, which
# WordStarts finds as it does.
_WORD_REST = re.compile(rf"{W}*(?:\.{W}+)*")


def word_starts_pattern(prefixes: Iterable[str]) -> re.Pattern[str]:
    """The words that begin with one of `prefixes`, as one pattern (WordStarts' reference)."""
    alternatives = "|".join(re.escape(p) for p in sorted(set(prefixes), key=lambda p: (-len(p), p)))
    return re.compile(rf"(?<!{W})(?<!{W}\.)(?:{alternatives}){W}*(?:\.{W}+)*")


class WordStarts:
    """The words of a text that begin with one of `prefixes` (each of word characters, no
    dot), as word_starts_pattern(prefixes).finditer finds them: (start, word) in order.

    That pattern's four classes of word characters (every script's) cost ~1.4 ms to compile,
    a few percent of a search that makes one for each new query; here the query's own
    pattern is the prefixes alone, and the classes, compiled once, are asked only where a
    prefix occurs."""

    def __init__(self, prefixes: Iterable[str]) -> None:
        alternatives = "|".join(re.escape(p) for p in sorted(set(prefixes), key=lambda p: (-len(p), p)))
        self._search = re.compile(alternatives).search

    def finditer(self, text: str) -> Iterator[tuple[int, str]]:
        search, rest, word_char = self._search, _WORD_REST.match, WORD_CHAR.match
        at = 0
        while (m := search(text, at)) is not None:
            start = m.start()
            if start and (
                word_char(text, start - 1) or (text[start - 1] == "." and start > 1 and word_char(text, start - 2))
            ):
                at = start + 1  # inside a word, or after a word's inner dot: not a word's start
                continue
            end = rest(text, m.end()).end()  # type: ignore[union-attr]  # `W*` always matches
            yield start, text[start:end]
            at = end


def _held_passage_by_passage(low: str, hits: Mapping[str, str]) -> list[set[str]]:
    """The query terms each passage holds, splitting each passage that may hold one."""
    out = []
    for passage in passages(low):
        if any(w in passage for w in hits):
            out.append({hits[w] for w in words(passage) if w in hits})
    return out


def _positions(low: str, hits: Mapping[str, str]) -> list[tuple[int, str]]:
    """Where each hit word occurs as a whole word, with the term it means."""
    found = []
    size = len(low)
    for word, term in hits.items():
        at = low.find(word)
        while at != -1:
            if _whole_word(low, at, at + len(word), size):
                found.append((at, term))
            at = low.find(word, at + 1)
    return found


def _passages_of(low: str, found: list[tuple[int, str]]) -> list[set[str]]:
    """The query terms each passage holds, from the words' positions in order: two words
    share a passage unless a break lies between them."""
    out: list[set[str]] = []
    held: set[str] = set()
    before = -1
    for at, term in found:
        if before >= 0 and BREAK_END.search(low, before, at) is not None:
            out.append(held)
            held = set()
        held.add(term)
        before = at
    out.append(held)
    return out


def _whole_word(text: str, start: int, end: int, size: int) -> bool:
    match = WORD_CHAR.match
    if start and (match(text, start - 1) or (text[start - 1] == "." and start >= 2 and match(text, start - 2))):
        return False
    return not (end < size and (match(text, end) or (text[end] == "." and end + 1 < size and match(text, end + 1))))


__all__ = ["Coverage", "coverage", "passage_terms", "passages"]  # passage_terms, passages: re-exported
