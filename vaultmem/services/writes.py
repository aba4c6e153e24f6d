"""`vaultmem write`: ingest a seed-001 `memory_writes` array as notes.

episodic → diary/<ghost>/ (type episode); semantic → private/<ghost>/ or shared/ (type
fact); conversation → diary/<ghost>/ (type conversation, role kept). Each item is checked
on its own: a bad item is rejected with its index and reason while the others are written.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from vaultmem.errors import InvalidInput, VaultmemError
from vaultmem.models import IngestResult
from vaultmem.services.app import App, batched_writes
from vaultmem.services.capture import capture_title
from vaultmem.services.lookup import location_of
from vaultmem.services.notes import NewNote, create_note
from vaultmem.units import as_unit
from vaultmem.vault.note import body_hash
from vaultmem.vault.writer import normalize_body

ROUTES = {"episodic": ("diary", "episode"), "semantic": ("private", "fact"), "conversation": ("diary", "conversation")}
MAX_TTL_DAYS = 365 * 100


def parse_writes(text: str) -> list[Any]:
    """A JSON array of writes, or a tool response object holding `memory_writes`."""
    try:
        data = json.loads(text.removeprefix("\ufeff"))  # Windows tools like to start with a BOM
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"input is not JSON: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("memory_writes"), list):
        data = data["memory_writes"]
    if not isinstance(data, list):
        raise InvalidInput("expected a JSON array of memory writes (or an object with `memory_writes`)")
    return data


@dataclass(frozen=True, slots=True)
class CheckedWrite:
    scope: str
    note_type: str
    content: str
    tags: list[str]
    confidence: float | None
    ttl_days: float | None
    source: str | None
    extra: dict[str, Any]


def _source_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):
        tool = value.get("tool")
        turn = value.get("turn_id")
        parts = [str(p) for p in (tool, turn) if p]
        return " ".join(parts) if parts else json.dumps(value, sort_keys=True)
    return str(value)


def check_write(item: Any, shared: bool, warn: list[str], index: int) -> CheckedWrite:
    """Validate one write; raises InvalidInput with the reason."""
    if not isinstance(item, dict):
        raise InvalidInput("not an object")
    kind = item.get("type")
    if kind not in ROUTES:
        raise InvalidInput(f"type must be one of {', '.join(ROUTES)}, not {kind!r}")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("content must be a non-empty string")
    tags = item.get("tags", [])
    if tags is None:
        tags = []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidInput("tags must be a list of strings")
    confidence = item.get("confidence")
    if confidence is not None:
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or math.isnan(confidence):
            raise InvalidInput(f"confidence must be a number, not {confidence!r}")
        unit = as_unit(confidence)
        if unit is None:
            unit = min(1.0, max(0.0, float(confidence)))
            warn.append(f"write {index}: confidence {confidence} clamped to {unit}")
        confidence = unit
    ttl = item.get("ttl_days")
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 <= ttl <= MAX_TTL_DAYS):
        warn.append(f"write {index}: ttl_days {ttl!r} is invalid; stored without expiry")
        ttl = None
    folder, note_type = ROUTES[kind]
    scope = "shared" if (kind == "semantic" and shared) else folder
    extra: dict[str, Any] = {"memory_type": kind}
    if kind == "conversation":
        role = item.get("role")
        if role is not None and not isinstance(role, str):
            raise InvalidInput("role must be a string")
        extra["role"] = role
    if isinstance(item.get("context"), dict):
        extra["context"] = item["context"]
    return CheckedWrite(scope, note_type, content, tags, confidence, ttl, _source_text(item.get("source")), extra)


def _existing_duplicate(app: App, write: CheckedWrite) -> Any:
    """A note this ghost wrote in the same scope with the same type and body."""
    wanted = body_hash(normalize_body(write.content))
    rows = app.db.notes_with_body(write.scope, write.note_type, wanted)
    for rec in rows:
        if app.can_read(location_of(rec)) and (write.scope == "shared" or rec.owner == app.ghost):
            return rec
    return None


@batched_writes
def ingest(app: App, items: list[Any], shared: bool = False) -> IngestResult:
    app.catch_up()
    written: list[dict[str, Any]] = []
    duplicates: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    warnings: list[str] = []
    batch: dict[tuple[str, str, str], dict[str, Any]] = {}
    taken: set[str] = set()  # shared titles written by this batch
    for index, item in enumerate(items):
        try:
            write = check_write(item, shared, warnings, index)
            if write.scope != "shared" and app.ghost is None:
                raise InvalidInput(f"a {write.scope} memory needs a ghost (--ghost or VAULTMEM_GHOST)")
            title = capture_title(write.content)
            key = (write.scope, write.note_type, normalize_body(write.content))
            if key in batch:
                duplicates.append({"index": index, **batch[key]})
                continue
            existing = _existing_duplicate(app, write)
            if existing is not None:
                duplicates.append({"index": index, "id": existing.id, "path": existing.path})
                continue
            if write.scope == "shared":
                # Shared titles must be unique; a different fact with the same opening words
                # gets a disambiguating suffix rather than a rejection.
                title = _free_shared_title(app, title, taken)
            result = create_note(
                app,
                NewNote(
                    title=title,
                    type=write.note_type,
                    scope=write.scope,
                    body=write.content,
                    tags=write.tags,
                    source=write.source,
                    confidence=write.confidence,
                    ttl_days=write.ttl_days,
                    extra=write.extra,
                ),
                caught_up=True,
            )
            entry = {"id": result.id, "path": result.path}
            batch[key] = entry
            written.append({"index": index, **entry})
            taken.add(title.lower())
        except VaultmemError as exc:
            rejected.append({"index": index, "reason": exc.message})
    for warning in warnings:
        app.notice(f"warning: {warning}")
    return IngestResult(written, duplicates, rejected, warnings)


def _free_shared_title(app: App, title: str, taken: set[str]) -> str:
    candidate, n = title, 2
    while candidate.lower() in taken or app.db.notes_titled(candidate, scope="shared"):
        candidate = f"{title} ({n})"
        n += 1
    return candidate
