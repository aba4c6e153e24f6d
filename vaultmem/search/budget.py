"""Token-budget packing (SPEC §5). Pure.

The estimate is characters / 4 of the compact JSON of everything returned for a result:
its summary, snippet, neighbours and tags. Results are packed in rank order. When the
budget is tight, snippets shorten and neighbour lists thin before any result drops:
of a ladder of ever leaner renderings, the richest one that packs the most results wins.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from vaultmem.models import to_json

CHARS_PER_TOKEN = 4
ESTIMATE = "characters / 4 of the compact JSON of each returned result"

# (snippet characters, neighbours per relation); None = as produced.
LADDER: tuple[tuple[int | None, int | None], ...] = (
    (None, None),
    (160, None),
    (160, 3),
    (80, 3),
    (80, 1),
    (40, 1),
    (40, 0),
    (0, 0),
)


def estimate_tokens(data: Any) -> int:
    """Tokens of a result (or any JSON-ready data) as returned: its compact JSON / 4."""
    text = json.dumps(to_json(data), ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / CHARS_PER_TOKEN)


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Packed(Generic[T]):
    results: list[T]
    tokens_used: int
    level: int  # index into LADDER that was used
    dropped: int  # results left out


def pack(items: Sequence[Any], render: Callable[[Any, int | None, int | None], T], budget: int | None) -> Packed[T]:
    """Render `items` (in rank order) as results within `budget` tokens.

    `render(item, snippet_chars, neighbour_cap)` returns the result at that leanness."""
    if budget is None:
        rendered = [render(item, None, None) for item in items]
        return Packed(rendered, sum(estimate_tokens(r) for r in rendered), 0, 0)
    best: Packed[T] | None = None
    for level, (snippet, cap) in enumerate(LADDER):
        taken: list[T] = []
        used = 0
        for item in items:
            result = render(item, snippet, cap)
            cost = estimate_tokens(result)
            if used + cost > budget:
                break
            taken.append(result)
            used += cost
        if best is None or len(taken) > len(best.results):
            best = Packed(taken, used, level, len(items) - len(taken))
        if len(taken) == len(items):
            break
    assert best is not None
    return best
