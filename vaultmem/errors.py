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
