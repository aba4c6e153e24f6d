"""Where a link's added label pipe must be escaped: a markdown table row, as Obsidian reads
one (a reviewer's find: `lint --fix` wrote a bare `|` into a table without leading pipes and
into one inside a quote, adding a column and breaking it)."""

from __future__ import annotations

import pytest

from vaultmem.vault.relink import file_linked, in_table_row


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("x | [[A]]\n--|--\ny | z\n", True),  # no leading pipe
        ("> | a | b |\n> |---|---|\n> | [[A]] | x |\n", True),  # in a quote or a callout
        ("| [[A]] | b |\n|:--|--:|\n", True),  # the header row, aligned columns
        ("| a | b |\n| --- | --- |\n| [[A]] | x |\n\n[[A]] after it\n", True),  # a body row (the first link)
        ("a | b [[A]]\nno table here\n", False),  # a pipe in prose
        ("just [[A|b]] text\n---\n", False),  # a label pipe, a rule
        ("[[A]]\n", False),
    ],
)
def test_in_table_row(body: str, expected: bool) -> None:
    assert in_table_row(body, body.index("[[A")) is expected


def test_file_linked_escapes_the_pipe_it_adds_in_any_table() -> None:
    body = "x | [[Wine: basics]]\n--|--\n\n> | a |\n> |---|\n> | [[Wine: basics]] |\n\nprose [[Wine: basics]]\n"
    out = file_linked(body, "shared/T.md", lambda t, s: "shared/Wine basics.md", lambda t, s: None)
    assert out == (
        "x | [[shared/Wine basics\\|Wine: basics]]\n--|--\n\n> | a |\n> |---|\n> | [[shared/Wine basics\\|Wine: basics]] |\n"
        "\nprose [[shared/Wine basics|Wine: basics]]\n"
    )
