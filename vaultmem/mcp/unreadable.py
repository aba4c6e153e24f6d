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

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

# Enough of what the client sent to recognise it, never the whole of a large line.
ECHO_CHARS = 120


def reply_to_unreadable(error: Exception) -> types.JSONRPCError | None:
    """The JSON-RPC error for a line the transport could not read, from its exception
    (pydantic's ValidationError holds the line, or the JSON it parsed to); None for a
    response of the client's own (to a request of the server's), which JSON-RPC never
    answers: an answer with its id would answer the client's request of that number."""
    raw = _input_of(error)
    if raw is _UNREAD:
        return _error(None, types.PARSE_ERROR, "parse error: the line could not be read")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except RecursionError:  # nested deeper than any message: the SDK's parser refused it too
            return _error(None, types.INVALID_REQUEST, "invalid request: nested too deeply")
        except ValueError:
            echo = raw[:ECHO_CHARS] + ("…" if len(raw) > ECHO_CHARS else "")
            return _error(None, types.PARSE_ERROR, f"parse error: not JSON: {echo!r}")
    if isinstance(raw, dict) and "method" not in raw and ("result" in raw or "error" in raw):
        return None
    if _has_lone_surrogate(raw):
        why = "a string holds a lone UTF-16 surrogate (half of a pair, such as \\ud800)"
        return _error(_id_of(raw), types.INVALID_REQUEST, f"invalid request: {why}")
    return _error(_id_of(raw), types.INVALID_REQUEST, f"invalid request: not a JSON-RPC 2.0 message: {_first(error)}")


_UNREAD = object()  # no line to read in the exception


def _input_of(error: Exception) -> Any:
    """The line (or the JSON it parsed to) that pydantic's ValidationError holds."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return _UNREAD
    try:
        found = errors()
    except Exception:  # not pydantic's: nothing to read the line from
        return _UNREAD
    return found[0].get("input", _UNREAD) if found and isinstance(found[0], dict) else _UNREAD


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
    """Whether any string in `value` holds one; by a stack, not recursion (any depth)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any("\ud800" <= ch <= "\udfff" for ch in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
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

    def close(self) -> None:
        self._read.close()

    async def aclose(self) -> None:
        await self._read.aclose()

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for item in self._read:
            if isinstance(item, Exception):
                reply = reply_to_unreadable(item)
                if reply is not None:
                    try:
                        await self._write.send(SessionMessage(reply))
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return  # the session is ending: nobody to answer
                continue
            yield item
