"""Comments on a note, in a form Obsidian's Properties view shows and edits (issue 26). Pure.

`comments:` is a list of texts, Obsidian's List property type, one comment an item:

    comments:
      - '2026-11-24T10:30:00 alice/gpt-x: Checked: the 2025 vintage agrees.'

`<time> <by>[/<model>]: <text>`: the time in the form notes hold times (Obsidian's Date &
time form, UTC), who wrote it (a ghost, a person of the vault, or `person`) with the model
after a slash as `last_validated_by` has it, then the text as given. The text may hold
anything — `: `, quotes, `#`, brackets, newlines — because the item is a YAML string that
the front matter writer quotes and escapes (a newline as `\\n`, so one comment stays one
line of the file); only the head before the first `: ` is read for structure. An item a
person types in Obsidian without that head is a comment too, with no time or author.

Agents keep seeing `{at, by, model, text}` (`get`, `note comment`, MCP): `to_dict`.

Why not the nested mappings vaultmem wrote before (`- {at, by, model, text}`): Obsidian's
Properties support no nested objects, so a person could neither see nor edit them. They are
still read, and rewritten in this form by the next `note comment` on the note or by
`lint --fix`. Why not a callout section in the body: a comment would then change the body —
the text search indexes, the lines `review` attributes to a person or an agent, and the
hash that tells a hand edit — and two clones commenting at once would meet in the body's
line merge instead of the merge driver's union of items.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vaultmem.vault.dates import note_time_of, parse_iso

# The head of a comment: a time, a space, who (no space, no colon; `/model` may hold colons,
# as `llama3:8b`), a colon, then a space and the text (or nothing).
_ITEM = re.compile(r"(?P<at>\d{4}-\d{2}-\d{2}\S*) (?P<by>[^\s/:]+)(?:/(?P<model>\S+?))?:(?: (?P<text>.*))?\Z", re.S)


@dataclass(frozen=True, slots=True)
class Comment:
    at: str | None  # the time as the note holds it; None for a free-text item
    by: str | None
    model: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "by": self.by, "model": self.model, "text": self.text}

    def item(self) -> str:
        """The list item this comment is written as (module docstring)."""
        if self.at is None or self.by is None:
            return self.text
        at = note_time_of(self.at) or self.at
        who = _word(self.by).replace("/", "-").replace(":", "-") + (f"/{_word(self.model)}" if self.model else "")
        return f"{at} {who}: {self.text}"

    def key(self) -> tuple[object, str | None, str]:
        """What makes two comments one (the merge driver's union): the moment, not how its
        time is spelled, who, and the text."""
        moment = parse_iso(self.at) if self.at is not None else None
        return (moment if moment is not None else self.at, self.by, self.text)


def _word(text: str) -> str:
    """`by` and `model` as one word: the head of an item ends at the first space."""
    return "-".join(text.split()) or "-"


def parse_item(item: Any) -> Comment | None:
    """One item of `comments:` — this form, the old nested mapping, or free text."""
    if item is None:
        return None
    if isinstance(item, dict):
        at, by, model = item.get("at"), item.get("by"), item.get("model")
        text = item.get("text")
        return Comment(
            None if at is None else str(at),
            None if by is None else str(by),
            None if model is None else str(model),
            "" if text is None else str(text),
        )
    text = item if isinstance(item, str) else str(item)
    m = _ITEM.match(text)
    if m is None or parse_iso(m.group("at")) is None:
        return Comment(None, None, None, text)
    return Comment(m.group("at"), m.group("by"), m.group("model"), m.group("text") or "")


def read(value: Any) -> list[Comment]:
    """The comments of a note's `comments:` value, whatever its form."""
    items = value if isinstance(value, list) else [value]
    return [c for c in (parse_item(item) for item in items) if c is not None]


def nested(value: Any) -> bool:
    """Whether `comments:` holds mappings, which Obsidian's Properties view cannot show."""
    return isinstance(value, list) and any(isinstance(item, dict) for item in value)


def as_property(comments: Iterable[Comment]) -> list[str]:
    """The `comments:` value for these comments."""
    return [c.item() for c in comments]


def union(a: Any, z: Any, was: Any = None) -> Any:
    """Both sides' comments, each once (by `Comment.key`), in time order (free-text items
    after the timed ones, in the order met), but those the base `was` held and one side took
    out. Written in this module's form unless both sides still hold only the old nested
    form (the merge then leaves that form as it was)."""
    keys = [_keys(v) for v in (a, z, was)]
    gone = {k for k in keys[2] if k not in keys[0] or k not in keys[1]}
    seen: dict[tuple[object, str | None, str], tuple[Comment, Any]] = {}
    for value in (a, z):
        if value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            comment = parse_item(item)
            if comment is not None and comment.key() not in gone:
                seen.setdefault(comment.key(), (comment, item))
    if not seen:
        return a if a is not None else z
    ordered = sorted(seen.values(), key=lambda pair: _order(pair[0]))
    old_form = all(isinstance(item, dict) for _, item in ordered)
    return [item for _, item in ordered] if old_form else [c.item() for c, _ in ordered]


def _keys(value: Any) -> set[tuple[object, str | None, str]]:
    items = value if isinstance(value, list) else [value] if value is not None else []
    return {c.key() for c in map(parse_item, items) if c is not None}


def _order(comment: Comment) -> tuple[int, str]:
    moment = parse_iso(comment.at) if comment.at is not None else None
    return (0, moment.isoformat()) if moment is not None else (1, "")
