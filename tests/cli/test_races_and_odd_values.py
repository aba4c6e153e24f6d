"""Issue 22, item 10: inputs and races that were internal errors (exit 1) are a clear error
(exit 5) or a skipped note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli


@pytest.mark.parametrize("value", ["[1, 2]", "[[1]]", "[null]", "[true]", "[{a: 1}]"])
def test_set_tags_to_values_that_are_not_words_is_invalid_input(cli: Cli, value: str) -> None:
    cli.ok("note", "create", "--title", "Tagged", "--type", "note", "--scope", "shared")
    res = cli("note", "update", "Tagged", "--set", f"tags={value}")
    assert res.exit_code == 5 and res.data["error"]["code"] == "invalid_input", res.stdout
    assert "invalid tag" in res.data["error"]["message"]


@pytest.mark.parametrize("command", [("get",), ("links",), ("note", "delete"), ("note", "comment", "--text", "x")])
def test_a_reference_longer_than_any_note_name_is_invalid_input(cli: Cli, command: tuple[str, ...]) -> None:
    res = cli(*command, "a" * 100_000)
    assert res.exit_code == 5 and "at most 4096 characters" in res.data["error"]["message"], res.stdout


def test_query_skips_a_note_deleted_between_match_and_read(
    vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.services import query as query_service

    for title in ("Kite one", "Kite two", "Kite three"):
        cli.ok("note", "create", "--title", title, "--type", "note", "--scope", "shared", "--body", "kites fly")
    scan = query_service._scan

    def scan_then_delete(*args: Any) -> Any:
        found, searched = scan(*args)
        (vault / found[0][1].path).unlink()  # gone before its excerpt is read
        return found, searched

    monkeypatch.setattr(query_service, "_scan", scan_then_delete)
    out = cli.ok("query", "kites")
    assert len(out["matches"]) == 2 and out["total_matched"] == 2
    assert all((vault / m["path"]).exists() for m in out["matches"])
