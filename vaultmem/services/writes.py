"""`vaultmem write`: ingest a seed-001 `memory_writes` array as notes.

episodic → diary/<ghost>/ (type episode); semantic → private/<ghost>/ or shared/ (type
fact); conversation → diary/<ghost>/ (type conversation, role kept). Each item is checked
on its own: a bad item is rejected with its index and reason while the others are written.

Event time. A memory's `source.timestamp` (or a top-level `timestamp`) is when it happened:
it becomes the note's `created` and `updated` (a new note is unchanged since), so
`search`/`query --since/--until` select by it, and `expires` = event time + `ttl_days`.
Accepted: ISO-8601 with `Z`, an offset or neither (UTC), a date alone (midnight UTC), or
epoch seconds as a JSON number (milliseconds when ≥ 1e11); stored to the second in UTC.
A time that does not parse, is not after 1970-01-01 or is more than FUTURE_SKEW ahead of
now (a clock or time-zone bug the writer should fix; log stores such as Loki refuse such
entries too) rejects the item; a smaller lead is clock skew and is stored as now. A memory
whose TTL ran out before it was written is still written (expired: hidden from search and
query unless --include-expired) with a warning. Without a timestamp: now.

`context` (an object) is kept in front matter as a list of `key: value` lines, which the
index reads as front-matter prose, so its values are searchable (BM25 and embeddings).
Duplicates: the same body in the same scope and type; for episodic and conversation
memories with an event time, also the same event time (saying "thanks" twice is two turns).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from vaultmem.clock import iso, note_time
from vaultmem.clock import now as utc_now
from vaultmem.errors import InvalidInput, VaultmemError
from vaultmem.index.resolve import name_key
from vaultmem.models import IngestResult
from vaultmem.services.app import App, batched_writes, naming
from vaultmem.services.capture import capture_title
from vaultmem.services.lookup import location_of
from vaultmem.services.notes import NewNote, create_note
from vaultmem.units import as_unit
from vaultmem.vault.dates import parse_iso, same_moment
from vaultmem.vault.note import body_hash
from vaultmem.vault.writer import normalize_body

ROUTES = {"episodic": ("diary", "episode"), "semantic": ("private", "fact"), "conversation": ("diary", "conversation")}
MAX_TTL_DAYS = 365 * 100
FUTURE_SKEW = timedelta(minutes=10)  # an event time this far ahead of now is clock skew
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
MILLIS_FROM = 1e11  # an epoch number at least this big is milliseconds (1e11 s is year 5138)


MAX_DEPTH = 64  # memory writes are a few levels deep; deeper input is refused whole


def nesting_depth(data: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply lists and objects nest in parsed JSON (a scalar is 0), counted up to one
    past `limit`; iterative, so any depth is safe."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, (list, dict)):
            deepest = max(deepest, level)
            if deepest > limit:
                break
            stack.extend((v, level + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def parse_writes(text: str) -> list[Any]:
    """A JSON array of writes, or a tool response object holding `memory_writes`."""
    try:
        data = json.loads(text.removeprefix("\ufeff"))  # Windows tools like to start with a BOM
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"input is not JSON: {exc}") from None
    except RecursionError:
        # The parser gives up on input nested thousands of levels deep (`[[[[…`).
        raise InvalidInput(f"input is nested too deeply; memory writes nest at most {MAX_DEPTH} levels") from None
    if nesting_depth(data) > MAX_DEPTH:
        raise InvalidInput(f"input is nested too deeply; memory writes nest at most {MAX_DEPTH} levels")
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
    created: datetime | None = None  # event time; None: now


def event_time(value: Any, now: datetime) -> datetime:
    """The event time of a write (module docstring); raises InvalidInput with the reason."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000 if abs(value) >= MILLIS_FROM else value
        try:
            moment: datetime | None = datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            moment = None
    elif isinstance(value, str):
        try:
            moment = parse_iso(value)
        except (OverflowError, ValueError):
            moment = None
    else:
        moment = None
    if moment is None:
        raise InvalidInput(
            f"timestamp {value!r} is not an ISO-8601 time like 2025-11-05T10:30:00Z (or epoch seconds as a number)"
        )
    moment = moment.replace(microsecond=0)
    if moment <= EARLIEST:
        raise InvalidInput(f"timestamp {value!r} is not after 1970-01-01 (an unset clock?)")
    if moment > now + FUTURE_SKEW:
        raise InvalidInput(
            f"timestamp {value!r} ({iso(moment)}) is in the future (now {iso(now)}): check the writer's clock "
            "and time zone"
        )
    return min(moment, now)


def _raw_timestamp(item: dict[str, Any]) -> Any:
    source = item.get("source")
    value = source.get("timestamp") if isinstance(source, dict) else None
    if value is None:
        value = item.get("timestamp")
    return None if value is None or (isinstance(value, str) and not value.strip()) else value


def _context_lines(context: dict[Any, Any]) -> list[str]:
    """`{"user_id": "user_123"}` → `["user_id: user_123"]`: front-matter prose the index reads."""
    lines = []
    for key, value in context.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        lines.append(f"{key}: {text}")
    return lines


def _source_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):
        tool = value.get("tool")
        turn = value.get("turn_id")
        parts = [str(p) for p in (tool, turn) if p]
        return " ".join(parts) if parts else json.dumps(value, sort_keys=True)
    return str(value)


def check_write(item: Any, shared: bool, warn: list[str], index: int, now: datetime | None = None) -> CheckedWrite:
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
    context = item.get("context")
    if isinstance(context, dict):
        if context:
            extra["context"] = _context_lines(context)
    elif context is not None:
        warn.append(f"write {index}: context is not an object; ignored")
    now = utc_now() if now is None else now
    raw_time = _raw_timestamp(item)
    created = None if raw_time is None else event_time(raw_time, now)
    source = _source_text(item.get("source"))
    return CheckedWrite(scope, note_type, content, tags, confidence, ttl, source, extra, created)


def _timed(write: CheckedWrite) -> str | None:
    """The event time that tells two identical episodes or turns apart (facts are timeless)."""
    if write.created is None or write.extra.get("memory_type") == "semantic":
        return None
    return note_time(write.created)


def _existing_duplicate(app: App, write: CheckedWrite) -> Any:
    """A note this ghost wrote in the same scope with the same type and body."""
    wanted = body_hash(normalize_body(write.content))
    rows = app.db.notes_with_body(write.scope, write.note_type, wanted)
    when = _timed(write)
    for rec in rows:
        if when is not None and not same_moment(rec.created, when):  # `…Z` and Obsidian's form alike
            continue
        if app.can_read(location_of(rec)) and (write.scope == "shared" or rec.owner == app.ghost):
            return rec
    return None


@naming
@batched_writes
def ingest(app: App, items: list[Any], shared: bool = False, allow_secret: bool = False) -> IngestResult:
    app.catch_up()
    written: list[dict[str, Any]] = []
    duplicates: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    warnings: list[str] = []
    batch: dict[tuple[str, str, str, str | None], dict[str, Any]] = {}
    taken: set[str] = set()  # shared titles written by this batch
    now = utc_now()
    for index, item in enumerate(items):
        try:
            write = check_write(item, shared, warnings, index, now)
            if write.scope != "shared" and app.ghost is None:
                raise InvalidInput(f"a {write.scope} memory needs a ghost (--ghost or VAULTMEM_GHOST)")
            title = capture_title(write.content)
            key = (write.scope, write.note_type, normalize_body(write.content), _timed(write))
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
                    created=write.created,
                    allow_secret=allow_secret,
                ),
                caught_up=True,
            )
            _warn_if_expired(write, now, warnings, index)
            entry = {"id": result.id, "path": result.path}
            batch[key] = entry
            written.append({"index": index, **entry})
            taken.add(name_key(title))
        except VaultmemError as exc:
            rejected.append({"index": index, "reason": exc.message})
    for warning in warnings:
        app.notice(f"warning: {warning}")
    return IngestResult(written, duplicates, rejected, warnings)


def _warn_if_expired(write: CheckedWrite, now: datetime, warnings: list[str], index: int) -> None:
    if write.ttl_days is None or write.created is None:
        return
    expires = write.created + timedelta(days=write.ttl_days)
    if expires <= now:
        warnings.append(
            f"write {index}: expired at {iso(expires)} ({write.ttl_days:g} days after its event time "
            f"{iso(write.created)}); written, hidden from search and query unless --include-expired"
        )


def _free_shared_title(app: App, title: str, taken: set[str]) -> str:
    candidate, n = title, 2
    while name_key(candidate) in taken or app.db.notes_titled(candidate, scope="shared"):
        candidate = f"{title} ({n})"
        n += 1
    return candidate
