"""Snippets and near-duplicates (search/text.py), and the analyzer's word -> term map they use."""

from __future__ import annotations

import re
import sys

import pytest

from vaultmem.index.analysis import analyze, term_map
from vaultmem.index.tokens import TOKEN_RE
from vaultmem.search.text import LEAD_CHARS, NearDuplicates, best_passage, jaccard, pieces_of, shingles


def terms_of(text: str) -> list[str]:
    return list(dict.fromkeys(analyze(text)))


def test_lead_chars_are_what_the_old_marker_pattern_stripped() -> None:
    # pieces_of strips with str.lstrip(LEAD_CHARS) what ^[#>\-*+\s]+ stripped.
    pattern = re.compile(r"^[#>\-*+\s]+")
    spaces = {chr(c) for c in range(sys.maxunicode + 1) if re.fullmatch(r"\s", chr(c))}
    assert set(LEAD_CHARS) == spaces | set("#>-*+")
    for text in ["- item", "## Heading", "> quote", " \u00a0* - x", "+ plus", "text", "-", "\u3000# x y"]:
        assert text.lstrip(LEAD_CHARS) == pattern.sub("", text)


@pytest.mark.parametrize(
    ("body", "pieces"),
    [
        ("", []),
        ("One sentence. Two sentences! Three?", ["One sentence.", "Two sentences!", "Three?"]),
        ("# Title\n\n- a **bold** item\n- [[Target|label]] and [[Plain]]", ["Title", "a bold item", "label and Plain"]),
        ("e.g. this stays. And\tthis   too", ["e.g.", "this stays.", "And this too"]),
        ("---\n***\n", []),
        ("[[Dr. Who]] met [[X#Part|x]].", ["Dr.", "Who met x."]),
    ],
)
def test_pieces_of(body: str, pieces: list[str]) -> None:
    assert pieces_of(body) == pieces


FILLER = "This filler sentence follows every piece, so the best piece never takes its predecessor along."


@pytest.mark.parametrize(
    ("pieces", "query", "best"),
    [
        # the piece with the most distinct query terms wins
        (["Cats sleep.", "Boundary layers thicken downstream.", "A boundary."], "boundary layer", 1),
        # stems match: "heated" ~ "heat", "models" ~ "model"
        (["Nothing here.", "A heated wing.", "Many models of heat."], "heat models", 2),
        # stop words and one-letter words never count
        (["The a.", "Real words."], "the a real", 1),
        # dotted tokens are one term, as the analyzer sees them
        (["Speed 2.5 here.", "Speed 3.5 there."], "3.5", 1),
    ],
)
def test_best_passage_picks_the_piece_with_most_query_terms(pieces: list[str], query: str, best: int) -> None:
    body = "\n".join(f"{p}\n{FILLER}" for p in pieces)
    assert best_passage(body, terms_of(query), term_map, limit=120).startswith(pieces[best])


def test_best_passage_is_about_limit_characters_and_marks_the_cut() -> None:
    body = " ".join(f"Sentence number {i} about pressure." for i in range(50))
    snippet = best_passage(body, terms_of("pressure"), term_map, limit=80)
    assert len(snippet) <= 80 and snippet.endswith("…")


@pytest.mark.parametrize(
    "text",
    ["", "one", "The quick brown fox. Jumps over e.g. 3.5 lazy dogs!", "Ünïcödé wörds and CAPS and a I x", "a an the"],
)
def test_term_map_matches_analyze(text: str) -> None:
    words = set(TOKEN_RE.findall(text.lower()))
    assert set(term_map(words).values()) == set(analyze(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", set()),
        ("a b", {("a", "b")}),
        ("A b C d", {("a", "b", "c"), ("b", "c", "d")}),
        ("x x x x", {("x", "x", "x")}),
    ],
)
def test_shingles(text: str, expected: set[tuple[str, ...]]) -> None:
    assert shingles(text) == expected


def test_jaccard() -> None:
    assert jaccard(set(), set()) == 1.0
    assert jaccard({("a",)}, {("b",)}) == 0.0
    assert jaccard({("a",), ("b",)}, {("a",)}) == 0.5


def test_near_duplicates_with_and_without_a_prepared_signature() -> None:
    long = " ".join(f"word{i}" for i in range(100))
    bodies = [
        ("a.md", long),
        ("b.md", long.upper()),  # identical after case
        ("c.md", long + " extra"),  # Jaccard 0.98
        ("d.md", "something else entirely, with many other words in it"),
    ]
    for prepare in (False, True):
        seen = NearDuplicates(0.85)
        if prepare:
            for key, body in bodies:
                seen.prepare(key, body)
        assert [seen.first_twin(key, body) for key, body in bodies] == [None, "a.md", "a.md", None]
