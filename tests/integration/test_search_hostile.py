"""Issue 4, acceptance 6 and 9: hostile query strings are plain text (exit 0, one JSON
document, no traceback) in every mode and every read command, an empty query exits 5; and
with the embedding backend `none`, search runs BM25 + graph and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, Result
from tests.integration._vaults import make_vault, note, paths_of

HOSTILE = [
    'C++ -- "unterminated',
    "2026-11-21",
    "a/b/c.md",
    "title:foo AND (bar",
    "*",
    "NOT",
    "東京の天気",
    "Привет мир",
    "مرحبا بالعالم",
    "🙂🚀",
    "?",
    "\\",
    "[[Wiki link]]",
    "((((((((((",
    "foo~2 bar^3 {baz} [a TO z]",
    "OR AND NOT",
    "-",
    "'; DROP TABLE files; --",
    "%s %d {0}",
    "x" * 2000,
    "the of and",
]


@pytest.fixture(scope="module")
def hcli_hostile(tmp_path_factory: pytest.TempPathFactory, module_hash: object) -> Cli:
    root = make_vault(tmp_path_factory.mktemp("hostile") / "h", backend="auto")
    note(root, "shared/cpp.md", "C++ templates and the -- operator, dated 2026-11-21.\n", title="C++ notes")
    note(root, "shared/path.md", "The file a/b/c.md holds the config. title:foo is literal.\n", title="Paths")
    note(root, "shared/ru.md", "Привет мир: заметка на русском языке.\n", title="Русская заметка")
    note(root, "shared/ja.md", "東京 の 天気 は 晴れ です。\n", title="天気")
    note(root, "shared/plain.md", "Plain English text about gardening.\n", title="Garden")
    note(root, "reference/topic.md", "Topic.\n", title="Everything", type="topic", files=["shared/*.md"])
    cli = Cli(root)
    cli.ok("index")
    return cli


def _sound(res: Result, what: str) -> None:
    assert res.exit_code == 0, f"{what}: exit {res.exit_code}: {res.stdout} {res.stderr}"
    assert "Traceback" not in res.stderr, what
    json.loads(res.stdout)  # exactly one JSON document


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_are_plain_text(hcli_hostile: Cli, query: str) -> None:
    for mode in ("bm25", "vector", "hybrid"):
        res = hcli_hostile("search", query, "--mode", mode, "--explain")
        _sound(res, f"search {mode}")
        assert res.data["query"] == query.strip()
    _sound(hcli_hostile("search", query, "--budget-tokens", "50", "--tag", query[:20] or "x"), "search with filters")
    _sound(hcli_hostile("query", query), "query")
    _sound(hcli_hostile("query", query, "--min-relevance", "0"), "query")
    res = hcli_hostile("reference", "search", "everything", query)
    _sound(res, "reference search")
    res = hcli_hostile("get", query)
    assert res.exit_code in (3, 5), res.stdout
    assert "Traceback" not in res.stderr


def test_hostile_queries_still_find_their_words(hcli_hostile: Cli) -> None:
    for query, path in [
        ('C++ templates -- "unterminated', "shared/cpp.md"),
        ("2026-11-21", "shared/cpp.md"),
        ("a/b/c.md", "shared/path.md"),
        ("title:foo AND (bar", "shared/path.md"),
    ]:
        assert paths_of(hcli_hostile.ok("search", query, "--mode", "bm25"))[:1] == [path], query


def test_non_latin_words_are_found(hcli_hostile: Cli) -> None:
    assert paths_of(hcli_hostile.ok("search", "Привет", "--mode", "bm25"))[:1] == ["shared/ru.md"]
    assert paths_of(hcli_hostile.ok("search", "東京", "--mode", "bm25"))[:1] == ["shared/ja.md"]
    assert [m["path"] for m in hcli_hostile.ok("query", "Привет")["matches"]] == ["shared/ru.md"]


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_empty_query_exits_5(hcli_hostile: Cli, query: str) -> None:
    for args in (("search", query), ("search", query, "--mode", "bm25"), ("query", query)):
        res = hcli_hostile(*args)
        assert res.exit_code == 5, args
        assert res.data["error"]["code"] == "invalid_input"
        assert "Traceback" not in res.stderr
    plain = hcli_hostile("search", query, json_=False)
    assert plain.exit_code == 5 and plain.stderr.startswith("vaultmem: error:") and plain.stdout == ""
    assert hcli_hostile("reference", "search", "everything", query).exit_code == 5


# --- acceptance 9: no embeddings -------------------------------------------------------------


@pytest.fixture(scope="module")
def nocli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    root = make_vault(tmp_path_factory.mktemp("none") / "none", backend="none")
    note(root, "shared/a.md", "Otters hold hands while sleeping. See [[B]].\n", title="A")
    note(root, "shared/b.md", "Beavers build dams.\n", title="B")
    cli = Cli(root)
    report = cli.ok("index")
    assert report["vectors"] == "none" and report["embedded_chunks"] == 0
    return cli


def test_backend_none_searches_bm25_and_graph_and_says_so(nocli: Cli) -> None:
    res = nocli("search", "otters sleeping")
    assert res.exit_code == 0
    data = res.data
    assert data["mode"] == "bm25" and data["requested_mode"] == "hybrid"
    assert any("BM25" in w for w in data["warnings"])
    assert "warning:" in res.stderr and "BM25" in res.stderr
    assert paths_of(data) == ["shared/a.md"]
    assert [n["title"] for n in data["results"][0]["links_out"]] == ["B"]  # the graph still works
    explain = nocli.ok("search", "otters", "--explain")["results"][0]["explain"]
    assert explain["vector"] is None and explain["parts"]["bm25"] > 0
    assert not (nocli.vault / ".vaultmem" / "chroma").exists()


def test_backend_none_explicit_bm25_has_no_warning(nocli: Cli) -> None:
    res = nocli("search", "otters", "--mode", "bm25")
    assert res.exit_code == 0 and "warnings" not in res.data and "requested_mode" not in res.data
    assert res.stderr == ""


def test_backend_none_vector_mode_is_invalid_input(nocli: Cli) -> None:
    res = nocli("search", "otters", "--mode", "vector")
    assert res.exit_code == 5
    assert "embeddings" in res.data["error"]["message"]


def test_backend_none_human_output_says_so(nocli: Cli) -> None:
    res = nocli("search", "otters", json_=False)
    assert res.exit_code == 0 and "BM25" in res.stdout + res.stderr


@pytest.mark.parametrize(
    "name",
    [b"bad\xffname.md", b"caf\xe9.md", b"\xed\xa0\x80half.md", b"ok \xc3\x28.md"],
    ids=["ff", "latin1", "surrogate-bytes", "bad-continuation"],
)
def test_reference_search_skips_a_file_name_that_is_not_utf8(tmp_path: Path, name: bytes) -> None:
    """A topic's glob that matches a file whose name is not UTF-8 (from another system or a
    teammate's commit) searches the rest; before, `reference search` failed with an internal
    error (exit 1) making an id of the name."""
    import os

    root = make_vault(tmp_path / "v")
    note(root, "shared/hiking.md", "Hiking boots need breaking in before a long trail.\n", title="Boots")
    note(root, "reference/topic.md", "Topic.\n", title="Everything", type="topic", files=["shared/*.md"])
    with open(os.path.join(os.fsencode(root / "shared"), name), "wb") as fh:
        fh.write(b"Hiking boots, a file with a bad name.\n")
    cli = Cli(root)
    res = cli("reference", "search", "Everything", "hiking boots")
    _sound(res, "reference search")
    assert [r["summary"]["path"] for r in res.data["results"]] == ["shared/hiking.md"]
