"""The one range check of the [0, 1] values: trust_score, confidence, importance in front
matter and on the command line, and query's --min-relevance. Each caller words its own
error (a flag, a front-matter key, a lint finding); the range is decided here."""

from __future__ import annotations


def as_unit(value: object) -> float | None:
    """`value` as a float when it is a number in [0, 1], else None. A bool is not a number,
    and NaN is in no range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None
