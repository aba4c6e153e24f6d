"""The read use cases by name, each with its typed request: what a front end may ask the
process where the indexes are warm (the watcher) to run for it.

One table for both ends of the watcher's socket: the MCP server encodes a typed request
(`encode`), the watcher decodes it into the same dataclass (`decode`, strict: unknown
fields and wrong types are refused) and runs the very use case the CLI runs (`run`). No
command line is built and no printed output is parsed on the way.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vaultmem.errors import InvalidInput
from vaultmem.models import Result
from vaultmem.services.app import App
from vaultmem.services.query import QueryRequest
from vaultmem.services.search import SearchRequest


@dataclass(frozen=True, slots=True)
class GetRequest:
    ref: str
    scope: str | None = None


@dataclass(frozen=True, slots=True)
class ReferenceRequest:
    topic: str
    question: str
    limit: int | None = None
    rrf_k: float | None = None


def _search(app: App, req: SearchRequest) -> Result:
    from vaultmem.services.search import search

    return search(app, req)


def _get(app: App, req: GetRequest) -> Result:
    from vaultmem.services.documents import get_note

    return get_note(app, req.ref, scope=req.scope)


def _query(app: App, req: QueryRequest) -> Result:
    from vaultmem.services.query import query

    return query(app, req)


def _reference(app: App, req: ReferenceRequest) -> Result:
    from vaultmem.services.reference import reference_search

    return reference_search(app, req.topic, req.question, req.limit, req.rrf_k)


@dataclass(frozen=True, slots=True)
class Read:
    request: type
    run: Callable[[App, Any], Result]


READS: Mapping[str, Read] = {
    "search": Read(SearchRequest, _search),
    "get": Read(GetRequest, _get),
    "query": Read(QueryRequest, _query),
    "reference": Read(ReferenceRequest, _reference),
}


def name_of(request: Any) -> str:
    for name, read in READS.items():
        if type(request) is read.request:
            return name
    raise TypeError(f"not a read request: {type(request).__name__}")


def run(app: App, request: Any) -> Result:
    return READS[name_of(request)].run(app, request)


def encode(request: Any) -> dict[str, Any]:
    """JSON-ready fields of a request (nested requests as objects, sequences as lists)."""
    return typing.cast(dict[str, Any], _plain(request))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def decode(name: str, data: Any) -> Any:
    """The typed request `name` takes, from `encode`'s output; InvalidInput for anything
    else (an unknown use case or field, a value of the wrong type)."""
    read = READS.get(name)
    if read is None:
        raise InvalidInput(f"unknown read {name!r}; known: {', '.join(READS)}")
    return _build(read.request, data, name)


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise InvalidInput(f"{where}: expected an object")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise InvalidInput(f"{where}: unknown fields {', '.join(sorted(map(str, unknown)))}")
    values = {key: _value(hints[key], value, f"{where}.{key}") for key, value in data.items()}
    try:
        return cls(**values)
    except TypeError as exc:  # a required field missing
        raise InvalidInput(f"{where}: {exc}") from None


def _value(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        (inner,) = [o for o in options if o is not type(None)]
        return _value(inner, value, where)
    if origin is not None and issubclass(origin, Sequence) and origin is not str:
        if not isinstance(value, list):
            raise InvalidInput(f"{where}: expected a list")
        (item,) = typing.get_args(hint)
        return tuple(_value(item, v, where) for v in value)
    if dataclasses.is_dataclass(hint):
        return _build(typing.cast(type, hint), value, where)
    if hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        value = float(value) if ok else value
    elif hint is str:
        ok = isinstance(value, str)
    else:
        raise TypeError(f"{where}: no decoder for {hint!r}")
    if not ok:
        raise InvalidInput(f"{where}: expected {hint.__name__}, not {type(value).__name__}")
    return value
