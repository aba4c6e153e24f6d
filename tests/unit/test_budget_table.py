"""Table tests of search/budget.py `pack` (SPEC §5 "Token budget").

The estimate is ceil(characters / 4) of each result's compact JSON; results pack in rank
order until the budget; neighbour lists thin and snippets shorten before a result drops:
the base is the richest ladder rung at which the most results fit, every result alike.
What that leaves over goes back in rank order (issue 11: at least 80% of the budget used
when there is more to return): a whole rung per result in turn while one fits, then the
snippet (or neighbour list) of the first that cannot take a whole rung grows to fit.

The render below makes sizes easy to count by hand: {"t":"ab","s":<snippet>,"n":<names>}
is 24 characters plus the snippet, plus 4m − 1 for m one-letter neighbours (m ≥ 1).
Ladder levels: 0 (full, all), 1 (full, 3), 2 (full, 1), 3 (160, 1), 4 (160, 0),
5 (80, 0), 6 (40, 0), 7 (0, 0).
"""

from __future__ import annotations

from typing import Any

import pytest

from vaultmem.search.budget import pack

Item = tuple[str, str, list[str]]  # title, snippet, neighbours


def render(item: Item, snippet: int | None, cap: int | None, returned: int) -> dict[str, Any]:
    title, text, neighbours = item
    return {
        "t": title,
        "s": text if snippet is None else text[:snippet],
        "n": neighbours if cap is None else neighbours[:cap],
    }


# A: 24 + 376 = 400 chars = 100 tokens in full; snippet 160 → 184 = 46; 80 → 104 = 26;
#    40 → 64 = 16; 0 → 24 = 6; n characters → ceil((24 + n) / 4).
A: Item = ("ab", "x" * 376, [])
# N: 5 neighbours (+19). full 24+157+19 = 200 = 50; (full, 3) 192 = 48; (full, 1) and
#    (160, 1) 184 = 46; (160, 0) 181 → 46; (80, 0) 104 = 26; (40, 0) 64 = 16; (0, 0) 6.
N: Item = ("ab", "x" * 157, ["a", "b", "c", "d", "e"])
# T: a title that never shrinks: 22 + 378 = 400 chars = 100 tokens at every level.
T: Item = ("y" * 378, "", [])


def a(snippet: int = 376) -> dict[str, Any]:
    return {"t": "ab", "s": "x" * snippet, "n": []}


def n(cap: int = 5, snippet: int = 157) -> dict[str, Any]:
    return {"t": "ab", "s": "x" * snippet, "n": ["a", "b", "c", "d", "e"][:cap]}


t = {"t": "y" * 378, "s": "", "n": []}

# (items, budget) -> (results, tokens_used, base ladder level, dropped)
CASES = [
    pytest.param([], None, [], 0, 0, 0, id="no-items-no-budget"),
    pytest.param([], 100, [], 0, 0, 0, id="no-items-with-budget"),
    pytest.param([A, N], None, [a(), n()], 150, 0, 0, id="no-budget-returns-everything-in-full"),
    pytest.param([A, N], 10_000, [a(), n()], 150, 0, 0, id="roomy-budget-returns-everything-in-full"),
    pytest.param([A, A], 200, [a(), a()], 200, 0, 0, id="budget-exactly-met-in-full"),
    # base 160 chars each (92); the 107 left: the first back to full (+54), the second's
    # snippet grows into the last 53: ceil((24 + 372) / 4) = 99. Was 92 of 199 before.
    pytest.param([A, A], 199, [a(), a(372)], 199, 3, 0, id="one-token-over-first-full-second-trimmed-to-fit"),
    pytest.param([A, A], 92, [a(160), a(160)], 92, 3, 0, id="budget-exactly-met-at-160-char-snippets"),
    # base 80 chars (52); +20 takes the first to 160, its snippet grows by the 19 left
    pytest.param([A, A], 91, [a(236), a(80)], 91, 5, 0, id="one-under-160-first-grows-into-the-rest"),
    pytest.param([A, A, A], 100, [a(168), a(80), a(80)], 100, 5, 0, id="three-results-spare-goes-in-rank-order"),
    pytest.param([N, N], 98, [n(5), n(3)], 98, 1, 0, id="neighbours-thin-first-and-come-back-in-rank-order"),
    pytest.param([N, N], 57, [n(0, 100), n(0, 80)], 57, 5, 0, id="no-neighbours-first-snippet-grows-to-fit"),
    pytest.param([N, N], 32, [n(0, 40), n(0, 40)], 32, 6, 0, id="budget-exactly-met-at-40-chars"),
    pytest.param([A, A, A], 15, [a(12), a(0)], 15, 7, 1, id="leanest-rendering-still-too-big-last-drops"),
    pytest.param([A], 5, [], 0, 0, 1, id="nothing-fits-at-any-level"),
    pytest.param([A], 0, [], 0, 0, 1, id="budget-zero"),
    pytest.param([T, A], 50, [], 0, 0, 2, id="rank-order-a-result-that-never-fits-blocks-later-ones"),
    pytest.param([A, T, A], 110, [a(16), t], 110, 7, 1, id="lean-levels-fit-a-second-result-third-drops"),
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
