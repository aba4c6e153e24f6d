"""Tool arguments checked against the tool's input schema: JSON values in, typed values out.

Covers what the tools' schemas use: strings, integers, numbers, booleans, enums, arrays of
strings or of objects, closed objects (with `properties`) and open ones (front matter
fields, memory writes). A value is data whatever it holds (leading dashes, NUL, `=`, a
path): nothing downstream reads it as an option, a file name, a vault or an identity. Pure.

Models often send `"5"` for 5 and `"true"` for true: such strings are read as the number
or boolean they spell, nothing else is converted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from vaultmem.errors import InvalidInput
from vaultmem.services.writes import nesting_depth

# A note is at most 2 MiB (vault/layout.py MAX_NOTE_BYTES): no text argument needs more.
MAX_TEXT = 2 * 1024 * 1024
# Names, queries, references, titles, tags: text meant for one line.
MAX_SHORT = 4096
# Fields that carry a note's text; every other string is short.
LONG_FIELDS = frozenset({"body", "content", "payload", "append", "comment"})
MAX_ITEMS = 1000
# Nesting of open objects (front matter values, a memory write): people stop far earlier.
MAX_DEPTH = 8


def check(name: str, schema: Mapping[str, Any], value: Any) -> Any:
    """`value` as `schema` types it; InvalidInput naming `name` otherwise."""
    if "enum" in schema:
        if not isinstance(value, str) or value not in schema["enum"]:
            raise InvalidInput(f"{name} must be one of {', '.join(schema['enum'])}, not {_show(value)}")
        return value
    kind = schema.get("type")
    if kind == "string":
        return _string(name, value)
    if kind == "integer":
        return _integer(name, value)
    if kind == "number":
        return _number(name, value)
    if kind == "boolean":
        return _boolean(name, value)
    if kind == "array":
        return _array(name, schema.get("items", {}), value)
    if kind == "object":
        return _object(name, schema, value)
    raise TypeError(f"{name}: no check for schema {schema!r}")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _string(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, not {_show(value)}")
    limit = MAX_TEXT if name.rsplit(".", 1)[-1] in LONG_FIELDS else MAX_SHORT
    if len(value) > limit:
        raise InvalidInput(f"{name} is {len(value)} characters; at most {limit}")
    return value


def _integer(name: str, value: Any) -> int:
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise InvalidInput(f"{name} must be a whole number, not {_show(value)}") from None
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be a whole number, not {_show(value)}")
    if abs(value) > 2**53:
        raise InvalidInput(f"{name} is out of range")
    return value


def _number(name: str, value: Any) -> float:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise InvalidInput(f"{name} must be a number, not {_show(value)}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(f"{name} must be a finite number, not {_show(value)}")
    return float(value)


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return bool(value == "true")
    raise InvalidInput(f"{name} must be true or false, not {_show(value)}")


def _array(name: str, items: Mapping[str, Any], value: Any) -> list[Any]:
    if isinstance(value, str) and items.get("type") == "string":
        value = [value]  # `tags: "ops"` for `tags: ["ops"]`
    if not isinstance(value, list):
        raise InvalidInput(f"{name} must be an array, not {_show(value)}")
    if len(value) > MAX_ITEMS:
        raise InvalidInput(f"{name} has {len(value)} items; at most {MAX_ITEMS}")
    return [check(f"{name}[{i}]", items, item) for i, item in enumerate(value)]


def _object(name: str, schema: Mapping[str, Any], value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInput(f"{name} must be an object, not {_show(value)}")
    properties = schema.get("properties")
    if properties is None:  # open: any JSON values, within bounds
        if nesting_depth(value, MAX_DEPTH) > MAX_DEPTH:
            raise InvalidInput(f"{name} is nested more than {MAX_DEPTH} levels deep")
        if not all(isinstance(k, str) for k in value):
            raise InvalidInput(f"{name} must have string keys")
        return dict(value)
    unknown = [k for k in value if k not in properties]
    if unknown:
        raise InvalidInput(f"{name}: unknown field {unknown[0]!r}; accepted: {', '.join(properties)}")
    return {k: check(f"{name}.{k}", properties[k], v) for k, v in value.items() if v is not None}
