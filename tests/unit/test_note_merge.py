"""The note merge of git's merge driver (vault/merge.py): front matter by key, bodies
three-way by lines, conflicts in the body only. Tables of cases; git's own merge-file."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
import yaml

from vaultmem.vault.frontmatter import load_yaml, split_document
from vaultmem.vault.git import merge_text
from vaultmem.vault.merge import has_conflict_markers, merge_body, merge_front_matter, merge_note
from vaultmem.vault.note import body_hash

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

C1 = {"at": "2026-01-01T10:00:00Z", "by": "alice", "model": None, "text": "one"}
C2 = {"at": "2026-01-02T10:00:00Z", "by": "bob", "model": None, "text": "two"}


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "merged", "clashes"),
    [
        ({"version": 3}, {"version": 4}, {"version": 5}, {"version": 6}, []),
        ({"updated": "a"}, {"updated": "2026-01-02T00:00:00Z"}, {"updated": "2026-01-03T00:00:00Z"},
         {"updated": "2026-01-03T00:00:00Z"}, []),
        ({"tags": ["a"]}, {"tags": ["a", "b"]}, {"tags": ["a", "c"]}, {"tags": ["a", "b", "c"]}, []),
        ({"aliases": None}, {"aliases": ["X"]}, {"aliases": ["Y", "X"]}, {"aliases": ["X", "Y"]}, []),
        ({}, {"comments": [C2]}, {"comments": [C1, C2]}, {"comments": [C1, C2]}, []),
        ({}, {"last_validated_at": "2026-01-01T00:00:00Z", "last_validated_by": "alice/x"},
         {"last_validated_at": "2026-02-01T00:00:00Z", "last_validated_by": "bob/y"},
         {"last_validated_at": "2026-02-01T00:00:00Z", "last_validated_by": "bob/y"}, []),
        # times compare as moments: an offset form that sorts later as text is earlier in time
        ({}, {"updated": "2026-01-02T10:00:00"}, {"updated": "2026-01-02T12:00:00+05:00"},
         {"updated": "2026-01-02T10:00:00"}, []),
        ({}, {"updated": "2026-01-02T10:00:00Z"}, {"updated": "2026-01-02T10:00:01"},
         {"updated": "2026-01-02T10:00:01"}, []),
        ({}, {"last_validated_at": "2026-02-01T00:00:00Z", "last_validated_by": "alice/x"},
         {"last_validated_at": "2026-02-01T00:30:00", "last_validated_by": "bob/y"},
         {"last_validated_at": "2026-02-01T00:30:00", "last_validated_by": "bob/y"}, []),
        ({"trust_score": 0.5}, {"trust_score": 0.5}, {"trust_score": 0.8}, {"trust_score": 0.8}, []),
        ({"trust_score": 0.5}, {"trust_score": 0.9}, {"trust_score": 0.5}, {"trust_score": 0.9}, []),
        ({"trust_score": 0.5}, {"trust_score": 0.9}, {"trust_score": 0.9}, {"trust_score": 0.9}, []),
        ({"trust_score": 0.5}, {"trust_score": 0.9}, {"trust_score": 0.1}, {"trust_score": 0.9},
         [("trust_score", 0.9, 0.1)]),
        ({"status": "x"}, {}, {"status": "x"}, {}, []),  # removed on our side, untouched on theirs
        # what the base held and one side took out stays out, whatever the other side added
        ({"tags": ["a", "b"]}, {"tags": ["b"]}, {"tags": ["a", "b", "c"]}, {"tags": ["b", "c"]}, []),
        ({"tags": ["a", "b"]}, {"tags": ["a", "b", "d"]}, {"tags": ["b"]}, {"tags": ["b", "d"]}, []),
        ({"aliases": ["X"]}, {"aliases": []}, {"aliases": ["X"]}, {"aliases": []}, []),
        ({"comments": [C1, C2]}, {"comments": [C2]}, {"comments": [C1, C2]}, {"comments": [C2]}, []),
        ({"comments": [C1]}, {"comments": [C1]}, {"comments": [C2]}, {"comments": [C2]}, []),
    ],
    ids=["version", "updated", "tags", "aliases", "comments", "validation", "updated-offset", "updated-zone",
         "validation-zone", "theirs-changed", "ours-changed",
         "same-change", "clash", "removed", "tag-removed-ours", "tag-removed-theirs", "alias-removed",
         "comment-removed-ours", "comment-replaced-theirs"],
)  # fmt: skip
def test_front_matter_rules(
    base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any], merged: dict[str, Any], clashes: list[Any]
) -> None:
    out, found = merge_front_matter(base, ours, theirs)
    assert {k: v for k, v in out.items() if v is not None} == merged
    assert found == clashes


def note(fm: dict[str, Any], body: str) -> str:
    return "---\n" + yaml.safe_dump(fm, sort_keys=False) + "---\n" + body


def parts(text: str) -> tuple[dict[str, Any], str]:
    split = split_document(text)
    return load_yaml(split.fm_text or ""), split.body


BASE = note({"id": "N", "title": "T", "tags": ["wine"], "version": 2, "updated": "2026-01-01T00:00:00Z",
             "hash": "sha256:x"}, "# T\n\nFirst line.\n\nMiddle line.\n\nLast line.\n")  # fmt: skip


def _hashed(fm: dict[str, Any], body: str) -> str:
    """A side as vaultmem wrote it: its hash matches its body."""
    return note({**fm, "hash": body_hash(body)}, body)


@pytest.mark.parametrize(
    ("ours_by_hand", "theirs_by_hand", "hashed"),
    [(False, False, True), (True, False, False), (False, True, False), (True, True, False)],
    ids=["both-vaultmem", "ours-by-hand", "theirs-by-hand", "both-by-hand"],
)
def test_a_merged_body_is_vaultmems_only_when_both_sides_were(
    ours_by_hand: bool, theirs_by_hand: bool, hashed: bool
) -> None:
    """A person's words on either side are in the merged body: it keeps no `hash`, so no
    agent replaces it unread (vault/note.py as_written)."""
    fm = {"id": "N", "title": "T", "version": 2}
    base = _hashed(fm, "One.\n\nTwo.\n")
    ours = _hashed({**fm, "version": 3}, "One, ours.\n\nTwo.\n")
    theirs = _hashed({**fm, "version": 3}, "One.\n\nTwo, theirs.\n")
    if ours_by_hand:
        ours = ours.replace("One, ours.", "One, ours by hand.")
    if theirs_by_hand:
        theirs = theirs.replace("Two, theirs.", "Two, theirs by hand.")
    merged = merge_note(base, ours, theirs, merge_text)
    fm_out, body = parts(merged.text)
    assert merged.conflicts == 0 and "Two, theirs" in body and "One, ours" in body
    assert ("hash" in fm_out) is hashed
    if hashed:
        assert fm_out["hash"] == body_hash(body)


def test_two_sides_writes_merge_clean() -> None:
    ours = note(
        {
            "id": "N",
            "title": "T",
            "tags": ["wine", "red"],
            "version": 3,
            "updated": "2026-01-02T00:00:00Z",
            "hash": body_hash("# T\n\nFirst line, ours.\n\nMiddle line.\n\nLast line.\n"),
            "comments": [C1],
        },
        "# T\n\nFirst line, ours.\n\nMiddle line.\n\nLast line.\n",
    )
    theirs = note({"id": "N", "title": "T", "tags": ["wine", "burgundy"], "version": 4,
                   "updated": "2026-01-03T00:00:00Z", "comments": [C2],
                   "hash": body_hash("# T\n\nFirst line.\n\nMiddle line.\n\nLast line, theirs.\n")},
                  "# T\n\nFirst line.\n\nMiddle line.\n\nLast line, theirs.\n")  # fmt: skip
    merged = merge_note(BASE, ours, theirs, merge_text)
    assert merged.conflicts == 0
    fm, body = parts(merged.text)
    assert fm["version"] == 5 and fm["updated"] == "2026-01-03T00:00:00Z"
    assert fm["tags"] == ["wine", "red", "burgundy"] and fm["comments"] == [C1, C2]
    assert body == "# T\n\nFirst line, ours.\n\nMiddle line.\n\nLast line, theirs.\n"
    assert fm["hash"] == body_hash(body)
    assert has_conflict_markers(body) == []


def test_a_true_conflict_leaves_markers_in_the_body_only() -> None:
    ours = note({"id": "N", "title": "T", "tags": ["wine"], "version": 3, "trust_score": 0.9},
                "# T\n\nFirst line.\n\nMiddle, said alice.\n\nLast line.\n")  # fmt: skip
    theirs = note({"id": "N", "title": "T", "tags": ["wine"], "version": 3, "trust_score": 0.2},
                  "# T\n\nFirst line.\n\nMiddle, said bob.\n\nLast line.\n")  # fmt: skip
    merged = merge_note(BASE, ours, theirs, merge_text)
    assert merged.conflicts == 2  # the middle lines, and trust_score
    fm, body = parts(merged.text)  # the front matter still parses
    assert fm["trust_score"] == 0.9 and fm["version"] == 4
    assert "<<<<<<< ours" in body and ">>>>>>> theirs" in body and "trust_score: 0.2" in body
    split = split_document(merged.text)
    assert split.fm_text is not None and not has_conflict_markers(split.fm_text)


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "merged", "conflicts"),
    [
        # two agents append to one note on two machines: both lines kept, ours first
        ("a\n\nb\n", "a\n\nb\n\nours\n", "a\n\nb\n\ntheirs\n", "a\n\nb\n\nours\n\ntheirs\n", 0),
        ("a\n", "a\nsame\n", "a\nsame\n", "a\nsame\n", 0),
        # the same existing line changed differently: a conflict, standard markers
        ("a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n", "a\n<<<<<<< ours\nB1\n=======\nB2\n>>>>>>> theirs\nc\n", 1),
        # a heading underlined with `=======` on both sides is text, not a marker (both kept)
        ("a\n", "a\nA\n=======\nx\n", "a\nB\n=======\ny\n", "a\nA\n=======\nx\nB\n=======\ny\n", 0),
    ],
    ids=["both-append", "same-append", "same-line", "underline"],
)
def test_body_merge(base: str, ours: str, theirs: str, merged: str, conflicts: int) -> None:
    assert merge_body(ours, base, theirs, merge_text) == (merged, conflicts)


PLAIN = "# T\n\nFirst line.\n\nLast line.\n"
FRONT = "---\nid: N\ntitle: T\nversion: 3\n---\n# T\n\nFirst line.\n\nLast line.\n"


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


@pytest.mark.parametrize("base", [PLAIN, FRONT])
@pytest.mark.parametrize(
    ("ours_crlf", "theirs_crlf", "base_crlf", "merged_crlf"),
    [
        (True, False, False, True),  # ours saved in Notepad, theirs appended: both kept, ours' endings
        (False, True, False, True),  # the other way round
        (True, True, True, True),  # neither changed the endings: the base's
        (False, False, True, False),  # both went to LF
        (True, True, False, True),
        (False, True, True, False),  # ours went back to LF: ours' change wins
        (True, False, True, False),  # theirs went to LF
    ],
)
def test_line_endings_are_no_edit(
    base: str, ours_crlf: bool, theirs_crlf: bool, base_crlf: bool, merged_crlf: bool
) -> None:
    """A side that only changed every line's ending changed no words: the other side's
    lines merge as they would without it, with no conflict over the whole note."""
    added_ours, added_theirs = base + "\nOurs appended.\n", base.replace("First line.", "First line, theirs.")
    b = crlf(base) if base_crlf else base
    o = crlf(added_ours) if ours_crlf else added_ours
    t = crlf(added_theirs) if theirs_crlf else added_theirs
    merged = merge_note(b, o, t, merge_text)
    assert merged.conflicts == 0, merged.text
    text = merged.text.replace("\r\n", "\n")
    assert "First line, theirs." in text and "Ours appended." in text and "Last line." in text
    assert ("\r\n" in merged.text) is merged_crlf
    assert merged.text.count("\r\n") == (merged.text.count("\n") if merged_crlf else 0)


def test_mixed_endings_merge_as_they_are() -> None:
    """A text of mixed endings is not rewritten: which ending each line has is the person's."""
    mixed = "# T\r\n\nFirst line.\r\n\nLast line.\n"
    merged = merge_note(mixed, mixed + "\nOurs.\n", mixed, merge_text)
    assert merged.conflicts == 0 and merged.text == mixed + "\nOurs.\n"


def test_endings_found_by_review() -> None:
    """A pasted CRLF line in an LF note merged with a side saved all CRLF got `\\r\\r\\n`; a
    CRLF note with one LF line appended conflicted over the whole note with a CRLF edit."""
    base = "# T\n\nFirst line.\n\nLast line.\n"
    pasted = base + "\nPasted.\r\nMore.\r\n"
    merged = merge_note(base, crlf(base), pasted, merge_text)
    assert merged.conflicts == 0 and "\r\r" not in merged.text
    assert merged.text == crlf(pasted.replace("\r\n", "\n"))
    edited = crlf(base).replace("First line.", "First line, edited.")
    appended = crlf(base) + "Echoed.\n"
    merged = merge_note(crlf(base), edited, appended, merge_text)
    assert merged.conflicts == 0
    assert merged.text == crlf(base).replace("First line.", "First line, edited.") + "Echoed.\n"


def test_a_persons_property_lines_merge_as_written() -> None:
    """The values of the side merged in were rendered from YAML 1.1's reading: `12:30`
    became 750, `01234` 668, `yes` true, a `# comment` vanished, and an empty property
    (Obsidian's `status:`) was dropped (a reviewer's sync between two clones)."""
    head = "---\nid: x\ntitle: Grapes\nsource: s\n"
    tail = "updated: 2026-11-28T10:00:00\nversion: 1\n---\nGrapes.\n"
    base = head + tail
    person = head + "# Pat: check the source\ntime: 12:30\nzip: 01234\nanswer: yes\nstatus:\n" + tail
    agent = head + "updated: 2026-11-28T11:00:00\nversion: 2\n---\nGrapes.\n- Syrah\n"
    for ours, theirs in ((agent, person), (person, agent)):
        merged = merge_note(base, ours, theirs, merge_text)
        assert merged.conflicts == 0
        assert "# Pat: check the source\ntime: 12:30\nzip: 01234\nanswer: yes\nstatus:\n" in merged.text
        assert "version: 3\n" in merged.text and merged.text.endswith("Grapes.\n- Syrah\n")
