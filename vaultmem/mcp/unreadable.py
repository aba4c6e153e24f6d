"""An answer for every line a client sends over stdio that the server cannot read.

The SDK's stdio transport hands the server an exception for a line it cannot parse as a
JSON-RPC message, and the server drops it: a client that sent a request in such a line
(a string holding a lone UTF-16 surrogate such as `"\\ud800"`, which the SDK's JSON parser
refuses and Python's reads; a typo in a hand-written message) waits for an answer for ever.
JSON-RPC 2.0 asks for an error instead: "Parse error" (-32700) for what is not JSON, with
id null, and "Invalid Request" (-32600) for JSON that is no message, with the request's id
where one can be read."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage

# Enough of what the client sent to recognise it, never the whole of a large line.
ECHO_CHARS = 120


def reply_to_unreadable(error: Exception) -> types.JSONRPCError:
    """The JSON-RPC error for a line the transport could not read, from its exception
    (pydantic's ValidationError holds the line, or the JSON it parsed to)."""
    raw = _input_of(error)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            echo = raw[:ECHO_CHARS] + ("…" if len(raw) > ECHO_CHARS else "")
            return _error(None, types.PARSE_ERROR, f"parse error: not JSON: {echo!r}")
        if _has_lone_surrogate(raw):
            why = "a string holds a lone UTF-16 surrogate (half of a pair, such as \\ud800)"
            return _error(_id_of(raw), types.INVALID_REQUEST, f"invalid request: {why}")
    if raw is None:
        return _error(None, types.PARSE_ERROR, "parse error: the line could not be read")
    return _error(_id_of(raw), types.INVALID_REQUEST, f"invalid request: not a JSON-RPC 2.0 message: {_first(error)}")


def _input_of(error: Exception) -> Any:
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return None
    try:
        found = errors()
    except Exception:  # not pydantic's: nothing to read the line from
        return None
    return found[0].get("input") if found and isinstance(found[0], dict) else None


def _first(error: Exception) -> str:
    try:
        first = error.errors()[0]  # type: ignore[attr-defined]
        return f"{'.'.join(str(p) for p in first.get('loc', ()))}: {first.get('msg', '')}".strip(": ")
    except Exception:
        return type(error).__name__


def _id_of(message: Any) -> int | str | None:
    """The request's id when it is one JSON-RPC allows (a string or an integer)."""
    found = message.get("id") if isinstance(message, dict) else None
    if isinstance(found, bool) or not isinstance(found, int | str):
        return None
    return found if not isinstance(found, str) or not _has_lone_surrogate(found) else None


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _error(id_: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=id_, error=types.ErrorData(code=code, message=message))


class AnswersUnreadable:
    """The transport's read stream as the server reads it, with every exception in it
    answered on `write_stream` instead of passed on (to be dropped)."""

    def __init__(self, read_stream: Any, write_stream: Any) -> None:
        self._read = read_stream
        self._write = write_stream

    @property
    def last_context(self) -> Any:
        return getattr(self._read, "last_context", None)

    async def __aenter__(self) -> AnswersUnreadable:
        await self._read.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._read.__aexit__(*exc)

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for item in self._read:
            if isinstance(item, Exception):
                await self._write.send(SessionMessage(reply_to_unreadable(item)))
                continue
            yield item
