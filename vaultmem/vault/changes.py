"""What one note's change means to a person reviewing memory (issue 25). Pure.

From a note file's two versions (either may be missing) to a semantic account: created,
edited (which sections, how many words, a word diff), properties changed (key: old → new),
tags and links added and removed, moved, deleted, restored, commented, validated. The
bookkeeping every write churns (`updated`, `version`, `hash`) is left out: a reviewer
reads what changed, not that something did.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from vaultmem.vault.comments import read as comments_of
from vaultmem.vault.layout import classify
from vaultmem.vault.markdown import HEADING_RE, code_lines
from vaultmem.vault.note import ParsedNote, parse_note

CHURN = frozenset({"updated", "version", "hash"})
TRASH = ".trash/"
WORDS_SHOWN = 12  # words of a word diff shown per side


@dataclass(frozen=True, slots=True)
class Side:
    """One version of a note file: its path and bytes (None: not there)."""

    path: str | None
    data: bytes | None

    def note(self) -> ParsedNote | None:
        if self.path is None or self.data is None or self.path.startswith(TRASH):
            return None
        parsed = parse_note(self.path, self.data)
        return parsed if isinstance(parsed, ParsedNote) else None


@dataclass(slots=True)
class NoteChange:
    kind: str  # created | edited | properties | moved | deleted | restored | commented | validated
    id: str
    title: str
    path: str  # where it is now (where it was, when deleted)
    old_path: str | None
    properties: dict[str, list[Any]] = field(default_factory=dict)  # key -> [old, new]
    tags_added: list[str] = field(default_factory=list)
    tags_removed: list[str] = field(default_factory=list)
    links_added: list[str] = field(default_factory=list)
    links_removed: list[str] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)  # headings of the body's changed sections
    words_added: int = 0
    words_removed: int = 0
    word_diff: str = ""  # "−old words… +new words…", short
    comments_added: list[dict[str, Any]] = field(default_factory=list)
    added_text: str = ""  # the lines this change added (for the secret scan)
    added_lines: list[int] = field(default_factory=list)  # their numbers in the new file
    new: ParsedNote | None = None
    old: ParsedNote | None = None

    def summary(self) -> str:
        """One line a person reads: what happened, then the details that matter."""
        parts: list[str] = []
        if self.kind == "created" and self.new is not None:
            parts.append(f"created {self.new.type} in {self.new.scope}")
        elif self.kind == "moved":
            parts.append(f"moved from {self.old_path}")
        elif self.kind in ("deleted", "restored"):
            parts.append(self.kind)
        if self.sections or self.words_added or self.words_removed:
            where = f" in {', '.join(repr(s) for s in self.sections[:3])}" if self.sections else ""
            parts.append(f"body{where} +{self.words_added}/−{self.words_removed} words")
        if self.comments_added:
            parts.append("; ".join(f"comment by {c.get('by') or '?'}" for c in self.comments_added[:2]))
        for key, (old, new) in list(self.properties.items())[:4]:
            parts.append(f"{key}: {_short(old)} → {_short(new)}")
        if self.tags_added or self.tags_removed:
            parts.append(" ".join([*(f"+#{t}" for t in self.tags_added), *(f"−#{t}" for t in self.tags_removed)]))
        if self.links_added or self.links_removed:
            added = [f"+[[{t}]]" for t in self.links_added[:3]]
            removed = [f"−[[{t}]]" for t in self.links_removed[:3]]
            parts.append("links " + " ".join(added + removed))
        return "; ".join(parts) or self.kind


def describe(old: Side, new: Side) -> NoteChange | None:
    """The change from `old` to `new` of one note (a move when both paths are given and
    differ); None when neither side is a note or nothing a person reads changed."""
    before, after = old.note(), new.note()
    if before is None and after is None:
        return None
    if after is None:
        kind = "deleted"
    elif before is None:
        kind = "restored" if old.path is not None and old.path.startswith(TRASH) else "created"
    elif old.path != new.path:
        kind = "moved"
    else:
        kind = ""
    shown = after or before
    assert shown is not None
    change = NoteChange(
        kind=kind,
        id=shown.id,
        title=shown.title,
        path=(new.path if after is not None else old.path) or "",
        old_path=old.path if kind == "moved" else None,
        new=after,
        old=before,
    )
    _front_matter(change, before, after)
    _body(change, before, after)
    _added(change, old.data, new.data if after is not None else None)
    if not change.kind:
        if change.words_added or change.words_removed:
            change.kind = "edited"
        elif change.comments_added:
            change.kind = "commented"
        elif "last_validated_at" in change.properties or "last_validated_by" in change.properties:
            change.kind = "validated"
        elif (
            change.properties or change.tags_added or change.tags_removed or change.links_added or change.links_removed
        ):
            change.kind = "properties"
        else:
            return None  # churn only (a touch), or nothing
    return change


def scope_moved(change: NoteChange) -> tuple[str, str] | None:
    """(from, to) when a move crossed between private and shared or project knowledge."""
    if change.kind != "moved" or change.old_path is None:
        return None
    a, b = classify(change.old_path), classify(change.path)
    if (a.scope, a.owner, a.project) == (b.scope, b.owner, b.project):
        return None
    return a.scope + (f"/{a.owner or a.project}" if a.owner or a.project else ""), b.scope + (
        f"/{b.owner or b.project}" if b.owner or b.project else ""
    )


def _front_matter(change: NoteChange, before: ParsedNote | None, after: ParsedNote | None) -> None:
    old = before.front_matter if before is not None else {}
    new = after.front_matter if after is not None else {}
    if before is None or after is None:
        if after is not None:
            change.tags_added = list(after.tags)
            change.links_added = sorted({link.target for link in after.graph_links})
        return
    for key in dict.fromkeys([*old, *new]):
        if key in CHURN or key in ("tags", "comments"):
            continue
        if old.get(key) != new.get(key):
            change.properties[key] = [old.get(key), new.get(key)]
    change.tags_added = [t for t in after.tags if t not in before.tags]
    change.tags_removed = [t for t in before.tags if t not in after.tags]
    old_links = {link.target for link in before.graph_links}
    new_links = {link.target for link in after.graph_links}
    change.links_added = sorted(new_links - old_links)
    change.links_removed = sorted(old_links - new_links)
    # by what a comment says, not its form: an old nested list rewritten is no new comment
    old_comments = {c.key() for c in comments_of(old.get("comments"))}
    change.comments_added = [c.to_dict() for c in comments_of(new.get("comments")) if c.key() not in old_comments]


_WORD = re.compile(r"\S+")


def _body(change: NoteChange, before: ParsedNote | None, after: ParsedNote | None) -> None:
    if before is None or after is None:
        if after is not None:
            change.words_added = len(_WORD.findall(after.body))
        return
    if before.body == after.body:
        return
    a, b = _WORD.findall(before.body), _WORD.findall(after.body)
    removed: list[str] = []
    added: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += a[i1:i2]
        if tag in ("replace", "insert"):
            added += b[j1:j2]
    change.words_added, change.words_removed = len(added), len(removed)
    shown = []
    if removed:
        shown.append("−" + " ".join(removed[:WORDS_SHOWN]) + ("…" if len(removed) > WORDS_SHOWN else ""))
    if added:
        shown.append("+" + " ".join(added[:WORDS_SHOWN]) + ("…" if len(added) > WORDS_SHOWN else ""))
    change.word_diff = " ".join(shown)
    change.sections = _changed_sections(before.body, after.body)


def _sections(body: str) -> dict[str, str]:
    """Heading (the path of headings above) -> its text; "" for the text before the first."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line, in_code in code_lines(body.split("\n")):
        m = None if in_code else HEADING_RE.match(line)
        if m:
            current = m.group(2).strip()
            out.setdefault(current, [])
        else:
            out[current].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def _changed_sections(old: str, new: str) -> list[str]:
    a, b = _sections(old), _sections(new)
    return [h or "(top)" for h in dict.fromkeys([*b, *a]) if a.get(h) != b.get(h)]


def _added(change: NoteChange, old: bytes | None, new: bytes | None) -> None:
    """The lines the new file has that the old one had not (a line diff)."""
    if new is None:
        return
    new_lines = new.decode("utf-8", "replace").split("\n")
    old_lines = old.decode("utf-8", "replace").split("\n") if old is not None else []
    numbers: list[int] = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            numbers.extend(range(j1 + 1, j2 + 1))
    change.added_lines = numbers
    change.added_text = "\n".join(new_lines)


def _short(value: Any, limit: int = 40) -> str:
    text = "∅" if value is None else str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
