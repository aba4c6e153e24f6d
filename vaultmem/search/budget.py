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
from typing import Any

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
    return math.ceil(len(json.dumps(data, ensure_ascii=False, separators=(",", ":"))) / CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Packed:
    results: list[dict[str, Any]]
    tokens_used: int
    level: int  # index into LADDER that was used
    dropped: int  # results left out


Render = Callable[[Any, int | None, int | None], dict[str, Any]]


def pack(items: Sequence[Any], render: Render, budget: int | None) -> Packed:
    """Render `items` (in rank order) as dicts within `budget` tokens.

    `render(item, snippet_chars, neighbour_cap)` returns the result dict at that leanness."""
    if budget is None:
        rendered = [render(item, None, None) for item in items]
        return Packed(rendered, sum(estimate_tokens(r) for r in rendered), 0, 0)
    best: Packed | None = None
    for level, (snippet, cap) in enumerate(LADDER):
        taken: list[dict[str, Any]] = []
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
