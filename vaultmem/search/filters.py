"""Search filters as callers state them, parsed at the boundary. Pure and light: `query`
imports this without the hybrid engine."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from vaultmem.errors import InvalidInput
from vaultmem.vault.layout import SCOPES

# What `--scope` (and the MCP tools' `scope`) may name: every scope (vault/layout.py SCOPES),
# `all`, and the names of memory_search's seed (`shared_only`, `projects_only`, ...).
SCOPE_ALIASES: Mapping[str, tuple[str, ...] | None] = {
    "all": None,
    **{scope: (scope,) for scope in SCOPES},
    **{f"{scope}_only": (scope,) for scope in SCOPES},
    "projects": ("project",),
    "projects_only": ("project",),
}
# How a search retrieves (search/hybrid.py): both retrievers fused (the default), or one.
MODES = ("hybrid", "bm25", "vector")
DEFAULT_MODE = MODES[0]
# `query` (QueryMemory, search/grep.py): how many matches, and the least relevance shown.
QUERY_LIMIT = 10
QUERY_MIN_RELEVANCE = 0.3
# The names the MCP tools list for `scope`, as memory_search's seed writes them.
SEED_SCOPES = ("all", "shared_only", "private_only", "projects_only", "diary_only", "inbox_only")
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}\Z")
NO_TYPE = "\x00none"  # a type no note has: what --type and --memory-type ask for when they share nothing


def scopes_for(scope: str | None) -> tuple[str, ...]:
    """The scopes `--scope` names; () for all of them."""
    key = (scope or "all").strip().lower()
    if key not in SCOPE_ALIASES:
        raise InvalidInput(f"unknown scope {scope!r}; use one of {', '.join(SCOPE_ALIASES)}")
    return SCOPE_ALIASES[key] or ()


def types_for(types: Sequence[str], memory_type: str | None, groups: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """The note types `--type` and `--memory-type` ask for; () for any. `--type` narrows a
    memory-type group (`groups`: the vault's); alone, the group is the type list."""
    wanted = [t for t in types if t]
    if memory_type:
        group = groups.get(memory_type)
        if group is None:
            raise InvalidInput(f"unknown memory type {memory_type!r}; this vault defines: {', '.join(sorted(groups))}")
        wanted = [t for t in wanted if t in group] if wanted else list(group)
        if not wanted:
            return (NO_TYPE,)
    return tuple(wanted)


def unknown_types(types: Sequence[str], known: Sequence[str]) -> list[str]:
    """A warning for a `--type` the vault does not define, so a typo does not read as "no
    matches". Only a warning: a note may carry a type of its own (lint reports it), and a
    filter must still find it. The vault's list decides, not the notes: a type that only
    another ghost's private notes carry must not answer differently."""
    odd = [t for t in types if t and t not in known]
    if not odd:
        return []
    return [f"type {', '.join(map(repr, odd))} is not one of this vault's types ({', '.join(sorted(known))})"]


def parse_date_bound(value: str | None, name: str, end_of_day: bool) -> int | None:
    """`--since`/`--until`: an ISO date or time, or relative to now (`2h`, `3d`, `yesterday`;
    vault/when.py), in seconds since the epoch."""
    from vaultmem import clock
    from vaultmem.vault.when import when_epoch

    return when_epoch(value, name, clock.now(), end_of_day)
