"""Snippets and near-duplicates (search/text.py), and the analyzer's word -> term map they use."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.index.analysis import analyze, term_map
from vaultmem.index.tokens import TOKEN_RE
from vaultmem.search.text import (
    LEAD_CHARS,
    NearDuplicates,
    Snippets,
    best_passage,
    jaccard,
    pieces_of,
    shingles,
    word_runs,
)


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
        # links stay as written (they used to become their labels: "label and Plain")
        (
            "# Title\n\n- a **bold** item\n- [[Target|label]] and [[Plain]]",
            ["Title", "a bold item", "[[Target|label]] and [[Plain]]"],
        ),
        ("e.g. this stays. And\tthis   too", ["e.g.", "this stays.", "And this too"]),
        ("---\n***\n", []),
        # a sentence break inside a link or code span does not cut it (it used to: "Dr.", "Who met x.")
        ("[[Dr. Who]] met [[X#Part|x]]. Then `a. b` ran.", ["[[Dr. Who]] met [[X#Part|x]].", "Then `a. b` ran."]),
        ("```python\nx = 1\n```", ["python", "x = 1"]),
    ],
)
def test_pieces_of(body: str, pieces: list[str]) -> None:
    assert pieces_of(body) == pieces


@pytest.mark.parametrize(
    ("body", "snippet"),
    [
        # names, links, embeds of notes, tags and code spans appear as written
        ("Set max_retries in __init__.py first.", "Set max_retries in __init__.py first."),
        ("Set `max_retries` in `__init__.py`.", "Set `max_retries` in `__init__.py`."),
        (
            "See [[Internal links]] and [[Internal links#Heading|alias]].",
            "See [[Internal links]] and [[Internal links#Heading|alias]].",
        ),
        ("| a | [[Target\\|alias]] |", "| a | [[Target\\|alias]] |"),
        (
            "![[Embed files]]\n![[Embed files#Embed a note in another note]]",
            "![[Embed files]] ![[Embed files#Embed a note in another note]]",
        ),
        ("#tag at the start, a #second one\n- #listed tag", "#tag at the start, a #second one #listed tag"),
        ("Run `x = 1` then `` a`b `` too.", "Run `x = 1` then `` a`b `` too."),
        ("`**not bold**` and [[__a note__]]", "`**not bold**` and [[__a note__]]"),
        (
            "def f(*args, **kwargs): 2 * 3 * 4; _private_name and __dunder__",
            "def f(*args, **kwargs): 2 * 3 * 4; _private_name and __dunder__",
        ),
        ("-5 degrees\n+1 vote\n**5 stars", "-5 degrees +1 vote **5 stars"),
        # emphasis markers go
        ("**bold** *it* ***both*** _it_ __two words__ ~~kept~~", "bold it both it two words ~~kept~~"),
        ("**bold with `a*b` and *nested* words**", "bold with `a*b` and nested words"),
        # images go: markdown images and embeds of image files; a markdown embed of a note stays
        ("Before ![alt text](img.png) after.", "Before after."),
        ("Logo ![](https://example.com/logo) here ![n](other.md#Part)", "Logo here ![n](other.md#Part)"),
        ("A ![[photo.png]] B ![[Photo.JPG|200]] C ![[sub/pic.webp#x]] D", "A B C D"),
        ("| x | ![[Engelbart.jpg\\|100]] |", "| x | |"),
        ("Icon ![[lucide-settings.svg#icon]] → General", "Icon → General"),
        # callout markers go, their titles and bodies stay
        ("> [!note] Title\n> Body text.", "Title Body text."),
        ("> [!warning]-\n> Folded body.", "Folded body."),
        (">[!tip]+ Open tip\n> > [!info] Nested", "Open tip Nested"),
        (
            "Write `> [!note]` for a callout; [!note] mid-line stays.",
            "Write `> [!note]` for a callout; [!note] mid-line stays.",
        ),
        # list, quote and heading markers go
        ("## Heading\n> quoted\n- item\n* star\n+ plus", "Heading quoted item star plus"),
    ],
)
def test_snippet_keeps_meaning(body: str, snippet: str) -> None:
    assert best_passage(body, [], None) == snippet


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


SNIPPET_WORDS = [
    "Boundary", "layers", "layer.", "heated", "heat", "models", "model:", "3.5", "x.heat", "heat.x", "the", "a",
    "ab", "abs", "İ", "ß", "Σ", "Архивирования", "归档实用", "\u0301", "overflow", "flows", ". ", "! ", "? ",
    "\n", "\n\n", " ", "- ", "# ", "> ", "**", "`code heat`", "[[Heat model]]", "![[heat.png]]", "_x_",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(SNIPPET_WORDS), max_size=40), min_size=1, max_size=4),
    st.sampled_from(["boundary layer", "heat models 3.5", "ab overflow flow", "архивирования heat", "归档"]),
)
def test_snippets_find_the_pieces_terms_as_analyzing_every_word_does(bodies: list[list[str]], query: str) -> None:
    """Snippets finds a piece's query terms from the words that begin as a query term's
    stem does, remembering their meaning from body to body: the same terms per piece, so
    the same snippet, as analyzing every word of every piece."""
    snippets = Snippets(terms_of(query), term_map)
    for words in bodies:
        body = " ".join(words)
        lows = [p.lower() for p in pieces_of(body)]
        assert snippets._found(pieces_of(body)) == snippets.found_by_words(lows)
        assert snippets(body) == best_passage(body, terms_of(query), term_map)


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


# Text with what a word split can meet: ASCII words, digits, underscores, punctuation and
# every kind of space, letters of other scripts, combining marks, digits of other scripts.
HOSTILE_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("abcXYZ019_ .,;:!?-'\"`*#[]()\t\n\r\x0b\x0c\x1c\x85\xa0")),
        st.sampled_from(list("éßøǺ٣中Ж 　😀")),
    ),
    max_size=60,
)


@settings(max_examples=400, deadline=None)
@given(HOSTILE_TEXT)
def test_word_runs_are_the_regex_word_runs(text: str) -> None:
    assert word_runs(text) == re.findall(r"\w+", text)


def _twins_as_before(bodies: list[tuple[str, str]], threshold: float = 0.85) -> list[str | None]:
    """The near-duplicate rule as first written: identical after spacing and case, or
    word-3-gram Jaccard at least `threshold`."""
    kept: list[tuple[str, str, set[tuple[str, ...]]]] = []
    out: list[str | None] = []
    for key, body in bodies:
        norm = " ".join(body.lower().split())
        sig = set(zip(*(re.findall(r"\w+", norm)[i:] for i in range(3)), strict=False))
        tokens = re.findall(r"\w+", norm)
        sig = {tuple(tokens)} if 0 < len(tokens) < 3 else sig
        twin = next(
            (k for k, n, g in kept if n == norm or (norm and sig and jaccard(sig, g) >= threshold)),
            None,
        )
        if twin is None:
            kept.append((key, norm, sig))
        out.append(twin)
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(HOSTILE_TEXT, st.sampled_from(["", " ", "!!", "a b c d", "A  b c D", "a b c d e"])), max_size=6)
)
def test_near_duplicates_decide_as_the_rule_says(texts: list[str]) -> None:
    bodies = [(f"{i}.md", t) for i, t in enumerate(texts)]
    for prepare in (False, True):
        seen = NearDuplicates(0.85)
        if prepare:
            for key, body in bodies:
                seen.prepare(key, body)
        assert [seen.first_twin(key, body) for key, body in bodies] == _twins_as_before(bodies)


def test_a_jaccard_threshold_is_a_share() -> None:
    with pytest.raises(ValueError):
        NearDuplicates(1.5)
