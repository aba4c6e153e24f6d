"""Table tests of search/budget.py `pack` (SPEC §5 "Token budget").

The estimate is ceil(characters / 4) of each result's compact JSON; results pack in rank
order until the budget; snippets shorten and neighbour lists thin before a result drops;
of the ladder of leaner renderings, the richest that packs the most results wins.

The render below makes sizes easy to count by hand: {"t":"ab","s":<snippet>,"n":<names>}
is 24 characters plus the snippet, plus 4m − 1 for m one-letter neighbours (m ≥ 1).
Ladder levels: 0 (full, all), 1 (160, all), 2 (160, 3), 3 (80, 3), 4 (80, 1), 5 (40, 1),
6 (40, 0), 7 (0, 0).
"""

from __future__ import annotations

from typing import Any

import pytest

from vaultmem.search.budget import pack

Item = tuple[str, str, list[str]]  # title, snippet, neighbours


def render(item: Item, snippet: int | None, cap: int | None) -> dict[str, Any]:
    title, text, neighbours = item
    return {
        "t": title,
        "s": text if snippet is None else text[:snippet],
        "n": neighbours if cap is None else neighbours[:cap],
    }


# A: 24 + 376 = 400 chars = 100 tokens in full; snippet 160 → 184 = 46; 80 → 104 = 26;
#    40 → 64 = 16; 0 → 24 = 6.
A: Item = ("ab", "x" * 376, [])
# N: 5 neighbours (+19). full 24+157+19 = 200 = 50; (160, 3) 24+157+11 = 192 = 48;
#    (80, 3) 115 → 29; (80, 1) 107 → 27; (40, 1) 67 → 17; (40, 0) 64 = 16; (0, 0) 24 = 6.
N: Item = ("ab", "x" * 157, ["a", "b", "c", "d", "e"])
# T: a title that never shrinks: 22 + 378 = 400 chars = 100 tokens at every level.
T: Item = ("y" * 378, "", [])


def a(snippet: int = 376) -> dict[str, Any]:
    return {"t": "ab", "s": "x" * snippet, "n": []}


def n(cap: int = 5, snippet: int = 157) -> dict[str, Any]:
    return {"t": "ab", "s": "x" * snippet, "n": ["a", "b", "c", "d", "e"][:cap]}


t = {"t": "y" * 378, "s": "", "n": []}

# (items, budget) -> (results, tokens_used, ladder level, dropped)
CASES = [
    pytest.param([], None, [], 0, 0, 0, id="no-items-no-budget"),
    pytest.param([], 100, [], 0, 0, 0, id="no-items-with-budget"),
    pytest.param([A, N], None, [a(), n()], 150, 0, 0, id="no-budget-returns-everything-in-full"),
    pytest.param([A, N], 10_000, [a(), n()], 150, 0, 0, id="roomy-budget-returns-everything-in-full"),
    pytest.param([A, A], 200, [a(), a()], 200, 0, 0, id="budget-exactly-met-in-full"),
    pytest.param([A, A], 199, [a(160), a(160)], 92, 1, 0, id="one-token-over-snippets-shorten-none-drop"),
    pytest.param([A, A], 92, [a(160), a(160)], 92, 1, 0, id="budget-exactly-met-at-160-char-snippets"),
    pytest.param([A, A], 91, [a(80), a(80)], 52, 3, 0, id="one-under-160-falls-to-80-char-snippets"),
    pytest.param([A, A, A], 100, [a(80), a(80), a(80)], 78, 3, 0, id="snippets-shorten-twice-before-a-drop"),
    pytest.param([N, N], 98, [n(3), n(3)], 96, 2, 0, id="neighbours-thin-before-a-result-drops"),
    pytest.param([N, N], 57, [n(1, 80), n(1, 80)], 54, 4, 0, id="neighbours-thin-to-one-with-80-char-snippets"),
    pytest.param([N, N], 58, [n(3, 80), n(3, 80)], 58, 3, 0, id="budget-exactly-met-at-80-chars-3-neighbours"),
    pytest.param([N, N], 32, [n(0, 40), n(0, 40)], 32, 6, 0, id="neighbours-drop-to-none-at-40-chars"),
    pytest.param([A, A, A], 15, [a(0), a(0)], 12, 7, 1, id="leanest-rendering-still-too-big-last-drops"),
    pytest.param([A], 5, [], 0, 0, 1, id="nothing-fits-at-any-level"),
    pytest.param([A], 0, [], 0, 0, 1, id="budget-zero"),
    pytest.param([T, A], 50, [], 0, 0, 2, id="rank-order-a-result-that-never-fits-blocks-later-ones"),
    pytest.param([A, T, A], 110, [a(0), t], 106, 7, 1, id="lean-levels-fit-a-second-result-third-drops"),
    pytest.param([A, T], 105, [a()], 100, 0, 1, id="no-leaner-level-packs-more-richest-kept"),
]


@pytest.mark.parametrize(("items", "budget", "results", "tokens", "level", "dropped"), CASES)
def test_pack(
    items: list[Item], budget: int | None, results: list[dict[str, Any]], tokens: int, level: int, dropped: int
) -> None:
    packed = pack(items, render, budget)
    assert packed.results == results
    assert packed.tokens_used == tokens
    assert packed.level == level
    assert packed.dropped == dropped
    if budget is not None:
        assert packed.tokens_used <= budget
