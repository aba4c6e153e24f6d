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


class ChangedOnDisk(Conflict):
    """The file changed between a write's read and its rename: another writer was quicker.
    An addition (append, comment) reads again and retries; a replace reports it."""


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


class NotWritable(VaultmemError):
    """The vault, or the folder of its derived state, cannot be written (a read-only mount,
    another user's checkout): reads work, writes say so."""

    code = "not_writable"


class DiskFull(VaultmemError):
    """No space left where a write had to go. Nothing is half-written (writes are atomic);
    it works again once there is room."""

    code = "disk_full"


_READ_ONLY = {30: "read-only file system", 13: "permission denied", 1: "operation not permitted"}  # EROFS EACCES EPERM
_FULL = {28: "no space left on the device", 122: "disk quota exceeded"}  # ENOSPC EDQUOT


def environment_error(exc: BaseException) -> VaultmemError | None:
    """The typed error for a failure of the machine rather than of vaultmem — a read-only or
    full disk, a file it may not touch, from the OS or from SQLite — or None for anything
    else."""
    if isinstance(exc, (DiskFull, NotWritable)):
        return exc
    errno = getattr(exc, "errno", None)
    where = getattr(exc, "filename", None)
    at = f" {where}" if where else ""
    if errno in _FULL:
        return DiskFull(f"cannot write{at}: {_FULL[errno]}; nothing was half-written: retry once there is room")
    if errno in _READ_ONLY:
        return NotWritable(f"cannot change{at}: {_READ_ONLY[errno]}")
    # SQLite (the state db, Chroma's) and the libraries above it carry no errno: the message.
    text = str(exc).lower()
    if "database or disk is full" in text or "no space left on device" in text:
        return DiskFull(f"cannot write the index: {exc}; retry once there is room")
    if "readonly database" in text or "read-only file system" in text:
        return NotWritable(f"cannot write the index: {exc}")
    return None
