"""Every line the stdio transport cannot read gets JSON-RPC's error (vaultmem/mcp/unreadable.py):
a table of lines, through the SDK's own parser, to the error each is answered with."""

from __future__ import annotations

import pytest

mcp_types = pytest.importorskip("mcp_types")

from vaultmem.mcp.unreadable import ECHO_CHARS, reply_to_unreadable  # noqa: E402

CALL = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"memory_save","arguments":{"content":"%s"}}}'


def _error_of(line: str) -> Exception:
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:
        return exc
    raise AssertionError(f"the SDK reads {line!r}")


@pytest.mark.parametrize(
    ("line", "id_", "code", "words"),
    [
        ("not json {", None, -32700, "not JSON: 'not json {'"),
        ("", None, -32700, "not JSON"),
        (CALL % (2, "\\ud800 half"), 2, -32600, "lone UTF-16 surrogate"),
        (CALL % ('"a"', "low \\udfff"), "a", -32600, "lone UTF-16 surrogate"),
        (CALL % ('"\\ud800"', "x"), None, -32600, "lone UTF-16 surrogate"),  # an id no reply can carry
        ('{"jsonrpc": "2.0", "id": "three", "params": 7}', "three", -32600, "not a JSON-RPC 2.0 message"),
        ('{"jsonrpc": "2.0", "id": true, "method": 1}', None, -32600, "not a JSON-RPC 2.0 message"),
        ('{"id": 8, "method": "x"}', 8, -32600, "not a JSON-RPC 2.0 message"),
        ("[1, 2]", None, -32600, "not a JSON-RPC 2.0 message"),
        ("7", None, -32600, "not a JSON-RPC 2.0 message"),
        ("null", None, -32600, "not a JSON-RPC 2.0 message"),  # JSON, though no message
        (
            '{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":' + "[" * 3000 + "]" * 3000 + "}}",
            None,
            -32600,
            "nested",
        ),
        ("[" * 100_000 + "]" * 100_000, None, -32600, "nested"),
    ],
)
def test_reply_to_unreadable(line: str, id_: object, code: int, words: str) -> None:
    reply = reply_to_unreadable(_error_of(line))
    assert reply is not None and (reply.id, reply.error.code) == (id_, code)
    assert words in reply.error.message
    mcp_types.jsonrpc_message_adapter.validate_json(reply.model_dump_json(by_alias=True))  # a message the client reads


def test_a_long_line_is_echoed_in_part() -> None:
    reply = reply_to_unreadable(_error_of("x" * 100_000))
    assert reply is not None and len(reply.error.message) < ECHO_CHARS + 40


def test_an_exception_that_is_not_pydantics_is_a_parse_error() -> None:
    reply = reply_to_unreadable(OSError("read failed"))
    assert reply is not None and (reply.id, reply.error.code) == (None, -32700)


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ('{"jsonrpc":"2.0","id":5,"result":{"x":"\\ud800"}}', False),  # the client's response: never answered
        ('{"jsonrpc":"2.0","id":5,"error":{"code":1}}', False),
        (CALL % (5, "\\ud800"), True),
        ("not json", True),
        ("[" * 5000 + "]" * 5000, True),
    ],
)
def test_a_response_of_the_clients_is_never_answered(line: str, answer: bool) -> None:
    assert (reply_to_unreadable(_error_of(line)) is not None) is answer
