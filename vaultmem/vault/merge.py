"""Three-way merge of one note, for git's merge driver (issue 27). Pure but for the body's
line merge, which is git's own (`git merge-file`, passed in).

Two clones that both wrote memory must merge without conflict markers in YAML: a marker in
front matter breaks the note for every reader. So the front matter is merged key by key:

- `version`: the larger of the two, plus one (both sides' writes count);
- `updated`: the later; `hash`: of the merged body;
- `tags`, `aliases`: the union, in order; `comments`: the union by (at, by, text), by time,
  whatever form each side holds them in (vault/comments.py); in both, what the base held
  and one side took out stays out;
- the validation (`last_validated_at`, `last_validated_by`): the later one, whole;
- any other key: three-way — the side that changed it wins, both changed alike is no
  conflict, both changed it differently is a conflict.

The body merges three-way by lines. A real conflict — the same lines, or the same key,
changed differently on each side — keeps our front matter valid and puts standard markers
in the body only (a key's conflict as a marked block at the end of the body), which
`lint` reports (`merge_conflict`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.vault.comments import union as union_comments
from vaultmem.vault.dates import later
from vaultmem.vault.frontmatter import FrontMatterError, compose_document, load_yaml, split_document
from vaultmem.vault.note import as_written, body_hash
from vaultmem.vault.store import write_whole
from vaultmem.vault.writer import REMOVE, edit_note_text, normalize_body

MergeText = Callable[..., tuple[str, int]]  # (ours, base, theirs, diff3=) -> (text, conflicts)
UNION_LISTS = ("tags", "aliases")
VALIDATION = ("last_validated_at", "last_validated_by")
CONFLICT_MARKERS = ("<<<<<<< ", "=======", ">>>>>>> ")
_MARKER = 41  # merge_body's own markers, read back by it alone


@dataclass(frozen=True, slots=True)
class Merged:
    text: str
    conflicts: int  # 0: clean


def _parts(text: str) -> tuple[dict[str, Any], str] | None:
    split = split_document(text)
    if split.fm_text is None:
        return {}, split.body
    try:
        return load_yaml(split.fm_text), split.body
    except FrontMatterError:
        return None


def merge_note(base: str, ours: str, theirs: str, merge_text: MergeText) -> Merged:
    """The merged note (module docstring). Notes whose front matter does not parse merge as
    plain text, markers and all: there is no key to merge by.

    Line endings are not words: a side that turned its lines' LF into CRLF (a Windows
    editor's save) would otherwise have changed every line, and any edit on the other side
    would conflict over the whole note. Where the sides' endings differ (most lines CRLF on
    one, LF on another) they merge as LF, and the result takes the endings of the side that
    changed them (ours first), else the base's. Where they agree, the texts merge as they
    are, each line's own ending kept (a pasted CRLF line in an LF note included)."""
    styles = [_mostly_crlf(text) for text in (base, ours, theirs)]
    if len(set(styles)) == 1:
        return _merge_note(base, ours, theirs, merge_text)
    b, o, t = (text.replace("\r\n", "\n") for text in (base, ours, theirs))
    merged = _merge_note(b, o, t, merge_text)
    wanted = styles[1] if styles[1] != styles[0] else styles[2] if styles[2] != styles[0] else styles[0]
    return Merged(_CRLF_AT.sub("\r\n", merged.text) if wanted else merged.text, merged.conflicts)


_CRLF_AT = re.compile(r"(?<!\r)\n")  # an LF without its CR: where CRLF goes (never \r\r\n)


def _mostly_crlf(text: str) -> bool:
    """Whether most of `text`'s lines end in CRLF."""
    return text.count("\r\n") * 2 > text.count("\n")


def _merge_note(base: str, ours: str, theirs: str, merge_text: MergeText) -> Merged:
    o, b, t = _parts(ours), _parts(base), _parts(theirs)
    if o is None or t is None:
        text, conflicts = merge_text(ours, base, theirs)
        return Merged(text, conflicts)
    base_fm, base_body = b if b is not None else ({}, "")
    ours_fm, ours_body = o
    theirs_fm, theirs_body = t
    body, conflicts = merge_body(ours_body, base_body, theirs_body, merge_text)
    merged, clashes = merge_front_matter(base_fm, ours_fm, theirs_fm)
    if clashes:
        conflicts += len(clashes)
        body = body.rstrip("\n") + "\n\n" + "\n".join(_marked(key, a, z) for key, a, z in clashes) + "\n"
    # `hash` says vaultmem wrote the body (what an agent may replace unread): only when both
    # sides' bodies were as vaultmem wrote them; a person's words on either side are in it
    agents = as_written(ours_fm, ours_body) and as_written(theirs_fm, theirs_body)
    merged["hash"] = body_hash(normalize_body(body)) if "hash" in merged and agents else None
    changes: dict[str, Any] = {}
    for key in dict.fromkeys([*ours_fm, *merged]):
        value = merged.get(key)
        if key not in merged or (value is None and (key == "hash" or not _kept_null(key, base_fm, ours_fm, theirs_fm))):
            if key in ours_fm:
                changes[key] = REMOVE
        elif key not in ours_fm or ours_fm.get(key) != value:
            changes[key] = value
    if not ours_fm and not changes:
        return Merged(body if split_document(ours).fm_text is None else ours, conflicts)
    final = {k: v for k, v in {**ours_fm, **changes}.items() if v is not REMOVE}
    as_text = None if clashes else _as_text(base, ours, theirs, final, merge_text)
    if as_text is not None:
        doc, fm = as_text
        kept = {k: final.get(k, REMOVE) for k in BOOKKEEPING if k in fm or k in final}
        return Merged(edit_note_text(doc, fm, kept, body).text, conflicts)
    edited = edit_note_text(ours, ours_fm, changes, body)
    return Merged(edited.text, conflicts)


def _kept_null(key: str, base: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> bool:
    """Whether a key whose merged value is null stays (Obsidian's empty property, `status:`):
    as the side that added or removed it has it, else as it was."""
    here, there, was = key in ours, key in theirs, key in base
    return here if there == was else there


BOOKKEEPING = ("version", "updated", "hash")  # set on the merged note, never merged as text
_BOOKKEEPING_LINE = re.compile(r"^(version|updated|hash):[^\r\n]*", re.MULTILINE)


def _as_text(
    base: str, ours: str, theirs: str, final: Mapping[str, Any], merge_text: MergeText
) -> tuple[str, dict[str, Any]] | None:
    """Ours with the front matters merged as text, every line a side wrote kept as written
    (a person's `time: 12:30`, `zip: 01234`, `answer: yes`, a `# comment`, which rendering
    read values would change or drop), and its front matter as read; when the text merges
    cleanly and reads as the key-by-key merge `final` (bookkeeping aside: set after). None
    otherwise."""
    sides = [split_document(text) for text in (base, ours, theirs)]
    if sides[1].fm_text is None or sides[2].fm_text is None:
        return None
    texts = [_BOOKKEEPING_LINE.sub(r"\1: ~", side.fm_text or "") for side in sides]
    text, conflicts = merge_text(texts[1], texts[0], texts[2])
    if conflicts:
        return None
    try:
        fm = load_yaml(text)
    except FrontMatterError:
        return None
    if {k: v for k, v in fm.items() if k not in BOOKKEEPING} != {
        k: v for k, v in final.items() if k not in BOOKKEEPING
    }:
        return None
    ours_side = sides[1]
    return compose_document(text, ours_side.body, ours_side.newline, ours_side.bom), fm


def merge_body(ours: str, base: str, theirs: str, merge_text: MergeText) -> tuple[str, int]:
    """The bodies merged by lines. Where both sides only added lines at the same place (two
    agents appending to one note on two machines) both additions are kept, ours first;
    where both changed the same existing lines, standard conflict markers stay."""
    # Markers longer than any line a note holds: a line of seven `=` (a heading's underline)
    # is text, not the separator (a reviewer's find: both sides' `=======` lines vanished).
    text, conflicts = merge_text(ours, base, theirs, diff3=True, marker_size=_MARKER)
    if not conflicts:
        return text, 0
    out: list[str] = []
    left = 0
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("<" * _MARKER + " ours"):
            out.append(lines[i])
            i += 1
            continue
        mine: list[str] = []
        was: list[str] = []
        yours: list[str] = []
        part = mine
        i += 1
        while i < len(lines) and not lines[i].startswith(">" * _MARKER + " theirs"):
            if lines[i].startswith("|" * _MARKER + " base"):
                part = was
            elif lines[i] == "=" * _MARKER:
                part = yours
            else:
                part.append(lines[i])
            i += 1
        i += 1  # the closing marker
        if not any(line.strip() for line in was):  # additions only: keep both
            out += mine + ([] if yours == mine else yours)
        else:
            left += 1
            out += ["<<<<<<< ours", *mine, "=======", *yours, ">>>>>>> theirs"]
    return "\n".join(out), left


def merge_front_matter(
    base: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, Any, Any]]]:
    """The merged front matter, and the keys both sides changed differently (key, ours,
    theirs): ours is kept for those."""
    out: dict[str, Any] = {}
    clashes: list[tuple[str, Any, Any]] = []
    keys = list(dict.fromkeys([*ours, *theirs]))
    for key in keys:
        a, z, was = ours.get(key), theirs.get(key), base.get(key)
        if key == "version":
            numbers = [v for v in (a, z) if isinstance(v, int) and not isinstance(v, bool)]
            out[key] = max(numbers) + 1 if numbers else a
        elif key == "updated":
            out[key] = later(a, z)  # as times: `…Z` and Obsidian's form name the same moments
        elif key in UNION_LISTS:
            out[key] = _union(a, z, was)
        elif key == "comments":
            out[key] = union_comments(a, z, was)
        elif key in VALIDATION:
            continue  # below, as one
        elif key == "hash":
            out[key] = a if a is not None else z
        elif a == z or z == was:
            out[key] = a
        elif a == was:
            out[key] = z
        else:
            out[key] = a
            clashes.append((key, a, z))
    if any(k in ours or k in theirs for k in VALIDATION):
        mine, yours = ours.get("last_validated_at"), theirs.get("last_validated_at")
        side = ours if later(mine, yours) is mine or yours is None else theirs
        for key in VALIDATION:
            out[key] = side.get(key)
    return out, clashes


def _union(a: Any, z: Any, was: Any = None) -> Any:
    """Both sides' items, each once, in order; but an item the base held that one side took
    out stays out (a tag removed here while the note was edited there does not come back)."""
    ours, theirs, before = _items(a), _items(z), _items(was)
    gone = [item for item in before if item not in ours or item not in theirs]
    seen: list[Any] = []
    for item in [*ours, *theirs]:
        if item not in seen and item not in gone:
            seen.append(item)
    return seen if seen or isinstance(a, list) else a


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if value else []


def _marked(key: str, ours: Any, theirs: Any) -> str:
    return f"<<<<<<< ours\n{key}: {ours}\n=======\n{key}: {theirs}\n>>>>>>> theirs"


def has_conflict_markers(body: str) -> list[int]:
    """1-based numbers of the body's lines that are merge conflict markers."""
    return [
        n
        for n, line in enumerate(body.split("\n"), 1)
        if line.startswith(CONFLICT_MARKERS[0]) or line == CONFLICT_MARKERS[1] or line.startswith(CONFLICT_MARKERS[2])
    ]


def merge_files(base: Path, ours: Path, theirs: Path) -> int:
    """git's merge driver: merge `theirs` into `ours` (written in place, atomically) over
    `base`; the number of conflicts (0: clean, as git expects of a driver's exit status)."""
    from vaultmem.vault.git import merge_text

    def read(path: Path) -> str:
        return path.read_bytes().decode("utf-8", "surrogateescape")

    merged = merge_note(read(base), read(ours), read(theirs), merge_text)
    # git's own temp file (%A), not a note: 0600 as before; git writes the note from it
    write_whole(ours, merged.text.encode("utf-8", "surrogateescape"), 0o600)
    return min(merged.conflicts, 127)
