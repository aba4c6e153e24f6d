"""`--set KEY=VALUE` reads VALUE as YAML, so that numbers, booleans and [lists] keep their
type, but never drops any of it (found by an attacker's probe: `source=see issue #42` was
stored as `see issue`, a comment to YAML; a second line as another key, then dropped)."""

from __future__ import annotations

from typing import Any

import pytest

from vaultmem.services.checks import parse_set


@pytest.mark.parametrize(
    ("assignment", "value"),
    [
        ("n=5", 5),
        ("t=[a, b]", ["a", "b"]),
        ("b=true", True),
        ("s=plain text", "plain text"),
        ("e=", ""),
        ("f=  spaced  ", "spaced"),
        ("d=2026-01-01", "2026-01-01"),
        ('q="quoted #x"', "quoted #x"),
        ("source=see issue #42 and PR #7", "see issue #42 and PR #7"),
        ("c=#tag", "#tag"),
        ("x=a: b", "a: b"),
        ("context=first line\nsecond: part", "first line\nsecond: part"),
        ("g=one\n  two", "one\n  two"),
        # a whole wikilink is a property link as Obsidian writes one (`related=[[X]]` is what a
        # shell leaves of `related="[[X]]"`), not YAML's list of lists; tags stay YAML (refused)
        ("related=[[Wine: basics]]", "[[Wine: basics]]"),
        ("up= [[Plan#Goals|the plan]] ", "[[Plan#Goals|the plan]]"),
        ('related="[[X]]"', "[[X]]"),
        ("related=[[a], [b]]", [["a"], ["b"]]),
        ("tags=[[1]]", [[1]]),
    ],
)
def test_parse_set(assignment: str, value: Any) -> None:
    assert parse_set(assignment) == (assignment.split("=", 1)[0], value)
