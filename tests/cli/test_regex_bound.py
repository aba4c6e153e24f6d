"""A --regex query has a time budget (issue 13 item 5). `(a+)+$` over a run of `a`s and a
`b` took 44 s with Python's `re` over 27 of them; the `regex` engine used now answers it at
once, and a pattern that still backtracks without end there, `(a|a)+$`, is stopped with
exit 5 and a clear message, and the vault answers the next query at once."""

from __future__ import annotations

import time
from pathlib import Path

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note


def test_catastrophic_backtracking_is_stopped(tmp_path: Path) -> None:
    from vaultmem.services.query import REGEX_BUDGET_S

    root = make_vault(tmp_path / "v", backend="none")
    note(root, "shared/evil.md", "a" * 40 + "b\n", title="Evil")
    note(root, "shared/fine.md", "ordinary words\n", title="Fine")
    cli = Cli(root)
    cli.ok("index")
    assert cli.ok("query", "(a+)+$", "--regex")["matches"] == []  # no match, and no wait
    started = time.monotonic()
    res = cli("query", "(a|a)+$", "--regex")
    took = time.monotonic() - started
    assert res.exit_code == 5, res.stdout
    assert '"invalid_input"' in res.stdout and "simplify it" in res.stdout
    # bounded: without the budget this runs for hours (a minute's room for a busy machine)
    assert took < REGEX_BUDGET_S + 60
    # an ordinary pattern still works, on the same vault
    got = cli.ok("query", "ordin[a-z]+", "--regex")
    assert [m["path"] for m in got["matches"]] == ["shared/fine.md"]


def test_bad_patterns_are_invalid_input(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", backend="none")
    cli = Cli(root)
    for pattern in ("(", "[z-a]", "a{2,1}", "(?P<1x>a)"):
        res = cli("query", pattern, "--regex")
        assert res.exit_code == 5 and "invalid regular expression" in res.stdout, pattern


def test_repeat_counts_that_would_fill_memory_are_invalid_input(tmp_path: Path) -> None:
    """`a{1000000000}` is built out when it compiles, before any time budget: one query
    took 23 GB and the OOM killer took the MCP server, and the watcher serving it."""
    root = make_vault(tmp_path / "v")
    note(root, "shared/n.md", "aaaa 2026-11-27\n", title="N")
    cli = Cli(root)
    for pattern in ("a{1000000000}", "a{10000000}", "(a{1000}){1000}", "x{5,99999999999999999999}"):
        res = cli("query", pattern, "--regex")
        assert res.exit_code == 5 and "repeat count" in res.data["error"]["message"], res.stdout
    assert cli.ok("query", r"a{4} \d{4}-\d{2}-\d{2}", "--regex")["matches"]


def test_check_repeats_table() -> None:
    from vaultmem.search.grep import check_repeats

    for ok in (r"a{3}", r"a{3,}", r"x{,5}", r"\{1000000\}", r"\d{4}-\d{2}", r"(ab{10}){100}", "a{1000}"):
        check_repeats(ok)
    for bad in ("a{1001}", "a{0,1001}", "(a{100}){1001}", "(a{400}){400}", "a{00000000000001}"):
        try:
            check_repeats(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was let through")
