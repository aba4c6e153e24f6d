"""Where a vault's watcher keeps its files. Stdlib only: the CLI's fast path imports this.

The socket lives at .vaultmem/watcher.sock (inside the owner-only state folder) unless that
path does not fit AF_UNIX (108 bytes with the NUL); then it lives in a folder only this user
may enter — $XDG_RUNTIME_DIR when it is this user's and 0700, else /tmp/vaultmem-<uid>,
made 0700 and checked — named after a hash of the vault path, and watcher.json records
where. A socket anywhere else is never bound nor trusted: another local user must not be
able to take the name and receive a client's arguments, or answer for the watcher.
"""

from __future__ import annotations

import os

from vaultmem.paths import CONFIG_NAME as CONFIG_NAME  # the names: vaultmem/paths.py
from vaultmem.paths import STATE_DIR as STATE_DIR
from vaultmem.paths import WATCHER_SOCKET, WATCHER_STATUS, state_dir

MAX_SOCKET_BYTES = 107


def state_file(root: str, name: str) -> str:
    return os.path.join(state_dir(root)[0], name)


def fits(path: str) -> bool:
    return len(os.fsencode(path)) <= MAX_SOCKET_BYTES


def private(folder: str) -> bool:
    """Whether `folder` is a real folder (not a symlink) of this user that no one else may
    enter or change."""
    import stat

    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def private_folder() -> str | None:
    """This user's folder for sockets: $XDG_RUNTIME_DIR when private, else /tmp/vaultmem-<uid>,
    created 0700 when missing; None when neither is private (someone else made it first)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and private(runtime):
        return runtime
    folder = f"/tmp/vaultmem-{os.getuid()}"
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return folder if private(folder) else None


def bind_path(root: str) -> str | None:
    """The socket path a new watcher binds; None when a long vault path leaves no private
    place for it (the watcher then does not start)."""
    path = state_file(root, WATCHER_SOCKET)
    if fits(path):
        return path
    import hashlib

    folder = private_folder()
    if folder is None:
        return None
    path = os.path.join(folder, f"vaultmem-{hashlib.sha256(os.fsencode(root)).hexdigest()[:16]}.sock")
    return path if fits(path) else None


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
    if not isinstance(recorded, str) or not private(os.path.dirname(recorded)):
        return None  # a socket where others could have put it: never spoken to
    return recorded
