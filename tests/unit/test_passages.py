"""Passage coverage (search/passages.py): the share of a query's weight one sentence or
line of a note holds. Pure: a table of texts and weights, with the index's analyzer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.index.analysis import term_map
from vaultmem.search.passages import Coverage, coverage, passage_terms, passages

W = {"emb": 2.0, "file": 1.0, "canva": 1.0}  # analyzed terms (Porter: embed -> emb, canvas -> canva)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("To embed a file, type ![[ and its name.", 3 / 4),  # embed + file in one sentence
        ("Embed files.\nCanvas files too.", 3 / 4),  # best line wins, lines do not add up
        ("Embed files in a canvas the same way.", 1.0),  # stems match: files -> file
        ("Embedding a file in a canvas", 2 / 4),  # Porter stems embedding to embedd, not emb
        ("Embed here. A file there.", 2 / 4),  # split at the sentence end
        ("Embed: a file", 2 / 4),  # a colon ends a passage (list items: "Do this:")
        ("nothing relevant", 0.0),
        ("", 0.0),
    ],
)
def test_coverage_table(text: str, expected: float) -> None:
    assert coverage(text, W, term_map) == pytest.approx(expected)


def test_weights_decide_the_share() -> None:
    # a word no note holds keeps the highest weight (fulltext.term_weights): a passage with
    # only the common words covers little
    weights = {"banana": 9.0, "bread": 3.0, "recip": 3.0}
    assert coverage("A recipe for bread.", weights, term_map) == pytest.approx(6 / 15)
    assert coverage("anything", {}, term_map) == 0.0


def test_passages_split_sentences_and_lines() -> None:
    assert passages("One. Two!\n\nThree; four:  five\n") == ["One.", "Two!", "Three;", "four:", "five"]


def _coverage_passage_by_passage(text: str, weights: dict[str, float]) -> float:
    """The definition, analyzing every passage in full (what `coverage` must equal)."""
    from vaultmem.index.tokens import words

    total = sum(weights.values())
    best = 0.0
    for passage in passages(text.lower()):
        held = set(term_map(words(passage)).values())
        best = max(best, sum(w for term, w in weights.items() if term in held) / total)
    return min(best, 1.0)


PIECES = [
    "Embed", "files", "canvas", "e.g.", "3.5", "file.md", "归档实用程序", "アーカイブ", "Архивирования",
    "हिन्दी", "ไฟล์", "the", "a", ". ", ": ", "; ", "\n", " ", "!", "?", "—", "K", "ß", "İ", "embedded",
    "x.embed", "embed.x", "..", ".", "_", "\u0301", "\t", "\r\n", "overflow", "file", "3", "5", "canvas.",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.sampled_from(["", " "]))
def test_coverage_equals_the_definition(parts: list[str], glue: str) -> None:
    """Finding only the words that mean a query term gives the same share as analyzing
    every passage, in every script (pieces glued with and without spaces)."""
    text = glue.join(parts)
    weights = {"emb": 2.0, "file": 1.0, "canva": 1.0, "归档": 0.5, "архивирован": 1.5, "ไฟ": 0.7, "3.5": 0.2}
    assert coverage(text, weights, term_map) == _coverage_passage_by_passage(text, weights)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.sampled_from(["", " "]))
def test_coverage_from_passage_terms_is_the_coverage_of_the_text(parts: list[str], glue: str) -> None:
    """A search measures coverage from the passage terms made when the note was indexed:
    the very float scanning the text gives (== , not approx: a tie between two notes must
    break the same way whichever way each was measured)."""
    text = glue.join(parts)
    weights = {"emb": 2.0, "file": 1.0, "canva": 1.0, "归档": 0.5, "архивирован": 1.5, "ไฟ": 0.7, "3.5": 0.2}
    query = Coverage(weights, term_map)
    assert query.of_terms(passage_terms(text, term_map)) == query(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.sampled_from(["", " "]))
def test_passage_analysis_counts_the_terms_analyze_gives(parts: list[str], glue: str) -> None:
    """The indexer counts a body's terms for BM25 from the same pass that makes its
    passage terms: the counts of analyzing the whole text."""
    from collections import Counter

    from vaultmem.index.analysis import analyze
    from vaultmem.index.passage_terms import passage_analysis

    text = glue.join(parts)
    counts, terms = passage_analysis(text, term_map)
    assert counts == Counter(analyze(text))
    assert terms == passage_terms(text, term_map)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Embed files.\nCanvas files too.", " emb@0 file@0,1 canva@1 too@1 "),
        ("The e.g. case: 3.5 files", " e.g@0 case@1 3.5@2 file@2 "),  # stop words out, inner dots kept
        ("归档实用", " 归档@0 档实@0 实用@0 "),  # a script without spaces: its pairs
        ("the a of", ""),  # nothing the index keeps
        ("", ""),
    ],
)
def test_passage_terms_table(text: str, terms: str) -> None:
    assert passage_terms(text, term_map) == terms


def test_coverage_from_passage_terms_table() -> None:
    query = Coverage(W, term_map)
    for text in ("To embed a file, type ![[ and its name.", "Embed files.\nCanvas files too.", "nothing", ""):
        assert query.of_terms(passage_terms(text, term_map)) == query(text)
    # a term that is the start of another is not that term ("file" is not "filer")
    assert Coverage({"file": 1.0, "x": 1.0}, term_map).of_terms(" filer@0 x@0 ") == 0.5
    # the best passage's share, not the sum over passages
    assert Coverage({"a1": 1.0, "b1": 1.0, "c1": 2.0}, term_map).of_terms(" a1@0,2 b1@2 c1@1 ") == 0.5
    assert Coverage({}, term_map).of_terms(" emb@0 ") == 0.0


ENGLISH_PIECES = [
    "Embed", "embedding", "files", "Filed", "canvas", "e.g.", "file.md", "x.embed", "embed.x", "the", "a", "ab",
    "abs", ". ", ": ", "; ", "\n", " ", "!", "—", "..", ".", "_", "\u0301", "\t", "overflow", "flows", "3d",
    "3d.", "Архивирования", "İ", "ß", "Ab", "AB.", "files\n\n",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(ENGLISH_PIECES), max_size=30), min_size=1, max_size=4))
def test_one_query_over_many_english_notes_equals_the_definition(notes: list[list[str]]) -> None:
    """A query of English terms finds its words by their beginnings (Coverage._starts),
    remembering what each word means from one note to the next; every note's share is
    still the definition's, short terms ("ab", "3d") included."""
    weights = {"emb": 2.0, "file": 1.0, "canva": 1.0, "overflow": 0.5, "ab": 0.3, "3d": 0.4, "flow": 0.6}
    query = Coverage(weights, term_map)
    assert query._starts is not None
    for parts in notes:
        text = " ".join(parts)
        assert query(text) == _coverage_passage_by_passage(text, weights)
        assert query.of_terms(passage_terms(text, term_map)) == query(text)


PORTER_SUFFIXES = [
    "ational",
    "tional",
    "enci",
    "anci",
    "izer",
    "bli",
    "alli",
    "entli",
    "eli",
    "ousli",
    "ization",
    "ation",
    "ator",
    "alism",
    "iveness",
    "fulness",
    "ousness",
    "aliti",
    "iviti",
    "biliti",
    "logi",
    "icate",
    "ative",
    "alize",
    "iciti",
    "ical",
    "ful",
    "ness",
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
    "sses",
    "ies",
    "ss",
    "s",
    "eed",
    "ed",
    "ing",
    "at",
    "bl",
    "iz",
    "y",
    "e",
    "ly",
    "li",
    "ers",
    "ings",
    "ingly",
    "edly",
    "yi",
    "ybl",
    "yli",
]
STEMS = [
    "sens",
    "relat",
    "condit",
    "troubl",
    "agon",
    "hop",
    "conflat",
    "happ",
    "pon",
    "gener",
    "electr",
    "feas",
    "prob",
    "digit",
    "form",
    "a",
    "e",
    "o",
    "ab",
    "by",
    "ly",
    "y",
]


def test_an_english_word_starts_with_its_stems_prefix() -> None:
    """Passage coverage and snippets look up only the English words that start with a
    query term's stem less two characters (passages._stem_prefix): Porter rewrites at most
    the last two characters of what it keeps ("sensybiliti" -> "sensyble"), so no word
    that means the term is skipped. Every pair of Porter's suffixes on a set of stems, with
    a third ending."""
    from vaultmem.index.analysis import _stem
    from vaultmem.search.passages import _stem_prefix

    missed = [
        (word, _stem(word))
        for base in STEMS
        for first in PORTER_SUFFIXES
        for second in ("", *PORTER_SUFFIXES)
        for third in ("", "s", "ing", "ed", "iti", "li")
        if not (word := base + first + second + third).startswith(_stem_prefix(_stem(word)))
    ]
    assert missed == []


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("abcfilo3._- .\n\t'éß\u0301\u0915\u093f\u4e2d\u200c")), max_size=80),
    st.sets(
        st.text(alphabet=st.sampled_from(list("abcfilo3_éß\u0915")), min_size=1, max_size=4), min_size=1, max_size=5
    ),
)
def test_word_starts_find_what_the_one_pattern_finds(text: str, prefixes: set[str]) -> None:
    """WordStarts (a search for the prefixes alone, the word's edges checked after) finds
    the very words, at the very places, of the pattern that says it all at once: words that
    begin after a non-word character or the text's start, not after a word's inner dot."""
    from vaultmem.search.passages import WordStarts, word_starts_pattern

    expected = [(m.start(), m.group()) for m in word_starts_pattern(prefixes).finditer(text)]
    assert list(WordStarts(prefixes).finditer(text)) == expected
