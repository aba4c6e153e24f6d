"""Table and property tests of search/grep.py `KeywordScan`, the byte-level side of `query`.

Its promise: a note the full scorer (`score_text`: `keyword_pattern`, re.IGNORECASE over
decoded text) would match in its body is never rejected before decoding, and an ASCII
text scored from its folded bytes gets exactly the numbers the scorer gets. re's case
rules are checked against `re` itself: the characters outside ASCII it matches with ASCII
letters, and the spellings it allows for any other keyword character.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.search.grep import (
    _EXTRA_CASES,
    _TWIN_CHARS,
    ASCII_CASE_TWINS,
    FOLD,
    KeywordScan,
    case_variants,
    keyword_counts,
    keyword_pattern,
    keywords,
    score_text,
)
from vaultmem.vault.frontmatter import body_offset, split_document

EVERY_CHAR = "".join(map(chr, range(0x110000)))  # lone surrogates included: re takes them
CASED = "".join(c for c in EVERY_CHAR if c.lower() != c or c.upper() != c or ord(c) in (_EXTRA_CASES or {}))
ASCII_WORD = "abcdefghijklmnopqrstuvwxyz0123456789_"


def may_match(scan: KeywordScan, raw: bytes) -> bool:
    """What `query` asks before decoding (services/query.py `_score`)."""
    if scan.ascii or (scan.ascii_text_counts and raw.isascii()):
        return scan.may_match_bytes(raw, raw.translate(FOLD))
    return scan.may_match_text(raw.decode("utf-8", errors="replace"))


def body_counts(body: str, words: list[str]) -> tuple[int, set[str]]:
    return keyword_counts(body, keyword_pattern(words), words)


# --- re's case rules -------------------------------------------------------------------------


def test_ascii_case_twins_are_every_non_ascii_char_re_matches_with_ascii() -> None:
    pattern = re.compile(f"[{ASCII_WORD}]", re.IGNORECASE)
    found = pattern.findall(EVERY_CHAR[0x80:])
    assert sorted(found) == sorted(_TWIN_CHARS)
    for letter, twins in ASCII_CASE_TWINS.items():
        for twin in twins:
            assert [c for c in ASCII_WORD if re.fullmatch(c, twin, re.IGNORECASE)] == [letter]


def test_no_other_non_ascii_keyword_char_matches_ascii_text() -> None:
    """`ascii_text_counts`: a keyword with a character outside ASCII and outside the twins
    never matches ASCII text (only cased characters can match another one at all)."""
    ascii_text = "".join(map(chr, range(0x80)))
    hits = {c for c in CASED if not c.isascii() and re.search(re.escape(c), ascii_text, re.IGNORECASE)}
    assert hits <= _TWIN_CHARS


SAMPLE = sorted(
    c
    for c in set("abcikszé�À谷档ſıİ\u212aµμσςβϐθϑκϰπϖρϱφϕεϵιͅ\u1fbeвдостъѣꙋᲀᲈṡẛﬅﬆΐΰάωΩ\u2126å\u212bǆǅǄ5_\u0307ꭰᏸ𐐨𞤢")
    | {chr(k) for k in _EXTRA_CASES or {}}
    | {chr(v) for vs in (_EXTRA_CASES or {}).values() for v in vs}
    if len(c.lower()) == 1
)


@pytest.mark.skipif(_EXTRA_CASES is None, reason="this Python keeps re's case table elsewhere")
@pytest.mark.parametrize("char", SAMPLE, ids=lambda c: f"U+{ord(c):04X}")
def test_case_variants_cover_every_char_re_matches(char: str) -> None:
    """Every character re.IGNORECASE matches with a keyword character (over all of Unicode)
    lower-cases to one of its variants, or is İ and the variants say so."""
    key = char.lower()  # keywords are lower-cased
    found = case_variants(key)
    assert found is not None
    variants, dotted_i = found
    for text_char in re.findall(re.escape(key), EVERY_CHAR, re.IGNORECASE):
        assert text_char.lower() in variants or (dotted_i and text_char == "\u0130"), hex(ord(text_char))


@pytest.mark.skipif(_EXTRA_CASES is None, reason="this Python keeps re's case table elsewhere")
def test_case_variants_cover_every_cased_lower_case_char() -> None:
    """The same rule for every lower-case character with case, against every cased one
    (a character without case matches only itself)."""
    for key in {c for c in CASED if c.lower() == c}:
        found = case_variants(key)
        assert found is not None
        variants, dotted_i = found
        for text_char in re.findall(re.escape(key), CASED, re.IGNORECASE):
            assert text_char.lower() in variants or (dotted_i and text_char == "\u0130"), (key, text_char)


def test_lower_keeps_length_except_dotted_capital_i() -> None:
    assert [c for c in EVERY_CHAR if len(c.lower()) != 1] == ["\u0130"]


# --- tables ----------------------------------------------------------------------------------

# (query, body text) -> does the full scorer match? (and so must `may_match`)
MAY_MATCH = [
    pytest.param("wine", "Red WINE.", True, id="ascii"),
    pytest.param("wine", "swine only", False, id="ascii-inside-a-word"),
    pytest.param("wine", "vin rouge", False, id="ascii-absent"),
    pytest.param("kelvin", "300 \u212aELVIN", True, id="kelvin-sign-matches-k"),
    pytest.param("kelvin", "300 \u212aelvin", True, id="kelvin-sign-lower"),
    pytest.param("shock", "\u017fhock wave", True, id="long-s-matches-s"),
    pytest.param("istanbul", "\u0130STANBUL", True, id="dotted-capital-i-matches-i"),
    pytest.param("istanbul", "\u0131stanbul", True, id="dotless-i-matches-i"),
    pytest.param("wine", "\u0130 wine", True, id="ascii-keyword-in-non-ascii-text"),
    pytest.param("wine", "éwine", False, id="letter-before-is-no-word-start"),
    pytest.param("wine", "«wine»", True, id="punctuation-outside-ascii-before"),
    pytest.param("ıi", "II", True, id="dotless-i-keyword-matches-ascii-i"),
    pytest.param("ıi", "\u0130\u0130", True, id="dotless-i-keyword-matches-dotted-capital"),
    pytest.param("çiçek", "Ç\u0130ÇEK", True, id="turkish-dotted-capital-in-non-ascii-keyword"),
    pytest.param("ſhock", "SHOCK", True, id="long-s-keyword-matches-ascii-s"),
    pytest.param("ſhock", "ſhock", True, id="long-s-keyword-itself"),
    pytest.param("straße", "STRAẞE", True, id="sharp-s-capital"),
    pytest.param("straße", "STRASSE", False, id="sharp-s-is-not-ss"),
    pytest.param("ΟΔΟΣ", "οδοσ", True, id="final-sigma-keyword-medial-text"),
    pytest.param("οδοσ", "ΟΔΟΣ", True, id="medial-sigma-keyword-final-text"),
    pytest.param("οδος", "ΟΔΟΣ ΑΛΛΟ", True, id="final-sigma-keyword-capital-text"),
    pytest.param("μm", "5 µm", True, id="mu-matches-micro-sign"),
    pytest.param("µm", "5 ΜM", True, id="micro-sign-matches-capital-mu"),
    pytest.param("архив", "АРХИВ", True, id="cyrillic-capital"),
    pytest.param("архив", "архᲀ", False, id="cyrillic-other-word"),
    pytest.param("архив", "архиᲀ", True, id="cyrillic-rounded-ve"),
    pytest.param("добро", "ДᲁБРᲂ", False, id="cyrillic-mixed-no-match"),
    pytest.param("добро", "дᲂбрᲂ", True, id="cyrillic-rounded-o"),
    pytest.param("归档", "文件归档", False, id="cjk-no-word-start"),
    pytest.param("归档", "文件 归档", True, id="cjk"),
    pytest.param("θεωρία", "ϑΕΩΡΊΑ", True, id="greek-theta-symbol"),
    pytest.param("café heat", "HEAT", True, id="mixed-ascii-keyword-in-ascii-text"),
    pytest.param("café heat", "CAFÉ", True, id="mixed-accented-keyword"),
    pytest.param("café heat", "cafe", False, id="mixed-no-accent-no-match"),
    pytest.param("σσσσσσσσ", "ΣΣΣΣΣΣΣΣ", True, id="many-variants-piece"),
    pytest.param("ﬅ", "ﬆ", True, id="ligature-extra-case"),
]


@pytest.mark.parametrize(("query", "body", "matches"), MAY_MATCH)
def test_may_match_never_drops_a_match(query: str, body: str, matches: bool) -> None:
    words = keywords(query)
    scorer = score_text("", body, keyword_pattern(words), words, 0) is not None
    assert scorer == matches
    scan = KeywordScan(words)
    for raw in (body.encode(), f"---\ntitle: x\n---\n{body}\n".encode(), b"\xef\xbb\xbf" + body.encode()):
        if matches:
            assert may_match(scan, raw)


# (query, ASCII text) -> (hits, covered keywords), from the scorer
COUNTS = [
    pytest.param("wine", "Red wine, WINES; swine.", id="prefix-and-inside"),
    pytest.param("wine", "wine at the start", id="at-start"),
    pytest.param("wine", "_wine 9wine wine_ wine9", id="word-characters-around"),
    pytest.param("heat heating", "heating heat HEATED", id="keyword-prefix-of-another"),
    pytest.param("a ab abc", "abc ab a abcd", id="prefix-chain"),
    pytest.param("aa", "aa aaa aaaa", id="self-overlapping"),
    pytest.param("pinot noir", "Pinot noir. Pinot.", id="two-keywords"),
    pytest.param("the", "there other the THE", id="stop-word-kept-alone"),
    pytest.param("x1 y_2", "x1y y_2 (x1) [y_2]", id="digits-and-underscore"),
    pytest.param("wine", "", id="empty"),
    pytest.param("wine", "line\r\nwine\ttab\x00nul\x7fdel wine", id="control-characters"),
    pytest.param("café wine", "WINE cafe", id="mixed-keywords-ascii-text"),
    pytest.param("wine", "wine " * 50, id="many"),
]


@pytest.mark.parametrize("query", [p.values[0] for p in COUNTS])
@pytest.mark.parametrize("text", [p.values[1] for p in COUNTS])
def test_counts_equal_the_scorer_on_ascii_text(query: str, text: str) -> None:
    words = keywords(query)
    scan = KeywordScan(words)
    assert scan.ascii_text_counts
    assert scan.counts(text.encode().translate(FOLD)) == body_counts(text, words)
    assert scan.title_counts(text, keyword_pattern(words)) == body_counts(text, words)


def test_ascii_text_counts_off_when_a_keyword_could_match_ascii() -> None:
    assert not KeywordScan(keywords("ſhock")).ascii_text_counts
    assert not KeywordScan(keywords("ıi wine")).ascii_text_counts
    assert KeywordScan(keywords("café ſhock")).ascii_text_counts is False
    assert KeywordScan(keywords("café wine")).ascii_text_counts
    assert KeywordScan(keywords("архив")).ascii_text_counts


DOCUMENTS = [
    "",
    "no front matter",
    "---\ntitle: a\n---\nbody",
    "---\r\ntitle: a\r\n---\r\nbody\r\n",
    "---  \ntitle: a\n...\nbody",
    "---\ntitle: a\n--- \t\nbody",
    "---\ntitle: a\n---",
    "---\ntitle: a\n---\n",
    "---\ntitle: a\nunclosed\n",
    "---\n---\nempty front matter",
    "---\ntitle: a\n----\n---\nbody",
    "---\ntitle: a\n ---\n---x\n---\nbody",
    "---\ntitle: a\n---\r\r\n---\nbody",
    "--- \nx: 1\n...",
    "\n---\ntitle: a\n---\nbody",
    "text\n---\nmore\n---\n",
    "---x\ny\n---\nz",
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_body_offset_is_where_split_document_puts_the_body(document: str) -> None:
    body = split_document(document).body
    assert document[body_offset(document.encode()) :] == body


# --- properties ------------------------------------------------------------------------------

PIECES = [
    "wine", "WINE", "wines", "swine", "heat", "heating", "k", "\u212a", "s", "ſ", "i", "I", "\u0130", "ı",
    "é", "É", "ß", "ẞ", "σ", "Σ", "ς", "µ", "μ", "Μ", "в", "В", "ᲀ", "о", "ᲂ", "归档", "_", "9", " ", "\n",
    "---\n", "...", "-", "«", "\u0307", "\u0345", "ι", "\u1fbe", "Ι", "ﬅ", "ﬆ", "\ufffd", "a", "b", "elvin", "hock", "ино",
    "stanbul", "tanbul", "οδο", "ΟΔΟ", "traße", "TRA",
]  # fmt: skip
QUERY_WORDS = [
    "wine", "heat", "heating", "kelvin", "shock", "istanbul", "is", "ks", "si", "straße", "οδος", "οδοσ",
    "µs", "μs", "вино", "ᲀино", "ιι", "归档", "café", "ſhock", "ıi", "k9", "a_b", "ab", "a", "b", "wines",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.sampled_from(QUERY_WORDS), min_size=1, max_size=3),
    st.lists(st.sampled_from(PIECES), max_size=30),
    st.sampled_from(["", "---\ntitle: t\n---\n", "\ufeff", "---\r\nx: 1\r\n...\r\n"]),
)
def test_keyword_scan_agrees_with_the_scorer(query_words: list[str], pieces: list[str], head: str) -> None:
    """Random notes: `may_match` is true wherever the scorer matches the body, and an ASCII
    note's counts from its bytes are the scorer's."""
    words = keywords(" ".join(query_words))
    scan = KeywordScan(words)
    document = head + "".join(pieces)
    raw = document.encode("utf-8", errors="surrogatepass")
    body = split_document(raw.decode("utf-8", errors="replace")).body
    hits, covered = body_counts(body, words)
    if hits:
        assert may_match(scan, raw)
    if raw.isascii() and scan.ascii_text_counts:
        folded = raw.translate(FOLD)
        assert scan.counts(folded[body_offset(raw) :]) == (hits, covered)
