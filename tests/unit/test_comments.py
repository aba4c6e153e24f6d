"""Comments as Obsidian's List property (vault/comments.py): each one an item, any text
round-trips through the front matter writer, the old nested form is still read, and the
merge driver's union and review's digest treat both forms as the same comments."""

from __future__ import annotations

from typing import Any

import pytest

from vaultmem.vault.changes import NoteChange, _front_matter
from vaultmem.vault.comments import Comment, as_property, nested, parse_item, read, union
from vaultmem.vault.frontmatter import load_yaml, split_document
from vaultmem.vault.note import ParsedNote, parse_note
from vaultmem.vault.writer import edit_note_text, new_note_text

AT = "2026-11-24T10:30:00"
TEXTS = [
    "plain",
    "Looks right: verified",  # `: ` in the text
    "key: value: more: colons",
    "- starts like a list item",
    "# starts like a YAML comment, and has one # here",
    "quotes ' and \" and `ticks`",
    "[[Burgundy wine]] and [not a list] {not: a map}",
    "first line\nsecond line\n\nafter a blank line",  # newlines
    "trailing spaces and a tab\t  ",
    "  leading spaces",
    "&anchor *alias !tag %directive @at |pipe >fold",
    "unicode: é, 中文, emoji 🍷, a line separator\u2028and a NEL\x85",
    "---",
    "2026-11-24T10:30:00 eve: a comment quoting another comment",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("by", "model"), [("alice", "gpt-x"), ("human", None), ("bob", "llama3:8b")])
def test_a_comment_round_trips_through_the_front_matter(text: str, by: str, model: str | None) -> None:
    comment = Comment(AT, by, model, text)
    note = new_note_text({"id": "N", "title": "T", "comments": as_property([comment])}, "Body.\n")
    fm = load_yaml(split_document(note).fm_text or "")
    assert isinstance(fm["comments"], list) and all(isinstance(item, str) for item in fm["comments"])
    assert read(fm["comments"]) == [comment]
    assert read(fm["comments"])[0].to_dict() == {"at": AT, "by": by, "model": model, "text": text}
    # one comment, one line of the file (a newline in the text is escaped)
    lines = (split_document(note).fm_text or "").splitlines()
    assert lines[-2] == "comments:" and lines[-1].startswith("  - ")


@pytest.mark.parametrize(
    ("item", "wanted"),
    [
        # the old nested form, as vaultmem wrote it before
        ({"at": "2026-11-24T10:30:00Z", "by": "alice", "model": "gpt-x", "text": "ok"},
         Comment("2026-11-24T10:30:00Z", "alice", "gpt-x", "ok")),
        ({"at": "2026-11-24T10:30:00Z", "by": "alice", "text": "no model key"},
         Comment("2026-11-24T10:30:00Z", "alice", None, "no model key")),
        # items as a person types them in Obsidian's Properties view
        ("2026-11-24T10:30:00 pat: seen", Comment("2026-11-24T10:30:00", "pat", None, "seen")),
        ("2026-11-24 pat: a date is a time too", Comment("2026-11-24", "pat", None, "a date is a time too")),
        ("2026-11-24T10:30:00Z pat/gpt: old zone", Comment("2026-11-24T10:30:00Z", "pat", "gpt", "old zone")),
        ("2026-11-24T10:30:00 pat:", Comment("2026-11-24T10:30:00", "pat", None, "")),
        ("Great note, thanks", Comment(None, None, None, "Great note, thanks")),
        ("Pat Smith: has a space in the name", Comment(None, None, None, "Pat Smith: has a space in the name")),
        ("2026-13-45T99:00:00 pat: not a time", Comment(None, None, None, "2026-13-45T99:00:00 pat: not a time")),
        (42, Comment(None, None, None, "42")),
        (None, None),
    ],
)  # fmt: skip
def test_items_of_every_form_are_read(item: Any, wanted: Comment | None) -> None:
    assert parse_item(item) == wanted


def test_the_old_nested_form_is_rewritten_as_items_that_say_the_same() -> None:
    old = [
        {"at": "2026-11-24T10:30:00Z", "by": "alice", "model": "gpt-x", "text": "first: yes"},
        {"at": "2026-11-25T08:00:00+02:00", "by": "bob", "model": None, "text": "two\nlines"},
    ]
    assert nested(old) and not nested(as_property(read(old)))
    items = as_property(read(old))
    assert items == ["2026-11-24T10:30:00 alice/gpt-x: first: yes", "2026-11-25T06:00:00 bob: two\nlines"]
    assert [c.key() for c in read(items)] == [c.key() for c in read(old)]


C_OLD = {"at": "2026-01-01T10:00:00Z", "by": "alice", "model": None, "text": "one"}
C_NEW = "2026-01-01T10:00:00 alice: one"  # the same comment, rewritten
D_NEW = "2026-01-02T10:00:00 bob: two: with a colon"
E_OLD = {"at": "2026-01-03T10:00:00Z", "by": "carol", "model": "m", "text": "three"}


@pytest.mark.parametrize(
    ("ours", "theirs", "merged"),
    [
        ([C_NEW], [C_NEW, D_NEW], [C_NEW, D_NEW]),
        ([D_NEW], [C_NEW], [C_NEW, D_NEW]),  # by time
        # one clone rewrote the old form, the other added an old-form comment: one of each
        ([C_NEW, D_NEW], [C_OLD, E_OLD], [C_NEW, D_NEW, "2026-01-03T10:00:00 carol/m: three"]),
        ([C_OLD], [C_OLD, E_OLD], [C_OLD, E_OLD]),  # both still old: the form stays
        ([C_NEW, "free text"], ["free text", D_NEW], [C_NEW, D_NEW, "free text"]),
        (None, [D_NEW], [D_NEW]),
        (None, None, None),
    ],
)
def test_union_of_both_forms(ours: Any, theirs: Any, merged: Any) -> None:
    assert union(ours, theirs) == merged


def note_with(comments: Any) -> ParsedNote:
    parsed = parse_note("shared/T.md", new_note_text({"id": "N", "title": "T", "comments": comments}, "B\n").encode())
    assert isinstance(parsed, ParsedNote)
    return parsed


def test_review_counts_only_new_comments_whatever_the_form() -> None:
    before = note_with([C_OLD])
    after = note_with([C_NEW, D_NEW])
    change = NoteChange("commented", "N", "T", "shared/T.md", None)
    _front_matter(change, before, after)
    assert change.comments_added == [
        {"at": "2026-01-02T10:00:00", "by": "bob", "model": None, "text": "two: with a colon"}
    ]
    assert "comments" not in change.properties


def test_a_comment_write_on_an_old_note_changes_only_the_comments_lines() -> None:
    text = (
        "---\nid: N\ntitle: T\ncomments:\n  - at: '2026-01-01T10:00:00Z'\n    by: alice\n    model: null\n"
        "    text: one\nmine: keep me\n---\nBody.\n"
    )
    fm = load_yaml(split_document(text).fm_text or "")
    edited = edit_note_text(text, fm, {"comments": as_property([*read(fm["comments"]), Comment(AT, "bob", None, "x")])})
    assert edited.text == (
        "---\nid: N\ntitle: T\ncomments:\n  - '2026-01-01T10:00:00 alice: one'\n  - '2026-11-24T10:30:00 bob: x'\n"
        "mine: keep me\n---\nBody.\n"
    )
