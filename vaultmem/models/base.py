"""The results every use case returns, as frozen dataclasses, and the one serializer that
turns them into the JSON of SPEC §6.

Field order is key order in the JSON. `to_json` walks a result's fields in that order; a
field marked `omitted` (see `opt`) is left out when it holds nothing, which is how the
contract's optional keys (`explain`, `warnings`, `budget_tokens`, …) appear only when they
mean something. Services build these; the CLI serializes them (`--json`) or renders them
for people; renderers read the fields, never the JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field, fields, is_dataclass
from typing import Any

# --- the serializer ---------------------------------------------------------------------------

_OMIT = "omit_if"
_KEY = "json_key"
_INLINE = "inline"


def _none(value: Any) -> bool:
    return value is None


def _empty(value: Any) -> bool:
    return not value


def opt(default: Any = None, *, empty: bool = False, key: str | None = None, unless_default: bool = False) -> Any:
    """A field left out of the JSON when None (or, with `empty`, when empty; with
    `unless_default`, when it holds its default: `hops` of a direct neighbour)."""
    omit: Callable[[Any], bool] = _empty if empty else _none
    if unless_default:
        omit = lambda value: value is None or value == default  # noqa: E731
    meta: dict[str, Any] = {_OMIT: omit}
    if key:
        meta[_KEY] = key
    if isinstance(default, (list, dict)):
        return field(default_factory=type(default), metadata=meta)
    return field(default=default, metadata=meta)


def named(key: str, default: Any = ...) -> Any:
    """A field whose JSON key is not a Python name (`from`)."""
    if default is ...:
        return field(metadata={_KEY: key})
    return field(default=default, metadata={_KEY: key})


def _always(value: Any) -> bool:
    return True


def internal(default_factory: Callable[[], Any]) -> Any:
    """A field the services read and the JSON never shows."""
    return field(default_factory=default_factory, metadata={_OMIT: _always})


def inline(default_factory: Callable[[], Any] | None = None) -> Any:
    """A mapping (or result) whose keys join the enclosing object's, in their order."""
    if default_factory is None:
        return field(metadata={_INLINE: True})
    return field(default_factory=default_factory, metadata={_INLINE: True})


def to_json(value: Any) -> Any:
    """JSON-ready data (dicts, lists, str, numbers, bools, None) from a result."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for name, key, omit, inline_ in _plan(type(value)):
            item = getattr(value, name)
            if omit is not None and omit(item):
                continue
            if inline_:
                inner = to_json(item)
                if isinstance(inner, dict):
                    out.update(inner)
                continue
            out[key] = to_json(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    return value


_PLANS: dict[type, tuple[tuple[str, str, Callable[[Any], bool] | None, bool], ...]] = {}


def _plan(cls: type) -> tuple[tuple[str, str, Callable[[Any], bool] | None, bool], ...]:
    """Each field of a result class as (name, JSON key, omit test, inline): read from its
    metadata once per class (dataclasses.fields() each time cost ~40% of rendering)."""
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = tuple(
            (f.name, f.metadata.get(_KEY, f.name), f.metadata.get(_OMIT), bool(f.metadata.get(_INLINE)))
            for f in fields(cls)
        )
    return plan


class Result:
    """Mixin: `to_dict()` is `to_json(self)`."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        data = to_json(self)
        assert isinstance(data, dict)
        return data
