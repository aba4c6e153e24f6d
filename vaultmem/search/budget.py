"""Token-budget packing (SPEC §5). Pure.

The estimate is characters / 4 of the compact JSON of everything returned for a result:
its summary, snippet, neighbours and tags. Results are packed in rank order. When the
budget is tight, neighbour lists thin and snippets shorten before any result drops: of a
ladder of ever leaner renderings, the richest one at which every result packed fits is
the base, for as many results as any rendering packs. What the budget leaves over then
goes back to the results in rank order: a rung richer for each in turn while one fits,
then the snippet (or neighbour list) of the first that cannot take a whole rung grows as
far as the budget allows. So a budget is used (at least 80% of it, as a rule) whenever
there is more to return, rather than every result sitting at the leanest common rung.

`render(item, snippet_chars, neighbour_cap, returned)` draws one result: its snippet cut
to `snippet_chars` (None: as produced; 0: none) at a word or sentence boundary, at most
`neighbour_cap` neighbours per relation (None: as produced), knowing that the first
`returned` items are results of the same answer (it may refer to those by id alone).
While results are being counted each is drawn with `returned` = its own rank, the
pessimistic case; the final renderings use the real count, which can only be smaller.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from vaultmem.models import to_json

CHARS_PER_TOKEN = 4
ESTIMATE = "characters / 4 of the compact JSON of each returned result"

# (snippet characters, neighbours per relation); None = as produced. Neighbours thin
# before snippets shorten: a snippet is what a result says, neighbours only where to look.
LADDER: tuple[tuple[int | None, int | None], ...] = (
    (None, None),
    (None, 3),
    (None, 1),
    (160, 1),
    (160, 0),
    (80, 0),
    (40, 0),
    (0, 0),
)
SNIPPET_MAX = 100_000  # a snippet length past any snippet: "as produced"
CAP_MAX = 64  # neighbours per relation tried one by one when filling the budget

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Render(Protocol[T_co]):
    def __call__(self, item: Any, snippet: int | None, cap: int | None, returned: int, /) -> T_co: ...


def estimate_tokens(data: Any) -> int:
    """Tokens of a result (or any JSON-ready data) as returned: its compact JSON / 4."""
    text = json.dumps(to_json(data), ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Packed(Generic[T]):
    results: list[T]
    tokens_used: int
    level: int  # index into LADDER of the base rendering every result got at least
    dropped: int  # results left out


@dataclass(slots=True)
class _Slot(Generic[T]):
    """One packed result: its rendering, the leanness it was drawn at, its cost."""

    item: Any
    snippet: int | None
    cap: int | None
    result: T
    cost: int
    level: int


def pack(items: Sequence[Any], render: Render[T], budget: int | None) -> Packed[T]:
    """Render `items` (in rank order) as results within `budget` tokens (see above)."""
    if budget is None:
        rendered = [render(item, None, None, len(items)) for item in items]
        return Packed(rendered, sum(estimate_tokens(r) for r in rendered), 0, 0)
    count, level = _base(items, render, budget)
    if count == 0:
        return Packed([], 0, 0, len(items))
    snippet, cap = LADDER[level]
    slots: list[_Slot[T]] = []
    for item in items[:count]:
        result = render(item, snippet, cap, count)
        slots.append(_Slot(item, snippet, cap, result, estimate_tokens(result), level))
    spare = budget - sum(s.cost for s in slots)
    spare = _richer(slots, render, count, spare)
    _fill(slots, render, count, spare)
    return Packed([s.result for s in slots], sum(s.cost for s in slots), level, len(items) - count)


def _base(items: Sequence[Any], render: Render[Any], budget: int) -> tuple[int, int]:
    """How many results pack at most (at the leanest rung that packs them), and the
    richest rung at which that many fit, every result alike. Each is drawn as if the
    results ended with it (the most it can cost)."""
    best_count, best_level = 0, 0
    for level, (snippet, cap) in enumerate(LADDER):
        used = taken = 0
        for rank, item in enumerate(items, 1):
            cost = estimate_tokens(render(item, snippet, cap, rank))
            if used + cost > budget:
                break
            used += cost
            taken += 1
        if taken > best_count:
            best_count, best_level = taken, level
        if taken == len(items):
            break
    return best_count, best_level


def _richer(slots: list[_Slot[T]], render: Render[T], count: int, spare: int) -> int:
    """Whole rungs back, a rung at a time per result in rank order, while one fits."""
    moved = True
    while moved:
        moved = False
        for slot in slots:
            if slot.level == 0:
                continue
            snippet, cap = LADDER[slot.level - 1]
            result = render(slot.item, snippet, cap, count)
            cost = estimate_tokens(result)
            if cost - slot.cost <= spare:
                spare -= cost - slot.cost
                slot.snippet, slot.cap, slot.result, slot.cost = snippet, cap, result, cost
                slot.level -= 1
                moved = True
    return spare


def _fill(slots: list[_Slot[T]], render: Render[T], count: int, spare: int) -> None:
    """Part of a rung for the results that could not take a whole one, in rank order: the
    longest snippet that fits, then the most neighbours."""
    for slot in slots:
        if spare <= 0:
            return
        if slot.level == 0:
            continue
        snippet, cap = LADDER[slot.level - 1]
        if snippet != slot.snippet and slot.snippet is not None:
            spare = _grow_snippet(slot, render, count, spare, SNIPPET_MAX if snippet is None else snippet)
        if cap != slot.cap and slot.cap is not None:
            spare = _grow_cap(slot, render, count, spare, CAP_MAX if cap is None else cap)


def _grow_snippet(slot: _Slot[T], render: Render[T], count: int, spare: int, upto: int) -> int:
    """Binary search for the longest snippet (below `upto` characters) that fits."""
    assert slot.snippet is not None
    low, high = slot.snippet, upto  # low fits (it is what the slot holds); high does not
    best: tuple[T, int, int] | None = None
    while high - low > 1:
        mid = (low + high) // 2
        result = render(slot.item, mid, slot.cap, count)
        cost = estimate_tokens(result)
        if cost - slot.cost <= spare:
            low, best = mid, (result, cost, mid)
        else:
            high = mid
    if best is not None and best[1] > slot.cost:
        result, cost, chars = best
        spare -= cost - slot.cost
        slot.snippet, slot.result, slot.cost = chars, result, cost
    return spare


def _grow_cap(slot: _Slot[T], render: Render[T], count: int, spare: int, upto: int) -> int:
    """One more neighbour per relation at a time while it fits (and adds something)."""
    assert slot.cap is not None
    for cap in range(slot.cap + 1, upto):
        result = render(slot.item, slot.snippet, cap, count)
        cost = estimate_tokens(result)
        if cost - slot.cost > spare or result == slot.result:
            break
        spare -= cost - slot.cost
        slot.cap, slot.result, slot.cost = cap, result, cost
    return spare
