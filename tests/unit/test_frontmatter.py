"""Front matter: split, load and edit round trips, and the tolerant note parser."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from vaultmem.vault.frontmatter import (
    FrontMatterEditor,
    FrontMatterError,
    compose_document,
    dump_entry,
    load_yaml,
    split_document,
)
from vaultmem.vault.note import CANONICAL_KEYS, ParsedNote, Unreadable, body_hash, parse_note
from vaultmem.vault.writer import REMOVE, edit_note_text, new_note_text

# --- split ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bom", "fm_text", "body", "newline", "unclosed"),
    [
        ("---\na: 1\n---\nbody\n", False, "a: 1\n", "body\n", "\n", False),
        ("\ufeff---\na: 1\n---\nbody\n", True, "a: 1\n", "body\n", "\n", False),
        ("---\r\na: 1\r\n---\r\nbody\r\n", False, "a: 1\r\n", "body\r\n", "\r\n", False),
        ("\ufeff---\r\na: 1\r\n---\r\nb\r\n", True, "a: 1\r\n", "b\r\n", "\r\n", False),
        ("---\na: 1\n...\nbody", False, "a: 1\n", "body", "\n", False),
        ("---\na: 1\n---", False, "a: 1\n", "", "\n", False),
        ("---\n---\nbody", False, "", "body", "\n", False),
        ("--- \na: 1\n---  \nbody", False, "a: 1\n", "body", "\n", False),
        ("no front matter\n", False, None, "no front matter\n", "\n", False),
        ("line\r\nline\r\n", False, None, "line\r\nline\r\n", "\r\n", False),
        ("---\na: 1\nno closing\n", False, None, "---\na: 1\nno closing\n", "\n", True),
        ("----\na: 1\n---\n", False, None, "----\na: 1\n---\n", "\n", False),
        ("text\n---\na: 1\n---\n", False, None, "text\n---\na: 1\n---\n", "\n", False),
        # a block scalar holding '---' indented is not the closing fence
        ("---\na: |\n  ---\n---\nb", False, "a: |\n  ---\n", "b", "\n", False),
        ("", False, None, "", "\n", False),
    ],
    ids=lambda v: repr(v)[:30] if isinstance(v, str) else None,
)
def test_split_document(text: str, bom: bool, fm_text: str | None, body: str, newline: str, unclosed: bool) -> None:
    split = split_document(text)
    assert (split.bom, split.fm_text, split.body, split.newline, split.unclosed) == (
        bom,
        fm_text,
        body,
        newline,
        unclosed,
    )


@pytest.mark.parametrize(
    "text",
    [
        "---\na: 1\n---\nbody\n",
        "\ufeff---\na: 1\n---\nbody\n",
        "---\r\na: 1\r\nb: [x]\r\n---\r\nbody\r\n\r\n",
        "---\n---\n",
        "plain text, no front matter\n",
        "\ufeffplain with BOM\n",
    ],
)
def test_split_then_compose_is_identity(text: str) -> None:
    s = split_document(text)
    if s.fm_text is None:
        assert ("\ufeff" if s.bom else "") + s.body == text
    else:
        assert compose_document(s.fm_text, s.body, s.newline, s.bom) == text


# --- load -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fm", "expected"),
    [
        ("", {}),
        ("   \n", {}),
        ("# only a comment\n", {}),
        ("title: Hello\n", {"title": "Hello"}),
        # dates stay the strings the user wrote (no datetime objects, no reformatting)
        ("created: 2026-01-01\n", {"created": "2026-01-01"}),
        ("created: 2026-11-21T10:00:00Z\n", {"created": "2026-11-21T10:00:00Z"}),
        ("tags: [a, b]\n", {"tags": ["a", "b"]}),
        ("n: 3\nf: 0.5\nb: true\nz: null\n", {"n": 3, "f": 0.5, "b": True, "z": None}),
        ("1: one\n", {"1": "one"}),
        ("nested:\n  k: [1, 2]\n", {"nested": {"k": [1, 2]}}),
        ("a: !!binary aGVsbG8=\n", {"a": "hello"}),
        ("a: !!set {x, y}\n", {"a": ["x", "y"]}),
        ("base: &b {x: 1}\nother: *b\n", {"base": {"x": 1}, "other": {"x": 1}}),
        ("<<: {m: 1}\ny: 2\n", {"m": 1, "y": 2}),
        ("t: café ☕\n", {"t": "café ☕"}),
    ],
)
def test_load_yaml_values(fm: str, expected: dict[str, Any]) -> None:
    assert load_yaml(fm) == expected


@pytest.mark.parametrize(
    ("fm", "code"),
    [
        ("title: [unclosed\n", "invalid_yaml"),
        ("a: 1\n---\nb: 2\n", "invalid_yaml"),
        ("a: !!python/object/apply:os.system ['echo hi']\n", "invalid_yaml"),
        ("a: !custom x\n", "invalid_yaml"),
        ("a: *undefined\n", "invalid_yaml"),
        ("\ta: 1\n", "invalid_yaml"),
        ("? [a, b]\n: c\n", "invalid_yaml"),
        # a value its explicit tag cannot hold: PyYAML's constructors raise ValueError,
        # KeyError, AttributeError or IndexError for these, which crashed every command
        ("a: !!int abc\n", "invalid_yaml"),
        ("a: !!int _\n", "invalid_yaml"),
        ("a: !!int 0b2\n", "invalid_yaml"),
        ("a: !!bool maybe\n", "invalid_yaml"),
        ("a: !!float abc\n", "invalid_yaml"),
        ("a: !!timestamp 2026-02-30\n", "invalid_yaml"),
        ("a: !!timestamp 99999-01-01\n", "invalid_yaml"),
        ("a: !!timestamp 2026-01-01T25:00:00\n", "invalid_yaml"),
        ("just a string\n", "frontmatter_not_mapping"),
        ("42\n", "frontmatter_not_mapping"),
        ("- a\n- b\n", "frontmatter_not_mapping"),
        # a recursive alias must not send anything into infinite recursion
        ("a: &x [*x]\n", "yaml_alias_bomb"),
        # many plain values are no bomb (a reviewer's 60,000 tags were called one)
        ("tags: [" + ", ".join(f"t{i}" for i in range(20_001)) + "]\n", "frontmatter_too_large"),
    ],
)
def test_load_yaml_errors(fm: str, code: str) -> None:
    with pytest.raises(FrontMatterError) as info:
        load_yaml(fm)
    assert info.value.code == code
    assert str(info.value)


def _alias_bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["a: &a [" + ", ".join(['"lol"'] * width) + "]"]
    prev = "a"
    for name in "bcdefghijklmnop"[: levels - 1]:
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * width) + "]")
        prev = name
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_quickly() -> None:
    import time

    start = time.perf_counter()
    with pytest.raises(FrontMatterError) as info:
        load_yaml(_alias_bomb())
    assert info.value.code == "yaml_alias_bomb"
    assert time.perf_counter() - start < 1.0


def test_small_alias_use_is_fine() -> None:
    assert load_yaml(_alias_bomb(levels=2, width=3))["b"] == [["lol"] * 3] * 3


@pytest.mark.parametrize(
    "fm",
    [
        "a: " + "[" * 100_000,
        "a: " + "[" * 40_000 + "]" * 40_000,
        "a: " + "{" * 40_000 + "}" * 40_000,
        "- " * 40_000 + "x",
        "a: " + "[" * 500 + "]" * 500,
    ],
    ids=["unclosed-flow", "deep-seq", "deep-map", "deep-block", "moderate"],
)
def test_deep_nesting_degrades_instead_of_crashing(fm: str) -> None:
    # libyaml's composer recurses in C: without a guard this kills the process.
    with pytest.raises(FrontMatterError) as info:
        load_yaml(fm)
    assert info.value.code == "invalid_yaml"


@pytest.mark.parametrize(("fm", "value"), [("a: .nan\n", ".nan"), ("a: .inf\n", ".inf"), ("a: -.inf\n", "-.inf")])
def test_non_finite_numbers_become_json_safe(fm: str, value: str) -> None:
    data = load_yaml(fm)
    assert data == {"a": value}
    json.dumps(data, allow_nan=False)  # strict JSON: NaN/Infinity would fail here


# --- dump / load round trip -------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "yes",
        "no",
        "null",
        "~",
        "123",
        "0x10",
        "1e3",
        "2026-01-01",
        "10:00",
        "- dash",
        "#hash",
        "key: value",
        "'single'",
        '"double"',
        "[bracket",
        "{brace",
        "*star",
        "&amp",
        "!bang",
        "%percent",
        "@at",
        "`tick",
        "| pipe",
        "> gt",
        " leading space",
        "trailing space ",
        "multi\nline\n",
        "tab\there",
        "café ☕",
        "",
        "../../etc/passwd",
        3,
        0.25,
        True,
        None,
        ["a", "b c", "yes"],
        {"nested": {"k": [1, "2"]}},
        [{"at": "2026-01-01T00:00:00Z", "by": "alice", "model": None, "text": "x: y"}],
    ],
)
def test_dump_entry_round_trips(value: Any) -> None:
    text = dump_entry("k", value)
    assert text.endswith("\n")
    assert load_yaml(text) == {"k": value}


# --- the editor: only changed keys change -----------------------------------------------

HAND_WRITTEN = """\
# a comment the user wrote
title: Hand written   # trailing comment
custom_a: 1
tags: [one, two]
status: draft

# about nested
nested:
  x: 1
  y: [1, 2]
trust_score: 0.3
zzz: "quoted: yes"
"""


def _edit(fm: str, changes: dict[str, Any]) -> str:
    editor = FrontMatterEditor(fm, load_yaml(fm))
    for key, value in changes.items():
        if value is REMOVE:
            editor.remove(key)
        else:
            editor.set(key, value)
    return editor.render()


def test_editor_without_changes_is_identity() -> None:
    assert _edit(HAND_WRITTEN, {}) == HAND_WRITTEN


def test_editor_setting_same_value_is_identity() -> None:
    assert _edit(HAND_WRITTEN, {"trust_score": 0.3, "status": "draft"}) == HAND_WRITTEN


@pytest.mark.parametrize(
    ("changes", "changed_old", "changed_new"),
    [
        ({"trust_score": 0.9}, ["trust_score: 0.3"], ["trust_score: 0.9"]),
        ({"status": "final"}, ["status: draft"], ["status: final"]),
        ({"tags": ["one", "two", "three"]}, ["tags: [one, two]"], ["tags: [one, two, three]"]),  # grown in place
        ({"nested": {"x": 2}}, ["nested:", "  x: 1", "  y: [1, 2]"], ["nested:", "  x: 2"]),
        ({"zzz": REMOVE}, ['zzz: "quoted: yes"'], []),
        ({"version": 2}, [], ["version: 2"]),
    ],
)
def test_editor_changes_only_its_own_lines(
    changes: dict[str, Any], changed_old: list[str], changed_new: list[str]
) -> None:
    out = _edit(HAND_WRITTEN, changes)
    old_lines = HAND_WRITTEN.splitlines()
    new_lines = out.splitlines()
    kept_old = [line for line in old_lines if line not in changed_old]
    kept_new = [line for line in new_lines if line not in changed_new]
    assert kept_new == kept_old  # every other line: same bytes, same place
    assert [line for line in new_lines if line in changed_new] == changed_new
    expected = load_yaml(HAND_WRITTEN)
    for key, value in changes.items():
        if value is REMOVE:
            expected.pop(key)
        else:
            expected[key] = value
    reloaded = load_yaml(out)
    assert reloaded == expected
    assert list(reloaded) == list(expected)  # key order: existing keys keep their place


@pytest.mark.parametrize(
    "fm",
    [
        "base: &b {a: 1}\nother: *b\nx: 1\n",  # anchors: whole re-render
        "<<: {m: 1}\nx: 2\n",  # merge key: block scan and parser disagree
        "a: 1\na: 2\n",  # duplicate keys
        "-weird: 1\nx: 2\n",
        "m: {a: 1, b: 2}\nx: 1\n",
        "desc: |\n  line one\n  key: not a key\nnext: 2\n",
        "desc: >-\n  folded\n  text\nnext: 2\n",
        "\"quoted key\": 1\n'single': 2\nplain key: 3\n",
        "tags:\n- a\n- b\nx: 1\n",
        "a:\n  - 1\n# between\n  - 2\nb: 3\n",
        "? a\n: 1\nb: 2\n",
        "título: café\nx: 1\n",
    ],
)
@pytest.mark.parametrize("key", ["first", "last", "new"])
def test_editor_is_semantically_right_on_awkward_yaml(fm: str, key: str) -> None:
    data = load_yaml(fm)
    target = {"first": next(iter(data)), "last": list(data)[-1], "new": "added"}[key]
    out = _edit(fm, {target: "CHANGED"})
    expected = dict(data)
    expected[target] = "CHANGED"
    reloaded = load_yaml(out)
    assert reloaded == expected
    assert list(reloaded) == list(expected)


def test_editor_keeps_crlf() -> None:
    fm = "title: A\r\nx: 1\r\n"
    editor = FrontMatterEditor(fm, load_yaml(fm), "\r\n")
    editor.set("x", 2)
    editor.set("new", "v")
    assert editor.render() == "title: A\r\nx: 2\r\nnew: v\r\n"


# --- whole-note edits -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: A\nx: 1\n---\nbody  \n\n\n",
        "\ufeff---\ntitle: A\n---\nbody\n",
        "---\r\ntitle: A\r\n---\r\nline1\r\nline2\r\n",
        "\ufeff---\r\ntitle: A\r\n---\r\nbody",
        "---\n---\nbody with no newline at end",
        "no front matter\n\n  indented\n",
    ],
)
def test_edit_note_text_keeps_body_bytes_bom_and_newlines(text: str) -> None:
    split = split_document(text)
    data = load_yaml(split.fm_text or "")
    edited = edit_note_text(text, data, {"id": "01ABC", "version": 3})
    out = split_document(edited.text)
    assert out.body == split.body
    assert out.bom == split.bom
    assert out.newline == split.newline
    assert load_yaml(out.fm_text or "") == {**data, "id": "01ABC", "version": 3}
    assert not edited.body_changed
    if split.newline == "\r\n":
        assert "\n" not in edited.text.replace("\r\n", "")


def test_edit_note_text_adds_keys_after_existing_in_canonical_order() -> None:
    text = "---\nzeta: 1\ntitle: A\nalpha: 2\n---\nbody\n"
    edited = edit_note_text(
        text, load_yaml("zeta: 1\ntitle: A\nalpha: 2\n"), {"version": 1, "id": "X", "unknown": 5, "hash": "h"}
    )
    assert list(edited.front_matter) == ["zeta", "title", "alpha", "id", "version", "hash", "unknown"]
    assert edited.text.startswith("---\nzeta: 1\ntitle: A\nalpha: 2\nid: X\nversion: 1\nhash: h\nunknown: 5\n---\n")


def test_edit_note_text_new_body_is_normalized() -> None:
    edited = edit_note_text("---\na: 1\n---\nold\n", {"a": 1}, {}, "new\r\nbody\n\n\n")
    assert edited.text == "---\na: 1\n---\nnew\nbody\n"
    assert edited.body_changed


def test_new_note_text_uses_canonical_order_and_drops_nones() -> None:
    fields = {k: f"v-{k}" for k in reversed(CANONICAL_KEYS)}
    fields["owner"] = None
    fields["custom"] = "c"
    text = new_note_text(fields, "body\r\n\n")
    split = split_document(text)
    keys = list(load_yaml(split.fm_text or ""))
    assert keys == [k for k in CANONICAL_KEYS if k != "owner"] + ["custom"]
    assert split.body == "body\n"


# --- the tolerant parser ----------------------------------------------------------------


def _parse(data: bytes, relpath: str = "shared/a.md") -> ParsedNote:
    parsed = parse_note(relpath, data)
    assert isinstance(parsed, ParsedNote)
    return parsed


@pytest.mark.parametrize(
    ("data", "codes", "fm_ok"),
    [
        (b"---\ntitle: A\n---\nbody\n", [], True),
        (b"\xef\xbb\xbf---\r\ntitle: A\r\n---\r\nbody\r\n", [], True),
        (b"---\ntitle: [unclosed\n---\nbody\n", ["invalid_yaml"], False),
        (b"---\n- a\n- b\n---\nbody\n", ["frontmatter_not_mapping"], False),
        (b"---\njust text\n---\nbody\n", ["frontmatter_not_mapping"], False),
        (("---\n" + _alias_bomb() + "---\nbody\n").encode(), ["yaml_alias_bomb"], False),
        (b"---\ntitle: caf\xe9\n---\nna\xefve\n", ["not_utf8"], True),
        (b"---\ntitle: A\nno closing fence\n", ["unclosed_frontmatter"], True),
        (b"---\na: " + b"[" * 50_000 + b"\n---\nbody\n", ["invalid_yaml"], False),
        (b"---\ntitle: A\nx: !!int abc\n---\nbody\n", ["invalid_yaml"], False),
        (b"---\ntitle: A\n---\n" + b">" * 600 + b"     x [[L]]\n", [], True),
    ],
    ids=[
        "ok",
        "bom-crlf",
        "invalid-yaml",
        "list",
        "scalar",
        "alias-bomb",
        "latin-1",
        "unclosed",
        "deep",
        "bad-tag",
        "deep-quote",
    ],
)
def test_parse_note_degrades_never_crashes(data: bytes, codes: list[str], fm_ok: bool) -> None:
    parsed = _parse(data)
    assert [p.code for p in parsed.problems] == codes
    assert parsed.fm_ok is fm_ok
    assert parsed.title  # always has a title: front matter, else the file stem
    if not fm_ok:
        assert parsed.front_matter == {}
        assert parsed.title == "a"
        assert parsed.id_derived


def test_parse_note_bom_crlf_gives_clean_values() -> None:
    parsed = _parse(b"\xef\xbb\xbf---\r\nid: 01X\r\ntitle: A\r\ntags: [x]\r\n---\r\nline\r\n#inline\r\n")
    assert (parsed.id, parsed.title, parsed.bom, parsed.newline) == ("01X", "A", True, "\r\n")
    assert parsed.body == "line\n#inline\n"
    assert parsed.tags == ("x", "inline")


def _reads_as(data: bytes, codec: str) -> bool:
    try:
        data.decode(codec)
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"bin\x00ary\xff\xfe", "binary"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        (b"x" * (2 * 1024 * 1024 + 1), "too_large"),
        ("\ufeff# Caf\u00e9\nA note saved as 'Unicode'.\n".encode("utf-16-le"), "not_utf8"),
        ("# Caf\u00e9\nWith its mark.\n".encode("utf-16"), "not_utf8"),
        ("# No mark\nJust ASCII in UTF-16.\n".encode("utf-16-le"), "not_utf8"),
        ("# No mark\nJust ASCII in UTF-16.\n".encode("utf-16-be"), "not_utf8"),
        (b"\x00\x01\x00\x02 not text", "binary"),
        ("# Caf\u00e9\nWith its mark.\n".encode("utf-32"), "not_utf8"),
        ("\ufeff# Mark\nBig-endian.\n".encode("utf-32-be"), "not_utf8"),
        ("# No mark\nJust ASCII in UTF-32.\n".encode("utf-32-le"), "not_utf8"),
        ("# No mark\nJust ASCII in UTF-32.\n".encode("utf-32-be"), "not_utf8"),
        ("\u4e2d\u6587\u7b14\u8bb0\n\u7b2c\u4e8c\u884c".encode("utf-32-be"), "not_utf8"),
        ("Bonjour\u00a0! \u00c7a va ?\n".encode("utf-32-le"), "not_utf8"),  # a no-break space is text
        ("a \U0001f468\u200d\U0001f469 b, soft\u00adhyphen\n".encode("utf-32-be"), "not_utf8"),
        (b"bin\x00ary\xff\xfe" * 40, "binary"),  # reads as printable letters in UTF-16, not a text
        (b"\x00\x00\x00\x00" * 8, "binary"),
    ],
    ids=[
        "nul",
        "png",
        "too-large",
        "utf16-le-bom",
        "utf16-bom",
        "utf16-le",
        "utf16-be",
        "nul-pairs",
        "utf32-bom",
        "utf32-be-bom",
        "utf32-le",
        "utf32-be",
        "utf32-be-cjk",
        "utf32-nbsp",
        "utf32-zwj-soft-hyphen",
        "utf16-printable-binary",
        "all-nul",
    ],
)
def test_parse_note_unreadable(data: bytes, code: str) -> None:
    parsed = parse_note("shared/x.md", data)
    assert isinstance(parsed, Unreadable)
    assert parsed.problem.code == code
    assert parsed.problem.severity == "error"
    assert parsed.problem.path == "shared/x.md"
    if code == "not_utf8":
        wide = "UTF-32" if any(_reads_as(data, c) for c in ("utf-32", "utf-32-le", "utf-32-be")) else "UTF-16"
        assert f"{wide} text" in parsed.problem.message and "save it as UTF-8" in parsed.problem.message


@pytest.mark.parametrize(
    ("fm", "title", "note_type", "note_id", "derived"),
    [
        ("", "my-note", "note", None, True),
        ("title: Shown\n", "Shown", "note", None, True),
        ("title: 5\ntype: fact\nid: 12\n", "5", "fact", "12", False),
        ("title: '  '\ntype: [x]\nid: true\n", "my-note", "note", None, True),
        ("id: ' 01ABC '\n", "my-note", "note", "01ABC", False),
    ],
)
def test_parse_note_fields(fm: str, title: str, note_type: str, note_id: str | None, derived: bool) -> None:
    parsed = _parse(f"---\n{fm}---\nbody\n".encode(), "shared/sub/my-note.md")
    assert (parsed.title, parsed.type, parsed.id_derived) == (title, note_type, derived)
    if note_id is not None:
        assert parsed.id == note_id
    else:
        assert parsed.id.startswith("p-")


def test_parse_note_is_pure_and_derived_ids_follow_the_path() -> None:
    data = b"no front matter\n"
    a1, a2, b = _parse(data, "shared/a.md"), _parse(data, "shared/a.md"), _parse(data, "shared/b.md")
    assert a1 == a2
    assert a1.id == a2.id != b.id


@pytest.mark.parametrize(
    ("fm", "tags", "aliases"),
    [
        ("tags: [a, '#b', a]\n", ("a", "b", "body"), ()),
        ("tags: a, b\n", ("a", "b", "body"), ()),
        ("tags: single\n", ("single", "body"), ()),
        ("aliases: [X, Y]\n", ("body",), ("X", "Y")),
        ("aliases: Just One\n", ("body",), ("Just One",)),
        ("tags: 5\n", ("5", "body"), ()),
    ],
)
def test_parse_note_tags_and_aliases(fm: str, tags: tuple[str, ...], aliases: tuple[str, ...]) -> None:
    parsed = _parse(f"---\n{fm}---\ntext #body\n".encode())
    assert parsed.tags == tags
    assert parsed.aliases == aliases


def test_unit_fields_and_version() -> None:
    parsed = _parse(b"---\ntrust_score: 0.7\nconfidence: 2\nimportance: yes\nversion: 3\n---\n")
    assert parsed.unit("trust_score") == 0.7
    assert parsed.unit("confidence") is None
    assert parsed.unit("importance") is None
    assert parsed.version == 3
    assert _parse(b"---\nversion: true\n---\n").version == 0
    assert not math.isnan(parsed.unit("trust_score") or 0)


def test_body_hash_is_sha256_of_body() -> None:
    import hashlib

    assert body_hash("x\n") == "sha256:" + hashlib.sha256(b"x\n").hexdigest()


@pytest.mark.parametrize(
    ("line", "added", "expected"),
    [
        ('tags: [veg, "fruit"]   # my tags', ["nuts"], 'tags: [veg, "fruit", nuts]   # my tags'),
        ("tags: [veg]", ["with space", "a:b"], "tags: [veg, with space, 'a:b']"),
        ("tags: [ veg ]  # spaced", ["nuts"], "tags: [ veg, nuts ]  # spaced"),
        ("aliases: ['Big plan']", ["Plan B"], "aliases: ['Big plan', Plan B]"),
        ("tags: [veg] # a ] in the comment", ["nuts"], None),  # not read back as the value: a block
        ("tags: [veg,\n  fruit]", ["nuts"], None),  # the list goes on below its line: a block
    ],
    ids=["comment", "quoting", "spacing", "aliases", "bracket-in-comment", "two-lines"],
)
def test_a_flow_list_that_grows_keeps_its_line(line: str, added: list[str], expected: str | None) -> None:
    """A tag added to `tags: [veg, "fruit"]   # my tags` (as a person writes it in vim, or
    Obsidian's source mode) keeps the line's quotes, spacing and comment; before, the list
    was rewritten as a block and the comment was lost."""
    text = f"---\ntitle: Flow\n{line}\nsource: x\n---\nBody.\n"
    data = load_yaml(split_document(text).fm_text or "")
    key = line.split(":", 1)[0]
    value = [*data[key], *added]
    out = edit_note_text(text, data, {key: value}).text
    assert load_yaml(split_document(out).fm_text or "")[key] == value
    assert out.endswith("source: x\n---\nBody.\n") and out.startswith("---\ntitle: Flow\n")
    if expected is not None:
        assert f"\n{expected}\n" in out
    else:
        assert f"{key}:\n  - " in out
