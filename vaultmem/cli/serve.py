"""The CLI's side of the watcher: what it runs forwarded command lines with, and
`python -m vaultmem.cli.serve --vault ROOT [--rescan-interval S]`, the process
`watch --detach` starts.

The watcher (vaultmem/daemon) never imports the CLI; the `watch` command and this entry
point hand it `command_runner`. The process logs to .vaultmem/watcher.log and exits with the
vaultmem exit code of a failure (6 when another watcher or indexer holds the vault).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from vaultmem.errors import VaultmemError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vaultmem.daemon.bridge import CommandRunner


def command_runner() -> CommandRunner:
    """Forwarded command lines run through the very Typer app the CLI runs, converted to
    its click command once (Typer rebuilds it on every call)."""
    from functools import partial

    import typer.main

    from vaultmem.cli.main import app
    from vaultmem.daemon.bridge import run_cli

    return partial(run_cli, typer.main.get_command(app))


def detached_argv(
    root: Path,
    rescan_s: float,
    idle_exit_s: float | None = None,
    unload_s: float | None = None,
    events: bool = True,
    idle_since_s: float | None = None,
) -> list[str]:
    """The command line of a watcher in the background (`main` below)."""
    argv = [sys.executable, "-m", "vaultmem.cli.serve", "--vault", str(root), "--rescan-interval", str(rescan_s)]
    if not events:
        argv.append("--no-events")
    if idle_exit_s is not None:
        argv += ["--idle-exit", str(idle_exit_s)]
        if unload_s is not None and unload_s < idle_exit_s:
            argv += ["--unload-after", str(unload_s)]
    # a watcher started afresh after unloading: lean, and already idle this long
    return argv if idle_since_s is None else [*argv, "--lean", "--idle-since", f"{idle_since_s:.1f}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vaultmem.cli.serve")
    parser.add_argument("--vault", required=True)
    parser.add_argument("--rescan-interval", type=float, default=60.0)
    parser.add_argument("--idle-exit", type=float, default=None, help="exit after this many seconds without requests")
    parser.add_argument("--no-events", action="store_true", help="find changes by rescans alone")
    parser.add_argument(
        "--unload-after", type=float, default=None, help="start afresh without the model after this many idle seconds"
    )
    parser.add_argument(
        "--lean", action="store_true", help="load the model and decode postings at the first request, not at start"
    )
    parser.add_argument("--idle-since", type=float, default=0.0, help="seconds already idle (with --lean)")
    args = parser.parse_args(argv)
    from vaultmem.daemon.runner import AnotherWatcher, Settings, Watcher, configure_logging

    root = Path(args.vault).resolve()
    os.umask(0o077)  # a watcher makes derived files only (never a note): each owner-only (0600)
    configure_logging(root, to_stderr=False)
    try:
        settings = Settings(
            rescan_s=args.rescan_interval,
            idle_exit_s=args.idle_exit,
            events=not args.no_events,
            unload_after_s=args.unload_after,
            lean=args.lean,
            idle_since_s=max(0.0, args.idle_since),
        )
        watcher = Watcher(root, command_runner, settings)
        watcher.run()
    except AnotherWatcher as exc:
        if args.idle_exit is None:
            logging.getLogger("vaultmem.watcher").error("%s", exc.message)
            return exc.exit_code
        # Started on demand (cli/autostart.py), and another process's watcher won the race:
        # the vault is watched, which is all that was asked for.
        logging.getLogger("vaultmem.watcher").info("%s: leaving the vault to it", exc.message)
        return 0
    except VaultmemError as exc:
        logging.getLogger("vaultmem.watcher").error("%s", exc.message)
        return exc.exit_code
    if watcher.unloading is not None:
        # Idle with the model loaded: start afresh in this very process (same pid), lean.
        # Python gives little of the model's memory back to the system (torch's libraries
        # alone hold ~200 MB once imported); a new image holds none of it.
        logging.shutdown()
        argv = detached_argv(
            root, args.rescan_interval, args.idle_exit, args.unload_after, not args.no_events, watcher.unloading
        )
        os.execv(argv[0], argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
