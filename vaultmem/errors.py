"""The error tree. Each error carries the exit code of SPEC §6 and a stable code string.

Library code raises these with context; the CLI edge translates them once into exit codes
and the `{"error": {"code", "message"}}` JSON object.
"""

from __future__ import annotations

from typing import Any


class VaultmemError(Exception):
    exit_code = 1
    code = "internal"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        out.update(self.details)
        return out


class UsageError(VaultmemError):
    exit_code = 2
    code = "usage"


class NotFound(VaultmemError):
    """Also raised for notes the caller may not see: the two are indistinguishable."""

    exit_code = 3
    code = "not_found"


class Conflict(VaultmemError):
    exit_code = 4
    code = "conflict"


class InvalidInput(VaultmemError):
    exit_code = 5
    code = "invalid_input"


class IndexBusy(VaultmemError):
    exit_code = 6
    code = "index_busy"


class Ambiguous(VaultmemError):
    exit_code = 7
    code = "ambiguous"


class VaultNotFound(VaultmemError):
    """No vault could be located; a usage problem rather than a missing note."""

    exit_code = 2
    code = "no_vault"


_BY_CODE: dict[str, type[VaultmemError]] = {
    cls.code: cls for cls in (UsageError, NotFound, Conflict, InvalidInput, IndexBusy, Ambiguous, VaultNotFound)
}


def error_from(data: Any) -> VaultmemError:
    """The typed error an `{"code", "message", ...}` object stands for (`to_dict`'s inverse):
    a use case run in another process (the watcher) fails here as it failed there."""
    if not isinstance(data, dict):
        return VaultmemError(f"unreadable error: {data!r}")
    code, message = data.get("code"), data.get("message")
    details = {k: v for k, v in data.items() if k not in ("code", "message")}
    text = str(message) if message is not None else "failed"
    known = _BY_CODE.get(code) if isinstance(code, str) else None
    if known is not None:
        return known(text, **details)
    error = VaultmemError(text, **details)
    if isinstance(code, str):
        error.code = code  # a code of its own (index_busy's kin, socket_unavailable ...): kept
    return error
