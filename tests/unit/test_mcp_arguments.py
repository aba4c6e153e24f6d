"""Tool arguments become typed use cases (vaultmem/mcp/arguments.py, tools.py): a table of
values that are values whatever they hold, and of values that are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vaultmem.errors import InvalidInput
from vaultmem.mcp.arguments import MAX_SHORT, MAX_TEXT, check
from vaultmem.mcp.server import in_vault_terms
from vaultmem.mcp.tools import BY_NAME, Read, Write
from vaultmem.services.query import QueryRequest
from vaultmem.services.reads import GetRequest
from vaultmem.services.search import SearchRequest

S = {"type": "string"}
L = {"type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize(
    ("name", "schema", "value", "expected"),
    [
        ("query", S, "--ghost=alice", "--ghost=alice"),
        ("query", S, "\x00stdin:", "\x00stdin:"),
        ("query", S, "/etc/passwd", "/etc/passwd"),
        ("tags", L, ["\x00stdin:", "--body-file=/x"], ["\x00stdin:", "--body-file=/x"]),
        ("tags", L, "ops", ["ops"]),
        ("max_results", {"type": "integer"}, "5", 5),
        ("max_results", {"type": "integer"}, 5.0, 5),
        ("trust", {"type": "number"}, "0.9", 0.9),
        ("regex", {"type": "boolean"}, "true", True),
        ("scope", {"enum": ["all", "shared_only"]}, "all", "all"),
        ("set", {"type": "object"}, {"source": ["a", {"b": 1}]}, {"source": ["a", {"b": 1}]}),
        ("body", S, "x" * MAX_TEXT, "x" * MAX_TEXT),
        ("options", {"type": "object", "properties": {"k": S, "z": S}}, {"k": "v", "z": None}, {"k": "v"}),
    ],
)
def test_values_stay_values(name: str, schema: dict[str, Any], value: Any, expected: Any) -> None:
    assert check(name, schema, value) == expected


@pytest.mark.parametrize(
    ("name", "schema", "value"),
    [
        ("query", S, 7),
        ("query", S, ["a"]),
        ("query", S, "x" * (MAX_SHORT + 1)),
        ("body", S, "x" * (MAX_TEXT + 1)),
        ("tags", L, [["nested"]]),
        ("tags", L, ["a"] * 1001),
        ("tags", L, {"a": 1}),
        ("max_results", {"type": "integer"}, True),
        ("max_results", {"type": "integer"}, 2.5),
        ("max_results", {"type": "integer"}, "five"),
        ("max_results", {"type": "integer"}, 2**60),
        ("trust", {"type": "number"}, float("nan")),
        ("trust", {"type": "number"}, "inf"),
        ("regex", {"type": "boolean"}, 1),
        ("scope", {"enum": ["all"]}, "--scope=private"),
        ("set", {"type": "object"}, "k=v"),
        ("set", {"type": "object"}, {"a": [[[[[[[[[[1]]]]]]]]]]}),
        ("options", {"type": "object", "properties": {"k": S}}, {"ghost": "alice"}),
    ],
)
def test_values_of_the_wrong_shape_are_refused(name: str, schema: dict[str, Any], value: Any) -> None:
    with pytest.raises(InvalidInput) as err:
        check(name, schema, value)
    assert name in err.value.message


def test_a_search_becomes_its_typed_request() -> None:
    plan = BY_NAME["memory_search"].plan(
        {"q": "--vault=/other", "scope": "private_only", "options": {"top_k": 3, "tags": ["\x00stdin:"]}}, "bob"
    )
    assert isinstance(plan, Read) and isinstance(plan.request, SearchRequest)
    assert plan.request.query == "--vault=/other" and plan.request.limit == 3
    assert plan.request.filters.scope == "private_only" and list(plan.request.filters.tags) == ["\x00stdin:"]


def test_reads_and_writes_are_planned_as_such() -> None:
    assert BY_NAME["memory_get"].plan({"id": "../../etc/passwd"}, "bob") == Read(GetRequest("../../etc/passwd", None))
    query = BY_NAME["memory_query"].plan(
        {"query": "x", "types": ["a", "\x00stdin:"], "memory_type": "--ghost=alice"}, "bob"
    )
    assert isinstance(query, Read) and query.request == QueryRequest(
        "x", types=("a", "\x00stdin:"), memory_type="--ghost=alice"
    )
    assert isinstance(BY_NAME["memory_save"].plan({"content": "a fact"}, "bob"), Write)


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("memory_search", {"query": "x", "ghost": "alice"}, "unknown parameter 'ghost'"),
        ("memory_search", {"query": "x", "vault": "/"}, "unknown parameter 'vault'"),
        ("memory_note_validate", {"note_id": "x", "validated_by": "alice/m"}, "unknown parameter"),
        ("memory_search", {"query": "x", "q": "y"}, "given twice"),
        ("memory_search", {"query": "x", "options": "--limit=1"}, "options must be an object"),
        ("memory_note_update", {"patch": ["body"]}, "patch must be an object"),
        ("memory_get", {}, "missing or empty required parameter note_id_or_title"),
        ("memory_search", "--ghost=alice", "arguments must be an object"),
        ("memory_save", {"content": "   "}, "nothing to save"),
        ("memory_note_update", {"note_id": "x", "body": "a", "append": "b"}, "either body or append"),
        ("memory_write", {}, "nested more than 8 levels"),
    ],
)
def test_what_no_tool_accepts(tool: str, arguments: Any, says: str) -> None:
    if tool == "memory_write":
        nested: Any = "deep"
        for _ in range(70):
            nested = [nested]
        arguments = {"writes": [{"type": "semantic", "content": nested}]}
    with pytest.raises(InvalidInput) as err:
        BY_NAME[tool].plan(arguments, "bob")
    assert says in err.value.message


@pytest.mark.parametrize(
    ("value", "told"),
    [
        ("/srv/vault/vaultmem.toml: not valid TOML", "vaultmem.toml: not valid TOML"),
        ("cannot write '/srv/vault/shared/a b.md'", "cannot write 'shared/a b.md'"),
        ("/srv/vault", "."),
        ("'/srv/vault' is read-only", "'.' is read-only"),
        ("/srv/vault2/x and /srv/vault.bak", "/srv/vault2/x and /srv/vault.bak"),
        (["/srv/vault/a", 3], ["a", 3]),
        ({"path": "/srv/vault/b", "n": None}, {"path": "b", "n": None}),
        ("no path at all", "no path at all"),
        ("cannot load /app/srv/vault/model.bin", "cannot load /app/srv/vault/model.bin"),  # inside another path
        ("/home/me/srv/vault/x.md and /srv/vault~/x", "/home/me/srv/vault/x.md and /srv/vault~/x"),
        ("(/srv/vault/a.md)", "(a.md)"),
    ],
)
def test_in_vault_terms(value: Any, told: Any) -> None:
    assert in_vault_terms(value, Path("/srv/vault")) == told
