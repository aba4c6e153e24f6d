"""`watch`: the background indexer (vaultmem/daemon/)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.output import clean, emit


def _render(con: Any, data: dict[str, Any]) -> None:
    # The socket lives under the vault, whose path is data ("[notes]/…" is not markup).
    if "stopped" in data:
        line = f"watcher stopped (pid {data['pid']})" if data["stopped"] else "no watcher running"
    elif data.get("already_running"):
        line = f"watcher already running, pid {data['pid']}, socket {clean(data['socket'], inline=True)}"
    else:
        line = f"watcher running, pid {data['pid']}, socket {clean(data['socket'], inline=True)}"
    con.print(line, markup=False)


def register(app: typer.Typer) -> None:
    @app.command("watch")
    def watch(
        ctx: typer.Context,
        detach: Annotated[
            bool, typer.Option("--detach", help="Run in the background; return once it answers.")
        ] = False,
        stop: Annotated[bool, typer.Option("--stop", help="Stop the running watcher (exit 0 if none runs).")] = False,
        rescan_interval: Annotated[
            float, typer.Option("--rescan-interval", help="Seconds between full rescans that heal missed events.")
        ] = 60.0,
        no_events: Annotated[
            bool,
            typer.Option(
                "--no-events",
                help="Take no file events; find changes by rescans alone (a network share that sends none).",
            ),
        ] = False,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Keep every index in step with the files, and serve other commands while running.

        In the foreground it runs until Ctrl-C or SIGTERM; --detach starts it in the
        background (log: .vaultmem/watcher.log); --stop ends it. While it runs it owns the
        indexes: search, get, query, reference, status and index go through it, and write
        commands wait (up to 10 s) until it has indexed what they wrote."""
        from vaultmem.daemon import control
        from vaultmem.errors import InvalidInput, UsageError

        if detach and stop:
            raise UsageError("use --detach or --stop, not both")
        if rescan_interval < 1:  # out of range: invalid input, as every number (cli/main.py)
            raise InvalidInput("--rescan-interval must be at least 1 second")
        root = open_app(ctx, vault, None).root
        if stop:
            result = control.stop(root)
        elif detach:
            from vaultmem.cli.serve import detached_argv

            result = control.start_detached(root, detached_argv(root, rescan_interval, events=not no_events))
        else:
            import os

            from vaultmem.cli.serve import command_runner
            from vaultmem.daemon.runner import Settings, Watcher, configure_logging

            os.umask(0o077)  # this process makes derived files only: each owner-only (0600)
            configure_logging(root, to_stderr=True)
            watcher = Watcher(root, command_runner, Settings(rescan_s=rescan_interval, events=not no_events))
            watcher.run()
            result = {
                "stopped": True,
                "pid": watcher.snapshot()["pid"],
                "reconciles": watcher.reconciles,
                "served": watcher.served,
            }
        emit(result, json_mode(ctx, json_), _render)
