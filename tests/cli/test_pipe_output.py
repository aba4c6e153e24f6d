"""Issue 9 (9): output that pipes. Off a terminal, human output is one record per line
(tab-separated, full ids and paths, no padding, no truncation); tables and colours only on
a terminal; warnings on stderr. Bad flag values exit 2. An unknown reference suggests the
closest titles the ghost can see, and only those.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli._util import write
from tests.conftest import Cli

LONG = "A very long title about kiln firing schedules " + "and glaze chemistry " * 12


@pytest.fixture
def notes(vault: Path, cli: Cli) -> dict[str, dict[str, str]]:
    made = {
        "long": cli.ok("note", "create", "--title", LONG.strip(), "--type", "fact", "--scope", "shared",
                       "--tag", "kiln", "--body", "Kiln firing: cone 6 for " + "stoneware " * 80),
        "glaze": cli.ok("note", "create", "--title", "Glaze recipes", "--type", "fact", "--scope", "shared",
                        "--body", "Kiln glaze: celadon.\n\nSecond   paragraph\twith a tab."),
        "secret": cli.ok("note", "create", "--title", "Zanzibar Launch Codes", "--type", "fact",
                         "--scope", "private", "--body", "kiln password", ghost="alice"),
    }  # fmt: skip
    cli.ok("capture", "kiln capture to curate", ghost="alice")
    write(vault, "shared/broken.md", "---\ntitle: [oops\n---\nkiln\n")
    return made


def _lines(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines()]


def _no_padding(text: str) -> None:
    for line in text.splitlines():
        assert line == line.strip(" "), f"padded: {line!r}"
        assert "  " not in line.replace("\t", "|"), f"aligned with spaces: {line!r}"
    assert "\x1b" not in text


def test_search_prints_one_record_per_result(cli: Cli, notes: dict[str, dict[str, str]]) -> None:
    data = cli.ok("search", "kiln", "--mode", "bm25", ghost="alice")
    res = cli("search", "kiln", "--mode", "bm25", ghost="alice", json_=False)
    assert res.exit_code == 0
    rows = _lines(res.stdout)
    assert len(rows) == len(data["results"]) > 1
    for row, result in zip(rows, data["results"], strict=True):
        s = result["summary"]
        assert len(row) == 5
        assert row[:4] == [f"{s['score']:.3g}", s["id"], s["path"], s["title"]]
    assert LONG.strip() in res.stdout  # never truncated, whatever COLUMNS says
    assert "stoneware " * 10 in res.stdout or "stoneware stoneware" in res.stdout
    _no_padding(res.stdout)
    # the summary and the no-embeddings warning are talk: stderr
    assert "results, mode bm25" in res.stderr and "results, mode" not in res.stdout


def test_warnings_go_to_stderr_in_every_mode(
    cli: Cli, notes: dict[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    for env in ({}, {"FORCE_COLOR": "1", "COLUMNS": "200"}):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        res = cli("search", "kiln", json_=False)  # hybrid without embeddings: a warning
        assert res.exit_code == 0
        assert "no embeddings" in res.stderr and "no embeddings" not in res.stdout


def test_cut_and_grep_work(cli: Cli, notes: dict[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "20")
    ids = [row[1] for row in _lines(cli("search", "kiln", "--mode", "bm25", json_=False).stdout)]
    assert notes["long"]["id"] in ids and notes["glaze"]["id"] in ids
    query = cli("query", "kiln", "--min-relevance", "0", json_=False)
    rows = _lines(query.stdout)
    assert all(len(row) == 5 for row in rows)
    by_path = {row[2]: row for row in rows}
    assert by_path[notes["glaze"]["path"]][1] == notes["glaze"]["id"]
    assert by_path[notes["glaze"]["path"]][4] == "Kiln glaze: celadon. Second paragraph with a tab."
    assert by_path[notes["long"]["path"]][3] == LONG.strip()
    assert "Found" in query.stderr and "Found" not in query.stdout
    _no_padding(query.stdout)


def test_lists_and_lint_are_records(cli: Cli, notes: dict[str, dict[str, str]]) -> None:
    inbox = cli.ok("inbox", "list", ghost="alice")["captures"]
    res = cli("inbox", "list", ghost="alice", json_=False)
    assert [row[0] for row in _lines(res.stdout)] == [c["id"] for c in inbox]
    assert all(row[3] == c["path"] for row, c in zip(_lines(res.stdout), inbox, strict=True))
    _no_padding(res.stdout)
    lint = cli("lint", json_=False)
    problems = cli("lint").data["problems"]
    assert lint.exit_code == 1
    assert _lines(lint.stdout) == [[p["path"], p["severity"], p["code"], p["message"]] for p in problems]
    assert "notes checked" in lint.stderr


def test_get_is_header_lines_then_the_body(cli: Cli, notes: dict[str, dict[str, str]]) -> None:
    out = cli.ok("get", notes["glaze"]["id"], json_=False)
    head, _, body = out.partition("\n\n")
    fields = dict(line.split("\t", 1) for line in head.splitlines())
    assert fields["title"] == "Glaze recipes" and fields["id"] == notes["glaze"]["id"]
    assert fields["path"] == notes["glaze"]["path"]
    assert body == "Kiln glaze: celadon.\n\nSecond   paragraph\twith a tab.\n"


def test_write_commands_print_path_and_id(cli: Cli, notes: dict[str, dict[str, str]]) -> None:
    out = cli.ok("note", "create", "--title", "Cone chart", "--type", "fact", "--scope", "shared", json_=False)
    path, note_id, version = out.rstrip("\n").split("\t")
    assert (path, version) == ("shared/" + Path(path).name, "1")
    assert cli.ok("get", note_id)["note"]["title"] == "Cone chart"


def test_tables_and_colours_only_on_a_terminal(
    cli: Cli, notes: dict[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = cli("search", "kiln", "--mode", "bm25", json_=False).stdout
    assert "score" not in plain and "\x1b[" not in plain
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    shown = cli("search", "kiln", "--mode", "bm25", json_=False).stdout
    assert "score" in shown and "\x1b[" in shown and "\t" not in shown


@pytest.mark.parametrize(
    "args",
    [
        ["search", "kiln", "--limit", "abc"],
        ["search", "kiln", "--mode", "foo"],
        ["query", "kiln", "--limit", "abc"],
        ["get", "x", "--bogus"],
    ],
)
def test_bad_flag_values_exit_2(cli: Cli, args: list[str]) -> None:
    res = cli(*args)
    assert res.exit_code == 2, res.stdout
    assert res.data["error"]["code"] == "usage"
    human = cli(*args, json_=False)
    assert human.exit_code == 2 and human.stdout == "" and human.stderr.startswith("vaultmem: error: ")


def test_unknown_reference_suggests_close_titles(cli: Cli, notes: dict[str, dict[str, str]]) -> None:
    res = cli("get", "glaze recipe")
    assert res.exit_code == 3
    error = res.data["error"]
    assert error["message"] == "no note matches 'glaze recipe'; did you mean 'Glaze recipes'?"
    assert error["suggestions"] == [
        {"id": notes["glaze"]["id"], "path": notes["glaze"]["path"], "title": "Glaze recipes"}
    ]
    human = cli("get", "glaze recipe", json_=False)
    assert human.stderr == "vaultmem: error: no note matches 'glaze recipe'; did you mean 'Glaze recipes'?\n"
    for args in (["note", "update", "Glaze recipe", "--append", "x"], ["note", "delete", "Glaze recipe"]):
        res = cli(*args, ghost="bob")
        assert res.exit_code == 3 and "did you mean 'Glaze recipes'?" in res.data["error"]["message"]
    # nothing close: the plain message, no suggestions key
    assert cli("get", "qqqqqq").data == {"error": {"code": "not_found", "message": "no note matches 'qqqqqq'"}}


@pytest.mark.parametrize("ghost", ["bob", None])
def test_suggestions_never_name_a_note_the_ghost_cannot_see(
    cli: Cli, notes: dict[str, dict[str, str]], ghost: str | None
) -> None:
    for ref in ("Zanzibar Launch Code", "zanzibar launch", "Zanzibar Launch Codes"):
        res = cli("get", ref, ghost=ghost)
        assert res.data == {"error": {"code": "not_found", "message": f"no note matches {ref!r}"}}
        assert "Zanzibar Launch Codes" not in res.stdout.replace(repr(ref), "")
    # its owner is helped
    res = cli("get", "Zanzibar Launch Code", ghost="alice")
    assert "did you mean 'Zanzibar Launch Codes'?" in res.data["error"]["message"]
