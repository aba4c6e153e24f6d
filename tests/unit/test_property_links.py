"""Wikilinks in properties (pure): which values Obsidian reads as links, where their targets
sit in the front matter text, and a rewrite that changes only those targets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vaultmem.index.resolve import NameEntry, Resolver
from vaultmem.services.crossings import _words
from vaultmem.services.relinker import Relinker
from vaultmem.vault.frontmatter import load_yaml, replace_front_matter
from vaultmem.vault.note import ParsedNote, parse_note
from vaultmem.vault.property_links import (
    file_linked_properties,
    file_linked_value,
    plain_parent_span,
    property_links,
    property_spans,
    relinked_properties,
)


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ({"related": "[[A]]"}, [("A", None, None)]),
        ({"related": "[[A|label]]"}, [("A", None, "label")]),
        ({"related": "[[A#Part]]"}, [("A", "Part", None)]),
        ({"related": "[[A#^block|x]]"}, [("A", "^block", "x")]),
        ({"sources": ["[[A]]", "plain", "[[B|b]]", 3, None]}, [("A", None, None), ("B", None, "b")]),
        ({"a": "[[A]]", "b": ["[[B]]"]}, [("A", None, None), ("B", None, None)]),
        # Obsidian reads a property as a link only when the link is its whole value
        ({"note": "see [[A]]"}, []),
        ({"note": "[[A]] and [[B]]"}, []),
        ({"note": " [[A]]"}, []),
        ({"cover": "![[pic.png]]"}, []),  # an embed in a property embeds nothing in Obsidian
        ({"nested": {"deep": "[[A]]"}}, []),  # no nested properties in Obsidian
        ({"lists": [["[[A]]"]]}, []),
        ({"related": "[[]]"}, []),
        ({"related": "[[#Heading]]"}, []),
        ({"n": 5, "flag": True, "when": "2026-11-24"}, []),
        # `parent` is the note's parent edge already, not a second edge as a link
        ({"parent": "[[A]]"}, []),
    ],
)
def test_property_links(front: dict[str, Any], expected: list[tuple[str, str | None, str | None]]) -> None:
    links = property_links(front)
    assert [(lk.target, lk.heading, lk.label) for lk in links] == expected
    assert all(lk.kind == "wiki" for lk in links)


def test_parse_note_keeps_property_links_beside_the_body_links() -> None:
    data = b'---\ntitle: T\nrelated: "[[Other]]"\nsources:\n  - "[[Third|3rd]]"\n---\nBody [[Body link]].\n'
    note = parse_note("shared/T.md", data)
    assert isinstance(note, ParsedNote)
    assert [lk.target for lk in note.links] == ["Body link"]
    assert [lk.target for lk in note.property_links] == ["Other", "Third"]
    assert [lk.target for lk in note.graph_links] == ["Body link", "Other", "Third"]


def _renamed(fm: str, new: str = "New Title") -> str | None:
    """`fm` with every property link to `Old Title` pointing at `new`."""
    pairs = [(s, new) for s in property_spans(fm) if s.link.target == "Old Title"]
    return relinked_properties(fm, pairs)


@pytest.mark.parametrize(
    ("fm", "expected"),
    [
        ('related: "[[Old Title]]"\n', 'related: "[[New Title]]"\n'),
        ("related: '[[Old Title]]'\n", "related: '[[New Title]]'\n"),
        ('related: "[[Old Title|alias]]"\n', 'related: "[[New Title|alias]]"\n'),
        ('related: "[[Old Title#Part|p]]"\n', 'related: "[[New Title#Part|p]]"\n'),
        ('related: "[[ Old Title ]]"\n', 'related: "[[New Title]]"\n'),
        (
            '# my links\nsources:\n  - "[[Other]]"   # keep\n  - "[[Old Title|alias]]"\n\n  - \'[[Old Title#^b]]\'\nn: 5\n',
            '# my links\nsources:\n  - "[[Other]]"   # keep\n  - "[[New Title|alias]]"\n\n  - \'[[New Title#^b]]\'\nn: 5\n',
        ),
        (
            'sources: ["[[Other]]",  "[[Old Title]]" ]  # flow\n',
            'sources: ["[[Other]]",  "[[New Title]]" ]  # flow\n',
        ),
        ('title: T\r\nrelated: "[[Old Title]]"\r\n', 'title: T\r\nrelated: "[[New Title]]"\r\n'),
        # one value a YAML alias repeats: both read the new target
        ('a: &x "[[Old Title]]"\nb: *x\n', 'a: &x "[[New Title]]"\nb: *x\n'),
        # written with an escape: the value written anew, double-quoted
        ('related: "[[Old Title|caf\\u00e9]]"\n', 'related: "[[New Title|café]]"\n'),
        ("related: '[[Old Title|it''s]]'\n", 'related: "[[New Title|it\'s]]"\n'),
        # not links to Obsidian, so not rewritten
        (
            'note: "see [[Old Title]]"\ncover: "![[Old Title]]"\n',
            'note: "see [[Old Title]]"\ncover: "![[Old Title]]"\n',
        ),
        ("nested:\n  deep: '[[Old Title]]'\n", "nested:\n  deep: '[[Old Title]]'\n"),
    ],
)
def test_relinked_properties_changes_only_link_targets(fm: str, expected: str) -> None:
    assert _renamed(fm) == expected
    assert load_yaml(expected)  # still a valid front matter


@pytest.mark.parametrize(
    ("fm", "new", "expected"),
    [
        ("related: '[[Old Title]]'\n", "Bob's notes", "related: '[[Bob''s notes]]'\n"),
        ('related: "[[Old Title]]"\n', 'odd\\"name', 'related: "[[odd\\\\\\"name]]"\n'),
    ],
)
def test_a_new_target_is_written_as_its_quotes_need(fm: str, new: str, expected: str) -> None:
    out = _renamed(fm, new)
    assert out == expected
    assert load_yaml(out)["related"] == f"[[{new}]]"


@pytest.mark.parametrize(
    "fm",
    [
        "related: [broken\n",  # not YAML
        "- a\n- b\n",  # not a mapping
        "",
        'related: "[[Old Title]]\n',  # an unclosed quote
    ],
)
def test_front_matter_vaultmem_cannot_read_has_no_spans(fm: str) -> None:
    assert property_spans(fm) == []


@pytest.mark.parametrize(
    ("text", "fm", "expected"),
    [
        ("---\na: 1\n---\nbody\n", "a: 2\n", "---\na: 2\n---\nbody\n"),
        ("\ufeff---\r\na: 1\r\n...\r\nbody", "a: 2\r\n", "\ufeff---\r\na: 2\r\n...\r\nbody"),
        ("---  \na: 1\n---\n---\nbody\n", "b: 3\n", "---  \nb: 3\n---\n---\nbody\n"),
        ("no front matter\n", "a: 2\n", "no front matter\n"),
    ],
)
def test_replace_front_matter_keeps_the_rest(text: str, fm: str, expected: str) -> None:
    assert replace_front_matter(text, fm) == expected


# --- a move's rewrite ------------------------------------------------------------------------

NAMES = [
    ("shared/Old Title.md", "id-old", "Old Title", ()),
    ("shared/Other.md", "id-other", "Other", ()),
    ("shared/Ref.md", "id-ref", "Ref", ()),
    ("private/alice/Secret.md", "id-secret", "Secret", ()),
]


@pytest.mark.parametrize(
    ("fm", "short", "expected"),
    [
        ('related: "[[Old Title|o]]"\n', True, 'related: "[[New Title|o]]"\n'),
        ('related: "[[Old Title|o]]"\n', False, 'related: "[[shared/New Title|o]]"\n'),  # a ghost's: the path
        ('related: "[[id-old]]"\n', True, 'related: "[[id-old]]"\n'),  # by id: ids never change
        ('related: "[[shared/Old Title]]"\n', True, 'related: "[[New Title]]"\n'),
        ('related: "[[Other]]"\nparent: "[[Old Title]]"\n', True, 'related: "[[Other]]"\nparent: "[[New Title]]"\n'),
        ('related: "[[Nowhere]]"\n', True, 'related: "[[Nowhere]]"\n'),
    ],
)
def test_a_move_rewrites_property_links_as_it_does_body_links(fm: str, short: bool, expected: str) -> None:
    relinker = Relinker.build(NAMES, {"shared/Old Title.md": "shared/New Title.md"}, short=short)
    assert relinker.rewrite_properties("shared/Ref.md", fm) == expected


def test_a_property_link_that_would_name_a_hidden_note_stays() -> None:
    """A shared note's link to alice's note that moves: its path would show every reader of
    the shared note a note they may not see (the body's rule)."""
    moves = {"private/alice/Secret.md": "private/alice/Secret 2.md"}
    relinker = Relinker.build(NAMES, moves, short=True, names_ok=lambda src, dst: not dst.startswith("private/"))
    fm = 'related: "[[Secret]]"\n'
    assert relinker.rewrite_properties("shared/Ref.md", fm) == fm


def test_links_a_move_rewrote_in_properties_are_no_words() -> None:
    """Sync brings back a note deleted on one side and edited on the other; links a move
    rewrote on the other side are no edit (services/crossings.py)."""
    before = b'---\ntitle: Ref\nversion: 2\nrelated: "[[Old Title]]"\n---\nsee [[Old Title]]\n'
    after = b'---\ntitle: Ref\nversion: 3\nrelated: "[[New Title]]"\n---\nsee [[New Title]]\n'
    assert _words(before) == _words(after)
    assert _words(before) != _words(before.replace(b"title: Ref", b"title: Refs"))


# --- written by file name, as Obsidian resolves them (lint --fix, vaultmem's own writes) ------

WINE_ID = "01JJ5E6RHXQAQPDH4AFAXRHEM3"
_NAMES = [("shared/Wine basics.md", WINE_ID, "Wine: basics", ("Vino",)), ("shared/T.md", "T1", "T", ())]
_VAULTMEM = Resolver(NameEntry(*n) for n in _NAMES)
_OBSIDIAN = Resolver(NameEntry(n[0], "", "") for n in _NAMES)


def _is_id(target: str) -> bool:
    return target.lower() in _VAULTMEM.by_id


def _file_linked(fm: str) -> str:
    return file_linked_properties(fm, "shared/T.md", _VAULTMEM.resolve, _OBSIDIAN.resolve, _is_id)


@pytest.mark.parametrize(
    ("fm", "expected"),
    [
        # as the body's links: the vault path, what was shown kept as the label
        ('related: "[[Wine: basics]]"  # mine\n', 'related: "[[shared/Wine basics|Wine: basics]]"  # mine\n'),
        ("related: '[[Wine: basics#Soils]]'\n", "related: '[[shared/Wine basics#Soils|Wine: basics#Soils]]'\n"),
        ('s:\n  - "[[Vino|wine]]"\n  - x\n', 's:\n  - "[[shared/Wine basics|wine]]"\n  - x\n'),
        (f'related: "[[{WINE_ID}]]"\n', 'related: "[[shared/Wine basics]]"\n'),
        ('flow: ["[[Wine: basics]]", plain]  # c\n', 'flow: ["[[shared/Wine basics|Wine: basics]]", plain]  # c\n'),
        ('parent: "[[Wine: basics]]"\n', 'parent: "[[shared/Wine basics|Wine: basics]]"\n'),  # a link to Obsidian
        ('related: "[[Wine\\u003A basics]]"\n', 'related: "[[shared/Wine basics|Wine: basics]]"\n'),  # escapes
        # what Obsidian already resolves, a dangling link, a link among words: as written
        ('related: "[[Wine basics]]"\n', None),
        ('related: "[[shared/Wine basics|x]]"\n', None),
        ('related: "[[Nowhere]]"\n', None),
        ('note: "see [[Wine: basics]]"\n', None),
        # a note's own names are left as given: rewritten, they would rename it
        ('title: "[[Wine: basics]]"\naliases: ["[[Wine: basics]]"]\n', None),
    ],
)
def test_property_links_are_written_by_file_name(fm: str, expected: str | None) -> None:
    assert _file_linked(fm) == (fm if expected is None else expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[[Wine: basics]]", "[[shared/Wine basics|Wine: basics]]"),
        ("[[Wine: basics#Soils|s]]", "[[shared/Wine basics#Soils|s]]"),
        # an empty label stays as typed (once `[[shared/Wine basics||Wine: basics|]]`)
        ("[[Vino|]]", "[[shared/Wine basics|]]"),
        ("[[Vino#Soils|]]", "[[shared/Wine basics#Soils|]]"),
        (f"[[{WINE_ID}]]", "[[shared/Wine basics]]"),
        (["[[Vino]]", "x", 3, None, ["[[Vino]]"]], ["[[shared/Wine basics|Vino]]", "x", 3, None, ["[[Vino]]"]]),
        ("[[Wine basics]]", "[[Wine basics]]"),
        ("see [[Wine: basics]]", "see [[Wine: basics]]"),
        ("![[Wine: basics]]", "![[Wine: basics]]"),
        (5, 5),
        (None, None),
    ],
)
def test_a_property_value_is_written_by_file_name_as_in_the_text(value: Any, expected: Any) -> None:
    assert file_linked_value(value, "shared/T.md", _VAULTMEM.resolve, _OBSIDIAN.resolve, _is_id) == expected
    # the same as a rewrite of the front matter text that holds it
    fm = "v: " + json.dumps(value, ensure_ascii=False) + "\n"
    assert load_yaml(_file_linked(fm))["v"] == expected


@pytest.mark.parametrize(
    ("fm", "target", "expected"),
    [
        ("parent: Target  # c\n", "shared/New", "parent: shared/New  # c\n"),
        ("parent: Target\n", "a: b", 'parent: "a: b"\n'),
        ("parent: Target\n", "yes", 'parent: "yes"\n'),
        ("parent: Target\n", "#x", 'parent: "#x"\n'),
        ("parent: 'Target'\n", "It's", "parent: 'It''s'\n"),
        ('parent: " Target "\n', "New", 'parent: " New "\n'),
    ],
)
def test_a_parent_named_as_text_is_quoted_only_when_it_must_be(fm: str, target: str, expected: str) -> None:
    span = plain_parent_span(fm)
    assert span is not None and span.link.target == "Target"
    assert relinked_properties(fm, [(span, target)]) == expected


@pytest.mark.parametrize("fm", ['parent: "[[Target]]"\n', "parent: [a, b]\n", "parent: 3\n", "parent: ''\n", "x: y\n"])
def test_a_parent_link_list_number_or_nothing_is_no_parent_named_as_text(fm: str) -> None:
    assert plain_parent_span(fm) is None
