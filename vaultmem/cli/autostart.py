"""The always-warm CLI: a read command that finds no watcher starts one in the background
and is answered by it; that watcher exits after `[watch] idle_exit_minutes` (default 30)
without requests. `VAULTMEM_NO_AUTOSTART=1` or `[watch] autostart = false` turns it off.

Only the path where no watcher answers comes here (entry.py), so the cost of reading the
config is paid only when a command would otherwise run cold.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

# Reads worth a warm watcher: the first call pays the start, the next ones ~45 ms.
AUTOSTART_COMMANDS = frozenset(("search", "get", "query", "reference"))
RESCAN_S = 60.0


def _idle_exit_s(root: Path, environ: os._Environ[str] | dict[str, str]) -> tuple[float, float] | None:
    """Seconds of idleness after which an autostarted watcher exits, and after which it
    gives back the model's memory; None when autostart is off."""
    if environ.get("VAULTMEM_NO_AUTOSTART", "") not in ("", "0"):
        return None
    from vaultmem.config import load_config
    from vaultmem.errors import VaultmemError

    try:
        config = load_config(root, environ)
    except VaultmemError:
        return None  # the command itself reports a broken config
    if not config.watch_autostart:
        return None
    return config.watch_idle_minutes * 60, config.watch_unload_minutes * 60


def start_in_background(root: Path) -> subprocess.Popen[bytes] | None:
    """Start a watcher for `root` without waiting for it, unless one runs or autostart is
    off. The started process, or None."""
    from vaultmem.daemon.client import ping

    idle = _idle_exit_s(root, os.environ)
    if idle is None or ping(str(root), timeout_s=0.5) is not None:
        return None
    import subprocess

    from vaultmem.cli.serve import detached_argv
    from vaultmem.paths import StatePaths

    files = StatePaths(root)
    files.make()
    with open(files.watcher_log, "ab") as log:
        return subprocess.Popen(
            detached_argv(root, RESCAN_S, *idle),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=str(root),
            start_new_session=True,
        )


def start_and_forward(argv: list[str]) -> int | None:
    """For a read command nobody answered: start a watcher, wait until it answers, and
    forward the command to it. None (run it here) when autostart is off or it failed."""
    from vaultmem.daemon.client import find_root, forward, forwardable

    if forwardable(argv) not in AUTOSTART_COMMANDS:
        return None
    try:
        found = find_root(argv, os.environ, os.getcwd())
    except OSError:
        return None
    if found is None:
        return None
    root = Path(found)
    idle = _idle_exit_s(root, os.environ)
    if idle is None:
        return None
    from vaultmem.cli.serve import detached_argv
    from vaultmem.daemon import control
    from vaultmem.errors import VaultmemError

    try:
        control.start_detached(root, detached_argv(root, RESCAN_S, *idle))
    except VaultmemError:
        return None  # e.g. an indexer holds the lock: the command runs here and says so
    return forward(argv)
