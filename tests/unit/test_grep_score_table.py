"""Table tests of search/grep.py `score_text`, QueryMemory's relevance (SPEC §6, seed 004).

relevance = 0.60 × coverage + 0.25 × frequency + 0.15 × recency, in [0, 1]:
coverage = share of the query's keywords found in title or body (1 in regex mode);
frequency = 1 − exp(−hits / (2 × keywords)); recency = 0.5 ^ (age days / 180).
No match → no result. Keywords match at a word start (wine → wines), any case; stop words
are dropped from the query. Expected values are that formula written out per row.
"""

from __future__ import annotations

import math
import re

import pytest

from vaultmem.search.grep import keyword_pattern, keywords, score_text


def rel(coverage: float, hits: int, n_keywords: int, age_days: float) -> float:
    """The documented formula, from the module docstring."""
    frequency = 1 - math.exp(-hits / (2 * n_keywords))
    recency = 0.5 ** (age_days / 180)
    return 0.60 * coverage + 0.25 * frequency + 0.15 * recency


# (title, body, query, regex?, age days) -> None, or (coverage, hits, relevance)
CASES = [
    pytest.param("", "", "wine", False, 0, None, id="empty-note-no-match"),
    pytest.param("Cheese", "Brie and comté.", "wine", False, 0, None, id="no-keyword-no-match"),
    pytest.param("", "Red wine.", "wine", False, 0, (1.0, 1, rel(1, 1, 1, 0)), id="one-keyword-once-today"),
    pytest.param("", "WINE", "wine", False, 0, (1.0, 1, rel(1, 1, 1, 0)), id="case-insensitive"),
    pytest.param("", "Two wines.", "wine", False, 0, (1.0, 1, rel(1, 1, 1, 0)), id="prefix-at-word-start-matches"),
    pytest.param("", "A swine.", "wine", False, 0, None, id="inside-a-word-does-not-match"),
    pytest.param("Wine notes", "nothing here", "wine", False, 0, (1.0, 1, rel(1, 1, 1, 0)), id="title-match-counts"),
    pytest.param("Wine", "wine", "wine", False, 0, (1.0, 2, rel(1, 2, 1, 0)), id="title-and-body-hits-add"),
    pytest.param(
        "", "wine cheese bread", "wine cheese", False, 0, (1.0, 2, rel(1, 2, 2, 0)), id="full-coverage-two-keywords"
    ),
    pytest.param("", "wine", "wine cheese", False, 0, (0.5, 1, rel(0.5, 1, 2, 0)), id="half-coverage"),
    pytest.param(
        "", "wine", "wine cheese bread bottle", False, 0, (0.25, 1, rel(0.25, 1, 4, 0)), id="quarter-coverage"
    ),
    pytest.param(
        "Cheese", "wine", "wine cheese", False, 0, (1.0, 2, rel(1, 2, 2, 0)), id="coverage-across-title-and-body"
    ),
    pytest.param("", "wine wine wine", "wine", False, 0, (1.0, 3, rel(1, 3, 1, 0)), id="frequency-three-hits"),
    pytest.param(
        "", "Pinot noir. Pinot.", "pinot noir", False, 0, (1.0, 3, rel(1, 3, 2, 0)), id="frequency-per-keyword-count"
    ),
    pytest.param("", "wine " * 100, "wine", False, 0, (1.0, 100, 1.0), id="many-hits-saturate-at-1"),
    pytest.param("", "wine", "wine", False, 180, (1.0, 1, rel(1, 1, 1, 180)), id="recency-half-life-180-days"),
    pytest.param("", "wine", "wine", False, 360, (1.0, 1, rel(1, 1, 1, 360)), id="recency-two-half-lives"),
    pytest.param("", "wine", "wine", False, 36500, (1.0, 1, rel(1, 1, 1, 36500)), id="recency-century-old"),
    pytest.param("", "wine", "wine", False, -180, (1.0, 1, rel(1, 1, 1, 0)), id="future-date-counts-as-today"),
    pytest.param("", "wine", "what is the wine", False, 0, (1.0, 1, rel(1, 1, 1, 0)), id="stop-words-dropped"),
    pytest.param("", "wines", "wine wines", False, 0, (1.0, 1, rel(1, 1, 2, 0)), id="one-word-covers-both-prefixes"),
    pytest.param("", "wine", "wine wines", False, 0, (0.5, 1, rel(0.5, 1, 2, 0)), id="shorter-word-covers-one"),
    pytest.param(
        "", "pinot noir and pinot  noir", r"pinot\s+noir", True, 0, (1.0, 2, rel(1, 2, 1, 0)), id="regex-mode"
    ),
    pytest.param("", "pinot", r"pinot|cheese", True, 90, (1.0, 1, rel(1, 1, 1, 90)), id="regex-mode-coverage-is-1"),
    pytest.param("", "abc", r"x*", True, 0, None, id="regex-empty-matches-do-not-count"),
    pytest.param("", "abc", r"zzz", True, 0, None, id="regex-no-match"),
]


@pytest.mark.parametrize(("title", "body", "query", "regex", "age", "expected"), CASES)
def test_score_text(
    title: str, body: str, query: str, regex: bool, age: float, expected: tuple[float, int, float] | None
) -> None:
    if regex:
        words, pattern = None, re.compile(query, re.IGNORECASE)
    else:
        words = keywords(query)
        pattern = keyword_pattern(words)
    match = score_text(title, body, pattern, words, age)
    if expected is None:
        assert match is None
        return
    coverage, hits, relevance = expected
    assert match is not None
    assert match.coverage == pytest.approx(coverage, abs=1e-4)
    assert match.hits == hits
    assert match.relevance == pytest.approx(relevance, abs=1e-4)  # reported to 4 decimals
    assert 0.0 <= match.relevance <= 1.0


def test_score_text_without_excerpt_scores_the_same() -> None:
    words = keywords("wine")
    pattern = keyword_pattern(words)
    with_text = score_text("", "Red wine.", pattern, words, 10)
    without = score_text("", "Red wine.", pattern, words, 10, with_excerpt=False)
    assert with_text is not None and without is not None
    assert without.excerpt == ""
    assert (without.relevance, without.hits, without.coverage) == (
        with_text.relevance,
        with_text.hits,
        with_text.coverage,
    )
