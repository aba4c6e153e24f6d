"""Bearer tokens of `vaultmem mcp --http`, one or more per ghost.

`add` makes a random token, returns it once, and stores only its SHA-256 (with the ghost and
when it was made) in `.vaultmem/mcp_tokens.json`, mode 0600. `ghost_for` answers which
ghost a presented token belongs to, comparing hashes in constant time. Deleting the file
revokes every token.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from vaultmem.clock import iso
from vaultmem.clock import now as utc_now
from vaultmem.config import load_config, validate_ghost_name
from vaultmem.errors import InvalidInput
from vaultmem.paths import StatePaths

PREFIX = "vmt_"


def _digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path} is not a token file vaultmem can read: {exc}") from None
    tokens = data.get("tokens") if isinstance(data, dict) else None
    return [t for t in tokens if isinstance(t, dict)] if isinstance(tokens, list) else []


def add_token(root: Path, ghost: str) -> dict[str, Any]:
    """A new token for `ghost` (a registered ghost): {ghost, token, created, file}."""
    validate_ghost_name(ghost)
    if ghost not in load_config(root).ghosts:
        raise InvalidInput(f"unknown ghost {ghost!r}: register it with `vaultmem ghost add {ghost}`")
    path = StatePaths(root).mcp_tokens
    path.parent.mkdir(parents=True, exist_ok=True)
    token = PREFIX + secrets.token_urlsafe(32)
    created = iso(utc_now())
    tokens = [*_load(path), {"ghost": ghost, "hash": _digest(token), "created": created}]
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"tokens": tokens}, fh, indent=1)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return {"ghost": ghost, "token": token, "created": created, "file": str(path)}


def ghost_for(root: Path, token: str | None) -> str | None:
    """The ghost the token was made for, or None (no token, unknown, revoked)."""
    if not token:
        return None
    digest = _digest(token)
    found = None
    for entry in _load(StatePaths(root).mcp_tokens):
        if hmac.compare_digest(str(entry.get("hash", "")), digest):
            found = entry.get("ghost")
    return found if isinstance(found, str) else None
