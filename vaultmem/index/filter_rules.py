"""The search filters (`Filters`, SPEC §5) as one table of rules, read three ways.

Each rule names the note field it tests (an `IndexDoc` field: a Whoosh field and a Chroma
metadata key of the same name), how it compares, and where the caller's value comes from.
From the table come the Whoosh query the lexical index filters with (`whoosh_query`), the
Chroma `where` the dense index falls back to for a narrow filter (`chroma_where`), and the
Python test the dense index runs on the state db's note metadata (`predicate`). A filter
therefore means the same in both halves of a search: the access rule (`reader`) is the
privacy boundary, and tests/integration/test_vector_filters.py holds the three to the same
notes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from vaultmem.index.documents import Filters

Row = Mapping[str, Any]  # a note's filter metadata: vectors.note_metadata


@dataclass(frozen=True, slots=True)
class Rule:
    """One filter. `op`: "in" (any of the values), "all" (every one of the tags), "eq",
    or a bound on a number: "gte", "lte", "gt" (named as Chroma names them). `value` reads
    the caller's value from the filters; None means the rule is off."""

    field: str
    op: str
    value: Callable[[Filters], Any]

    def whoosh(self, value: Any) -> list[Any]:
        from whoosh import query as q

        match self.op:
            case "in":
                return [q.Or([q.Term(self.field, v) for v in value])]
            case "all":  # tags live comma-separated in one KEYWORD field
                return [q.Term("tagset", v) for v in value]
            case "eq":
                return [q.Term(self.field, value)]
            case "gte":
                return [q.NumericRange(self.field, value, None)]
            case "lte":
                return [q.NumericRange(self.field, None, value)]
            case "gt":
                return [q.NumericRange(self.field, value, None, startexcl=True)]
        raise ValueError(self.op)

    def chroma(self, value: Any) -> list[dict[str, Any]]:
        match self.op:
            case "in":
                return [{self.field: value[0]} if len(value) == 1 else {self.field: {"$in": list(value)}}]
            case "all":  # Chroma metadata holds no lists: a note carries one `tag:<name>` flag per tag
                return [{f"tag:{v}": True} for v in value]
            case "eq":
                return [{self.field: value}]
            case "gte" | "lte" | "gt":
                return [{self.field: {f"${self.op}": value}}]
        raise ValueError(self.op)

    def checks(self, value: Any) -> list[Callable[[Row], bool]]:
        """The rule as tests of one note's metadata (`note_metadata`), `value` bound once."""
        field = self.field
        match self.op:
            case "in":
                allowed = frozenset(value)
                return [lambda row: row.get(field) in allowed]
            case "all":
                return [_flag(f"tag:{v}") for v in value]
            case "eq":
                return [lambda row: row.get(field) == value]
            case "gte":
                return [lambda row: row.get(field, 0) >= value]
            case "lte":
                return [lambda row: row.get(field, 0) <= value]
            case "gt":
                return [lambda row: row.get(field, 0) > value]
        raise ValueError(self.op)


def _flag(key: str) -> Callable[[Row], bool]:
    return lambda row: row.get(key) is True


RULES: tuple[Rule, ...] = (
    Rule("reader", "in", lambda f: f.readers),  # access: always on
    Rule("scope", "in", lambda f: f.scopes or None),
    Rule("type", "in", lambda f: f.types or None),
    Rule("tags", "all", lambda f: tuple(t.lower() for t in f.tags) or None),
    Rule("project", "eq", lambda f: f.project or None),
    Rule("created", "gte", lambda f: f.since),
    Rule("created", "lte", lambda f: f.until),
    Rule("trust", "gte", lambda f: f.min_trust),
    Rule("confidence", "gte", lambda f: f.min_confidence),
    Rule("importance", "gte", lambda f: f.min_importance),
    Rule("expires", "gt", lambda f: None if f.include_expired else f.now),
)


def _active(f: Filters) -> list[tuple[Rule, Any]]:
    return [(rule, value) for rule in RULES if (value := rule.value(f)) is not None]


def whoosh_query(f: Filters) -> Any:
    from whoosh import query as q

    return q.And([part for rule, value in _active(f) for part in rule.whoosh(value)])


def chroma_where(f: Filters) -> dict[str, Any]:
    parts = [part for rule, value in _active(f) for part in rule.chroma(value)]
    return parts[0] if len(parts) == 1 else {"$and": parts}


def predicate(f: Filters) -> Callable[[Row], bool]:
    """Whether a note's metadata passes the filters. Built once per search and run on
    every candidate chunk, so only the rules that are on are checked."""
    checks = tuple(check for rule, value in _active(f) for check in rule.checks(value))

    def passes(row: Row) -> bool:
        for check in checks:  # noqa: SIM110 (all() over a generator: ~1.8x the time a row)
            if not check(row):
                return False
        return True

    return passes
