"""Indented code blocks (CommonMark §4.4) are code, as in Obsidian: their links are text.

A data-safety probe found `note move` and `fix-names` rewriting `[[links]]` inside a
4-space-indented code block, and the index counting them. The other side matters as much: an
indented line under a list item, a nested bullet, or a paragraph's continuation line is no
code, and its links must stay links. The graph (extract_links), the rewriters (link_spans)
and the tags read the same rule; every case runs through each of them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.vault.indented_code import _RULE_RE, MAX_QUOTE_DEPTH, _rule_tail, indented_code
from vaultmem.vault.markdown import code_lines, code_mask, extract_links, extract_tags, strip_code
from vaultmem.vault.relink import link_spans, mask_code

CASES = [
    # top level: code after a blank line, at the start, after a heading, rule or fence
    ("top-after-blank", "Para\n\n    [[Code]]\n\n[[Real]]", ["Real"]),
    ("top-at-start", "    [[Code]]\n[[Real]]", ["Real"]),
    ("top-after-heading", "# H\n    [[Code]]", []),
    ("top-after-rule", "Text\n\n***\n    [[Code]]", []),
    ("top-after-fence", "```\n[[F]]\n```\n    [[AfterFence]]", []),
    ("top-tab", "Para\n\n\t[[TabCode]]", []),
    ("top-spaces-and-tab", "Para\n\n  \t[[TabCode]]", []),
    ("top-blank-inside", "Text\n\n    a\n\n    [[Still]]\n[[After]]", ["After"]),
    ("top-three-spaces", "Para\n\n   [[Three]]", ["Three"]),
    ("top-markdown-link", "Para\n\n    [x](Code.md)\n\n[y](Real.md)", ["Real.md"]),
    ("fence-inside-indented", "```\n    [[InFence]]\n```\n\n    [[Indented]]\n\n[[Real]]", ["Real"]),
    # a paragraph's continuation line: an indented code block cannot interrupt a paragraph
    ("lazy", "Para\n    [[Lazy]]", ["Lazy"]),
    ("lazy-many", "Para\n    [[A]]\n        [[B]]", ["A", "B"]),
    ("lazy-tab", "Para\n\t[[LazyTab]]", ["LazyTab"]),
    ("lazy-table-row", "| a | b |\n|---|---|\n    [[Row]]", ["Row"]),
    # list items: their content column, not column 0, is where 4 more spaces make code
    ("item-cont-2", "- item\n\n  [[Two]]", ["Two"]),
    ("item-cont-3", "- item\n\n   [[Three]]", ["Three"]),
    ("item-cont-4", "- item\n\n    [[Four]]", ["Four"]),
    ("item-cont-5", "- item\n\n     [[Five]]", ["Five"]),
    ("item-cont-direct", "- item\n    [[Direct]]", ["Direct"]),
    ("item-cont-tab", "- item\n\n\t[[TabCont]]", ["TabCont"]),
    ("ordered-cont-4", "1. item\n\n    [[Four]]", ["Four"]),
    ("ordered-wide-cont", "10. item\n\n     [[Five]]", ["Five"]),
    ("item-wide-marker", "-   item\n\n      [[Six]]", ["Six"]),
    ("item-empty-marker", "-\n  [[Empty]]", ["Empty"]),
    ("item-after-para", "Text\n- a\n\n    [[InItem]]", ["InItem"]),
    ("item-code-6", "- item\n\n      [[InItemCode]]", []),
    ("item-code-8", "- item\n\n        [[Eight]]", []),
    ("ordered-code", "1. item\n\n       [[Seven]]", []),
    ("item-code-then-item", "- a\n\n      [[Code]]\n- [[Next]]", ["Next"]),
    ("item-closed-then-code", "- a\n\nText\n\n    [[Code]]", []),
    ("item-closed-by-heading", "- a\n# H\n    [[Code]]", []),
    # nested list items, by spaces and by tabs (Obsidian indents lists with tabs)
    ("nested-4", "- a\n    - [[Nested]]", ["Nested"]),
    ("nested-after-blank", "- a\n\n    - [[Nested]]", ["Nested"]),
    ("nested-2-deep", "- a\n  - b\n    - c\n      - [[Deep]]", ["Deep"]),
    ("nested-4-deep", "- a\n    - b\n        - [[Deep4]]\n            - [[Deeper]]", ["Deep4", "Deeper"]),
    ("nested-tabs", "- a\n\t- b\n\t\t- [[TabDeep]]\n\n\t\t  [[TabCont]]", ["TabDeep", "TabCont"]),
    ("nested-cont", "- a\n  - b\n\n    [[B cont]]", ["B cont"]),
    ("nested-code", "- a\n  - b\n\n        [[BCode]]", []),
    ("nested-same-line", "- - a\n\n    [[Cont]]", ["Cont"]),
    ("task-items", "- [ ] a\n    - [x] [[Done]]", ["Done"]),
    ("footnote-cont", "Text[^1]\n\n[^1]: note\n\n    [[FootCont]]", ["FootCont"]),
    # blockquotes and callouts: the same rule after the `>`
    ("quote-code", "> quote\n>\n>     [[QCode]]\n\n> [[Q]]", ["Q"]),
    ("quote-lazy", "> a\n>     [[QLazy]]", ["QLazy"]),
    ("callout-code", "> [!note]\n> text\n>\n>     [[CCode]]", []),
    ("quote-in-item", "- a\n  > q\n\n    [[ItemCont]]", ["ItemCont"]),
    ("quote-item-cont", "> - a\n>\n>     [[QItem]]", ["QItem"]),
]


@pytest.mark.parametrize(("body", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_graph_and_rewriters_agree_on_indented_code(body: str, expected: list[str]) -> None:
    assert [link.target for link in extract_links(body)] == expected
    assert sorted(span.link.target for span in link_spans(body)) == sorted(expected)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Text\n\n    #codetag\n\n#real", ["real"]),
        ("Text\n    #lazy", ["lazy"]),
        ("- a\n\n    #cont", ["cont"]),
    ],
)
def test_tags_in_indented_code_are_text(body: str, expected: list[str]) -> None:
    assert extract_tags(body) == expected


@pytest.mark.parametrize(("body", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_crlf_lines_read_as_lf_lines(body: str, expected: list[str]) -> None:
    """The rewriters mask a CRLF file as it is on disk: its `\\r` is a line ending, not text
    (a blank `\\r` line read as a paragraph let `note move` rewrite links in code)."""
    crlf = body.replace("\n", "\r\n")
    assert sorted(span.link.target for span in link_spans(crlf)) == sorted(expected)
    assert _masks(crlf) == _masks(body)


def _masks(body: str) -> list[bool]:
    return code_mask(body, body.split("\n"))


@pytest.mark.parametrize("depth", [31, 32, 33, 600, 5000])
def test_deep_quotes_never_exhaust_the_stack(depth: int) -> None:
    """A line quoted hundreds deep (a probe's note of 600 `>`) made every command of every
    ghost fail with RecursionError; past MAX_QUOTE_DEPTH a quoted line is no code."""
    body = "Text\n\n" + ">" * depth + "     [[Deep]]\n" + ">" * depth + "\n" + ">" * depth + "     [[Deep2]]"
    targets = [link.target for link in extract_links(body)]
    kept = [span.link.target for span in link_spans(body)]
    assert targets == kept
    if depth > MAX_QUOTE_DEPTH:
        assert targets == ["Deep", "Deep2"]


@pytest.mark.parametrize(
    ("text", "tail"),
    [
        ("- - x", 5),
        ("- - -", 0),
        ("- a - - -", 3),
        ("* * *  ", 0),
        ("- * * *", 1),
        ("-", 0),
        ("", 0),
        ("x -", 1),
        ("__ _", 0),
        ("- - - x -", 7),
    ],
)
def test_rule_tail(text: str, tail: int) -> None:
    """Where a thematic break could begin: no break starts before it (the scanner tries the
    rule only from there, once a line, not at each of its list markers)."""
    assert _rule_tail(text) == tail
    assert all(_RULE_RE.match(text, i) is None for i in range(tail))


def test_hundreds_of_markers_on_a_line_open_as_many_items() -> None:
    """`- - - … x`: each marker opens an item, so text at the innermost content column is
    no code, four columns more is (as before; the rule is tried once a line now)."""
    line = "- " * 300 + "x"
    body = f"    code\n{line}\n\n{' ' * 600}[[Inner]]\n\n{' ' * 604}[[InnerCode]]\n\n- - - -\n[[After]]"
    assert [link.target for link in extract_links(body)] == ["Inner", "After"]


def test_masks_keep_offsets_and_lines() -> None:
    body = "Para\n\n    [[Code]] `x`\n- a\n    [[Kept]]"
    assert len(mask_code(body)) == len(body)
    assert strip_code(body).count("\n") == body.count("\n")
    assert "[[Code]]" not in mask_code(body) and "[[Kept]]" in mask_code(body)


PIECES = ["text", "- item", "  - sub", "    - sub4", "1. one", "2) two", "", "    code", "      six", "        eight",
          "\tTab", "\t\tTabTab", "\t- tab item", "# H", "> q", ">     quoted code", "> - qi", ">", "---", "* * *", "  text2",
          "-", "10. ten", "     five", "===", "- - double", "  > iq", "- [ ] task", "```", "~~~", "[^1]: note"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=9))
def test_the_quick_check_never_skips_indented_code(pieces: list[str]) -> None:
    """code_mask skips the line scanner for a body with no line that could open an indented
    code block; the scanner run anyway finds none there."""
    body = "\n".join(pieces)
    lines = body.split("\n")
    fenced = [code for _, code in code_lines(lines)]
    full = [f or i for f, i in zip(fenced, indented_code(lines, fenced), strict=True)]
    assert code_mask(body, lines) == full
