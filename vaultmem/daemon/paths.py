"""Where a vault's watcher keeps its files. Stdlib only: the CLI's fast path imports this.

The socket lives at .vaultmem/watcher.sock unless that path does not fit AF_UNIX (108 bytes
with the NUL); then it gets a short path in $XDG_RUNTIME_DIR or /tmp named after a hash of
the vault path, and watcher.json records where.
"""

from __future__ import annotations

import os

from vaultmem.paths import CONFIG_NAME as CONFIG_NAME  # the names: vaultmem/paths.py
from vaultmem.paths import STATE_DIR as STATE_DIR
from vaultmem.paths import WATCHER_SOCKET, WATCHER_STATUS

MAX_SOCKET_BYTES = 107


def state_file(root: str, name: str) -> str:
    return os.path.join(root, STATE_DIR, name)


def fits(path: str) -> bool:
    return len(os.fsencode(path)) <= MAX_SOCKET_BYTES


def bind_path(root: str) -> str:
    """The socket path a new watcher binds."""
    path = state_file(root, WATCHER_SOCKET)
    if fits(path):
        return path
    import hashlib

    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and fits(os.path.join(runtime, f"vaultmem-{digest}.sock")):
        return os.path.join(runtime, f"vaultmem-{digest}.sock")
    return f"/tmp/vaultmem-{os.getuid()}-{digest}.sock"


def read_status(root: str) -> dict[str, object] | None:
    import json  # not at the top: the forwarding client never needs it (~4 ms)

    try:
        with open(state_file(root, WATCHER_STATUS), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def connect_path(root: str) -> str | None:
    """The socket a client tries: the default one, or the short path watcher.json records."""
    path = state_file(root, WATCHER_SOCKET)
    if fits(path):
        return path
    recorded = (read_status(root) or {}).get("socket")
    return recorded if isinstance(recorded, str) else None
