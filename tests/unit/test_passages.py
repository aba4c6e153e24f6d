"""Passage coverage (search/passages.py): the share of a query's weight one sentence or
line of a note holds. Pure: a table of texts and weights, with the index's analyzer."""

from __future__ import annotations

import pytest

from vaultmem.index.analysis import term_map
from vaultmem.search.passages import coverage, passages

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
