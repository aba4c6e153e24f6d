"""Per-note consistency checks (pure). Lint adds the cross-note checks on top.

Severities follow the foundation issue: errors are invalid YAML, non-mapping front matter,
scope or owner disagreeing with the folder, duplicate ids, numbers out of range and
unknown types; warnings are dangling links, duplicate titles in hand-written notes,
missing ids and bodies edited since vaultmem last wrote them.
"""

from __future__ import annotations

import re

from vaultmem.config import VaultConfig
from vaultmem.models import Problem
from vaultmem.units import as_unit
from vaultmem.vault.comments import nested as nested_comments
from vaultmem.vault.merge import has_conflict_markers
from vaultmem.vault.note import UNIT_FIELDS, ParsedNote

_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?\Z")
# A time with a zone (vaultmem wrote `…Z` before issue 26): Obsidian's Date & time property
# reads neither; `lint --fix` rewrites it in UTC without one. A bare date is a Date property.
_ZONED_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|z|[+-]\d{2}:?\d{2})\Z")
DATE_KEYS = ("created", "updated", "expires", "last_validated_at")


def zoned_dates(fm: dict[str, object]) -> list[str]:
    """vaultmem's date keys written with a zone, which Obsidian shows as text. Pure."""
    return [k for k in DATE_KEYS if isinstance(fm.get(k), str) and _ZONED_RE.match(str(fm[k]))]


def check_note(note: ParsedNote, config: VaultConfig) -> list[Problem]:
    out: list[Problem] = []
    path = note.relpath
    fm = note.front_matter
    loc = note.location

    def err(code: str, message: str) -> None:
        out.append(Problem(path, "error", code, message))

    def warn(code: str, message: str) -> None:
        out.append(Problem(path, "warning", code, message))

    if not loc.placed:
        err("misplaced", f"{path.split('/')[0]}/ notes belong in a ghost or project folder; nobody can read this one")
    if not note.fm_ok:
        return out  # the parse problem says it all; the fields below are not usable
    if note.id_derived:
        warn("missing_id", "no id in front matter (lint --fix writes one)")
    scope = fm.get("scope")
    if scope is not None and scope != loc.scope:
        err("scope_mismatch", f"scope is {scope!r} but the folder makes it {loc.scope!r}")
    owner = fm.get("owner")
    if owner is not None and loc.owner is not None and owner != loc.owner:
        err("owner_mismatch", f"owner is {owner!r} but the note lives in {loc.owner!r}'s folder")
    elif owner is not None and loc.owner is None and loc.scope in ("shared", "project"):
        pass  # an owner on a shared note is a harmless attribution
    project = fm.get("project")
    if project is not None and loc.project is not None and str(project) != loc.project:
        err("project_mismatch", f"project is {project!r} but the note lives in project {loc.project!r}")
    if "type" in fm and note.type not in config.types:
        err("unknown_type", f"type {note.type!r} is not one of the vault's types")
    for key in UNIT_FIELDS:
        if key in fm:
            value = fm[key]
            if as_unit(value) is None:
                err("out_of_range", f"{key} must be a number in [0, 1], not {value!r}")
    version = fm.get("version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 0):
        err("bad_version", f"version must be a non-negative integer, not {version!r}")
    for key in DATE_KEYS:
        value = fm.get(key)
        if value is not None and not (isinstance(value, str) and _ISO_RE.match(value)):
            warn("bad_date", f"{key} is not an ISO-8601 date: {value!r}")
    markers = has_conflict_markers(note.body)
    if markers:
        err("merge_conflict", f"git merge conflict markers in the body (line {markers[0]}): resolve them and commit")
    # A body edited by hand is not a problem (issue 26): agents see it as a new version, and
    # `vaultmem review` says who changed what; lint no longer warns about it forever.
    tags = fm.get("tags")
    if tags is not None and not isinstance(tags, (list, str)):
        warn("bad_tags", "tags should be a list of strings")
    zoned = zoned_dates(fm)
    if zoned:
        warn(
            "zoned_date",
            f"{', '.join(zoned)} written with a time zone, which Obsidian's Date & time property shows as text "
            "(lint --fix rewrites them in UTC without one, the vault's convention)",
        )
    if nested_comments(fm.get("comments")):
        warn(
            "nested_comments",
            "comments are nested mappings, which Obsidian's Properties view cannot show (lint --fix rewrites them as a list of texts)",
        )
    return out
