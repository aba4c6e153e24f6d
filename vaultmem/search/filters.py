"""Search filters as callers state them, parsed at the boundary. Pure and light: `query`
imports this without the hybrid engine."""

from __future__ import annotations

import re
from datetime import timedelta

from vaultmem.errors import InvalidInput
from vaultmem.vault.dates import parse_iso

SCOPE_ALIASES = {
    "all": None,
    "shared": ("shared",),
    "shared_only": ("shared",),
    "private": ("private",),
    "private_only": ("private",),
    "project": ("project",),
    "projects": ("project",),
    "projects_only": ("project",),
    "diary": ("diary",),
    "diary_only": ("diary",),
    "inbox": ("inbox",),
}
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_date_bound(value: str | None, name: str, end_of_day: bool) -> int | None:
    if value is None or not value.strip():
        return None
    moment = parse_iso(value)
    if moment is None:
        raise InvalidInput(f"--{name} must be an ISO-8601 date like 2026-11-21 or 2026-11-21T10:00:00Z, not {value!r}")
    if end_of_day and _DATE_ONLY.match(value.strip()):
        moment = moment + timedelta(days=1) - timedelta(seconds=1)
    return int(moment.timestamp())
