"""Link and tag extraction (pure) and Obsidian-style link resolution."""

from __future__ import annotations

import time

import pytest

from vaultmem.index.resolve import LinkSource, NameEntry, Resolver, compute_edges, parent_target
from vaultmem.vault.markdown import extract_links, extract_tags, headings, strip_code

# --- links ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("[[A]]", [("A", "wiki", None, None)]),
        ("[[B|label]]", [("B", "wiki", None, "label")]),
        ("[[C#Head]]", [("C", "wiki", "Head", None)]),
        ("[[E#H|l]]", [("E", "wiki", "H", "l")]),
        ("![[D]]", [("D", "embed", None, None)]),
        ("[[ spaced  ]]", [("spaced", "wiki", None, None)]),
        ("[[01JABCDEFGHJKMNPQRSTVWXYZ0]]", [("01JABCDEFGHJKMNPQRSTVWXYZ0", "wiki", None, None)]),
        ("[[#self heading]] [[ ]] [[]]", []),
        ("[x](rel/p.md)", [("rel/p.md", "markdown", None, "x")]),
        ("[y](<a b.md>)", [("a b.md", "markdown", None, "y")]),
        ("[q](p%20q.md#Sec)", [("p q.md", "markdown", "Sec", "q")]),
        ('[t](x.md "title")', [("x.md", "markdown", None, "t")]),
        ("![e](e.md)", [("e.md", "embed", None, "e")]),
        ("[z](http://x.md) [w](#h) [v](img.png) [m](mailto:a@b.md)", []),
        # no extension: a note, which Obsidian completes with `.md` (Internal links, its Help)
        ("[Three laws](Three%20laws%20of%20motion)", [("Three laws of motion", "markdown", None, "Three laws")]),
        (
            "[s](../other/Note#Part) [a](<A b>)",
            [("../other/Note", "markdown", "Part", "s"), ("A b", "markdown", None, "a")],
        ),
        (
            "[v](Notes%20v1.2%20draft) [d](dir/) [u](..) [f](v1.2) [p](<https://x.y>)",
            [("Notes v1.2 draft", "markdown", None, "v")],
        ),
        ("```\n[[InCode]]\n```\n`[[inline]]` [[Real]]", [("Real", "wiki", None, None)]),
        ("~~~\n[[Tilde]]\n~~~\n[[After]]", [("After", "wiki", None, None)]),
        ("[[A]]\n[[a]]", [("A", "wiki", None, None), ("a", "wiki", None, None)]),
        # balanced parentheses in the path and brackets in the text, as CommonMark reads them
        ("[a](Meeting%20(draft).md)", [("Meeting (draft).md", "markdown", None, "a")]),
        (
            "[see [1]](x.md) [b](f(a)(b).md)",
            [("x.md", "markdown", None, "see [1]"), ("f(a)(b).md", "markdown", None, "b")],
        ),
        ("[[W]](y.md)", [("W", "wiki", None, None)]),
        ("[[../../etc/passwd]]", [("../../etc/passwd", "wiki", None, None)]),
    ],
)
def test_extract_links(body: str, expected: list[tuple[str, str, str | None, str | None]]) -> None:
    assert [(lk.target, lk.kind, lk.heading, lk.label) for lk in extract_links(body)] == expected


@pytest.mark.parametrize("unit", ["[", "<", "[a(" + "x" * 20, "[x"])
def test_link_scans_are_linear(unit: str) -> None:
    """A probe's find: a run of `[` on one line (30,000 of them: 10 s; 100,000: 2 minutes)
    made the markdown-link scan quadratic, and every reader of links (index, lint, a move)
    with it. Eight times the text costs about eight times the work, not 64: the process's
    own CPU time, which other work on the machine does not add to, and a ratio, not a bar."""

    def cost(n: int) -> float:
        body = ("[](" if unit == "<" else "") + unit * n
        started = time.process_time()
        extract_links(body)
        return time.process_time() - started

    small, large = (min(cost(n) for _ in range(3)) for n in (2_000, 16_000))
    assert large < 24 * max(small, 1e-4), (small, large)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # In a table, Obsidian escapes a label's pipe: `\|` separates target and label.
        ("| a | [[Target\\|alias]] |", [("Target", "wiki", None, "alias")]),
        ("| a | [[Target#Heading\\|alias]] |", [("Target", "wiki", "Heading", "alias")]),
        ("| a | ![[Engelbart.jpg\\|100]] |", [("Engelbart.jpg", "embed", None, "100")]),
        ("| [[Folder/Target \\| spaced ]] |", [("Folder/Target", "wiki", None, "spaced")]),
        ("[[Target\\|alias]] outside a table", [("Target", "wiki", None, "alias")]),
        ("| `[[Code\\|x]]` | [[Real\\|y]] |", [("Real", "wiki", None, "y")]),
        ("[[Target\\|]]", [("Target", "wiki", None, None)]),
    ],
)
def test_extract_links_escaped_pipe(body: str, expected: list[tuple[str, str, str | None, str | None]]) -> None:
    assert [(lk.target, lk.kind, lk.heading, lk.label) for lk in extract_links(body)] == expected


def test_an_escaped_pipe_link_resolves_to_its_target() -> None:
    (link,) = extract_links("| x | [[Alpha Title#H\\|the alpha]] |")
    assert Resolver(ENTRIES).resolve(link.target) == "shared/alpha.md"


# --- tags -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("#tag", ["tag"]),
        ("a #one and #two", ["one", "two"]),
        ("#dup #dup", ["dup"]),
        ("#nested/tag", ["nested/tag"]),
        ("#t-_x", ["t-_x"]),
        ("#1 #2024", []),  # a tag needs a non-digit
        ("#1a #a1", ["1a", "a1"]),
        ("#tag, (#par); #semi", ["tag", "par", "semi"]),
        ("word#not mid#word", []),
        ("# heading\n## Heading #inh", ["inh"]),
        ("#café #日本", ["café", "日本"]),
        ("```\n#code\n```\n`#inline` #real", ["real"]),
        ("[see](#heading) [x](page.md#part) #real", ["real"]),
        ("http://example.com/#frag", []),
        ("[[Note#Heading]]", []),
    ],
)
def test_extract_tags(body: str, expected: list[str]) -> None:
    assert extract_tags(body) == expected


def test_strip_code_keeps_line_count() -> None:
    body = "a\n```python\nx = '[[L]]'\n```\nb `c` d"
    stripped = strip_code(body)
    assert stripped.count("\n") == body.count("\n")
    assert "[[L]]" not in stripped and "`c`" not in stripped
    assert stripped.startswith("a\n")


def test_headings_outside_code() -> None:
    assert headings("# One\ntext\n```\n# not\n```\n### Three ###\n") == [(1, "One"), (3, "Three")]


# --- resolution -------------------------------------------------------------------------

ENTRIES = [
    NameEntry("shared/alpha.md", "01AAAAAAAAAAAAAAAAAAAAAAAA", "Alpha Title", ("First Alias",)),
    NameEntry("shared/beta.md", "01BBBBBBBBBBBBBBBBBBBBBBBB", "Beta", ("alpha",)),  # alias = other's stem
    NameEntry("project/x/notes/dup.md", "01CCCCCCCCCCCCCCCCCCCCCCCC", "Dup in project"),
    NameEntry("shared/dup.md", "01DDDDDDDDDDDDDDDDDDDDDDDD", "Dup shared"),
    NameEntry("shared/deep/dup.md", "01EEEEEEEEEEEEEEEEEEEEEEEE", "Dup deep"),
    NameEntry("shared/gamma.md", "01FFFFFFFFFFFFFFFFFFFFFFFF", "01BBBBBBBBBBBBBBBBBBBBBBBB"),  # title = other's id
    NameEntry("shared/t1.md", "p-1", "Same Title"),
    NameEntry("shared/a/t2.md", "p-2", "Same Title"),
]


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        # id first, case-insensitively; an id beats a title that spells the same
        ("01AAAAAAAAAAAAAAAAAAAAAAAA", None, "shared/alpha.md"),
        ("01aaaaaaaaaaaaaaaaaaaaaaaa", None, "shared/alpha.md"),
        ("01BBBBBBBBBBBBBBBBBBBBBBBB", None, "shared/beta.md"),
        # vault-relative path, with or without .md, any case
        ("shared/alpha.md", None, "shared/alpha.md"),
        ("shared/alpha", None, "shared/alpha.md"),
        ("SHARED/Alpha.MD", None, "shared/alpha.md"),
        # folder-qualified suffix
        ("notes/dup", None, "project/x/notes/dup.md"),
        ("deep/dup", None, "shared/deep/dup.md"),
        # a stem beats an alias spelled the same
        ("alpha", None, "shared/alpha.md"),
        # title, then alias, case-insensitive
        ("alpha title", None, "shared/alpha.md"),
        ("FIRST ALIAS", None, "shared/alpha.md"),
        ("Beta", None, "shared/beta.md"),
        # stem ties: the linking note's folder, else the shortest path, else path order
        ("dup", "shared/deep/other.md", "shared/deep/dup.md"),
        ("dup", "project/x/notes/other.md", "project/x/notes/dup.md"),
        ("dup", "elsewhere/n.md", "shared/dup.md"),
        ("dup", None, "shared/dup.md"),
        ("Same Title", None, "shared/t1.md"),
        ("Same Title", "shared/a/x.md", "shared/a/t2.md"),
        # nothing
        ("missing", None, None),
        ("", None, None),
        ("   ", None, None),
    ],
)
def test_resolve_order_and_tie_breaks(target: str, source: str | None, expected: str | None) -> None:
    assert Resolver(ENTRIES).resolve(target, source) == expected


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        ("alpha.md", "shared/beta.md", "shared/alpha.md"),
        ("../shared/dup.md", "project/x/n.md", None),  # would need a real ../shared from project/x
        ("../dup.md", "shared/deep/n.md", "shared/dup.md"),
        ("notes/dup.md", "project/x/n.md", "project/x/notes/dup.md"),
        ("../../../outside.md", "shared/n.md", None),
    ],
)
def test_resolve_relative_markdown_links(target: str, source: str, expected: str | None) -> None:
    assert Resolver(ENTRIES).resolve(target, source, relative=True) == expected


def test_candidates_lists_every_title_and_alias_match() -> None:
    assert Resolver(ENTRIES).candidates("same title") == ["shared/a/t2.md", "shared/t1.md"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("01ABC", "01ABC"), ("[[Parent Note]]", "Parent Note"), ("[[P#h|label]]", "P"), ("  Title  ", "Title")],
)
def test_parent_target(value: str, expected: str) -> None:
    assert parent_target(value) == expected


def test_compute_edges_links_parents_and_dangling() -> None:
    resolver = Resolver(ENTRIES)
    sources = [
        LinkSource(
            "shared/beta.md",
            (
                {"target": "Alpha Title", "kind": "wiki", "heading": "H", "label": None},
                {"target": "alpha.md", "kind": "markdown", "heading": None, "label": "a"},
                {"target": "Nowhere", "kind": "embed", "heading": None, "label": None},
            ),
            parent="[[Dup shared]]",
        )
    ]
    edges = compute_edges(resolver, sources)
    assert [(e.dst, e.kind, e.target, e.heading) for e in edges] == [
        ("shared/alpha.md", "link", "Alpha Title", "H"),
        ("shared/alpha.md", "link", "alpha.md", None),
        (None, "embed", "Nowhere", None),
        ("shared/dup.md", "parent", "Dup shared", None),
    ]
