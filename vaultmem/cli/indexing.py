"""`index [--full]` and `status`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.output import emit, plain, progress_hook, record, safe
from vaultmem.models import IndexReport, StatusReport


def _render_index(con: Any, data: IndexReport) -> None:
    """Counts, then one line per file skipped or degraded (through a pipe: tab-separated
    `skipped path message`)."""
    from rich.text import Text

    con.print(
        f"added {data.added}, updated {data.updated}, deleted {data.deleted}, "
        f"moved {data.moved}, unchanged {data.unchanged} in {data.seconds:.2f} s",
        markup=False,
    )
    if data.embedded_chunks or data.kept_chunks:
        kept = f" ({data.kept_chunks} unchanged kept)" if data.kept_chunks else ""
        con.print(f"embedded {data.embedded_chunks} chunks of {data.embedded_notes} notes{kept}", markup=False)
    for err in data.errors:
        if plain(con):
            record(con, "skipped", err["path"], err["message"])
        else:
            con.print(Text.assemble(("skipped or degraded", "red"), " ", safe(err["path"]), ": ", safe(err["message"])))


def _render_status(con: Any, data: StatusReport) -> None:
    """Through a pipe the same lines, uncoloured, and problems as tab-separated
    `problem path message`."""
    from rich.text import Text

    notes, index, watcher = data.notes, data.index, data.watcher
    scopes = ", ".join(f"{k} {v}" for k, v in sorted(notes["by_scope"].items()))
    con.print(Text.assemble(safe(data.vault, "bold"), f": {notes['total']} notes ({scopes})"))
    state = "fresh" if index["fresh"] else f"{index['pending']} pending"
    emb = index["embedding"]
    con.print(safe(f"index: {state}; embedding: {emb['backend']} {emb['model'] or ''} ({emb['reason']})"))
    con.print("watcher: " + (f"running, pid {watcher['pid']}" if watcher["running"] else "not running"), markup=False)
    for err in index["errors"]:
        if plain(con):
            record(con, "problem", err["path"], err["message"])
        else:
            con.print(Text.assemble(("problem", "red"), " ", safe(err["path"]), ": ", safe(err["message"])))


def register(app: typer.Typer) -> None:
    @app.command("index")
    def index(
        ctx: typer.Context,
        full: Annotated[bool, typer.Option("--full", help="Rebuild every index from nothing.")] = False,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Reconcile the vault into Whoosh, Chroma and the link graph."""
        from vaultmem.services.indexing import run_index

        with progress_hook(True) as hook:
            app_ = open_app(ctx, vault, ghost, progress=hook)
            report = run_index(app_, full=full)
        # After the bar is gone: while it draws, rich routes stdout through its (transient)
        # display, and a summary printed then vanished with it.
        emit(report, json_mode(ctx, json_), _render_index)

    @app.command("status")
    def status(ctx: typer.Context, vault: VaultOpt = None, ghost: GhostOpt = None, json_: JsonOpt = False) -> None:
        """Notes per scope, index freshness, embedding backend, watcher."""
        from vaultmem.services.indexing import status as get_status

        emit(get_status(open_app(ctx, vault, ghost)), json_mode(ctx, json_), _render_status)
