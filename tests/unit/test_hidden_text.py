"""Comments and math hold no links or tags, as in Obsidian (vault/hidden.py).

A link-forms probe found `note move` and `lint --fix` rewriting `[[links]]` inside `%%…%%`
comments, `<!--…-->` comments and `$$…$$` / `$…$` math, which Obsidian's parser reads as
no link (not in backlinks, the graph or outgoing links; its rename leaves them), and the
index counting them. The graph (extract_links), the rewriters (link_spans) and the tags
read the same rule; every case runs through each of them.
"""

from __future__ import annotations

import pytest

from vaultmem.vault.hidden import blank_hidden, hidden_spans
from vaultmem.vault.markdown import extract_links, extract_tags, strip_code
from vaultmem.vault.relink import link_spans

CASES = [
    ("inline-comment", "a [[A]] %% [[B]] %% [[C]]", ["A", "C"]),
    ("block-comment", "%%\n[[B]]\n#tag\n%%\n[[C]]", ["C"]),
    ("unclosed-comment", "100%% sure [[A]]", ["A"]),
    ("two-unclosed", "50%% [[A]] and 60%", ["A"]),
    ("html-comment", "<!-- [[B]] --> [[C]]", ["C"]),
    ("html-block-comment", "<!--\n[[B]]\n-->\n[[C]]", ["C"]),
    ("unclosed-html", "<!-- [[A]]", ["A"]),
    ("display-math", "$$\n[[B]]\n$$\n[[C]]", ["C"]),
    ("display-math-inline", "x $$ [[B]] $$ [[C]]", ["C"]),
    ("inline-math", "$[[B]]$ and [[C]]", ["C"]),
    ("prices", "costs $5 at [[A]] or $10 at [[B]]", ["A", "B"]),
    ("price-range", "$10-$12 see [[A]]", ["A"]),
    ("prices-unspaced", "cost:$5 see [[A]] total:$9", ["A"]),
    ("escaped-dollar", "\\$[[A]]$", ["A"]),
    ("spaced-dollars", "$ [[A]] $", ["A"]),
    ("math-then-link", "$x^2$ [[A]] $y$", ["A"]),
    ("comment-markers-in-code", "`%%` [[A]] `%%`", ["A"]),
    ("comment-in-fence", "```\n%%\n```\n[[A]]\n```\n%%\n```", ["A"]),
    ("markdown-link", "%% [x](B.md) %% [y](C.md)", ["C.md"]),
    ("table-row", "| a | b |\n|---|---|\n| %%[[B]]%% | [[C\\|c]] |", ["C"]),
    # a markdown link's destination holds no markdown (CommonMark): its `$` opens no math
    ("dollar-in-urls", "[q](https://x.org/?$filter=a) [[A]] [r](https://x.org/?$top=5)", ["A"]),
    ("dollar-in-paths", "[a](<Cost $x.md>) [[B]] [b](<y$.md>)", ["Cost $x.md", "B", "y$.md"]),
    ("comment-in-url", "[q](https://x.org/a%%b) [[A]] [r](https://x.org/c%%d)", ["A"]),
    ("math-around-a-link", "$[a](B.md)$ [[C]]", ["C"]),
]


@pytest.mark.parametrize(("body", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_graph_and_rewriters_agree_on_comments_and_math(body: str, expected: list[str]) -> None:
    assert sorted(link.target for link in extract_links(body)) == sorted(expected)
    assert sorted(span.link.target for span in link_spans(body)) == sorted(expected)


def test_tags_in_comments_and_math_are_no_tags() -> None:
    assert extract_tags("#real %% #hidden %% <!-- #html --> $#math$\n%%\n#block\n%%") == ["real"]


def test_offsets_and_lines_are_kept() -> None:
    body = "a %% b\nc %% <!-- d\ne --> $f$ $$\ng\n$$ h"
    blanked = blank_hidden(body)
    assert len(blanked) == len(body) and blanked.count("\n") == body.count("\n")
    assert blanked.split() == ["a", "h"]
    assert strip_code(body, keep_offsets=True) == blanked
    assert list(hidden_spans("%% a %% $b$")) == [(0, 7), (8, 11)]
