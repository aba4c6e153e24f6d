"""`init` and `ghost add|list`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, globals_of, json_mode, open_app
from vaultmem.cli.output import emit


def _render_init(con: Any, data: dict[str, Any]) -> None:
    from rich.markup import escape

    con.print(f"Created vault at [bold]{escape(data['vault'])}[/]")
    if data["ghosts"]:
        con.print("Ghosts: " + ", ".join(data["ghosts"]))
    con.print("Next: open it in Obsidian, `git init` it, and try `vaultmem note create --help`.")


def _render_ghosts(con: Any, data: dict[str, Any]) -> None:
    con.print("\n".join(data["ghosts"]) if data["ghosts"] else "(no ghosts registered)")


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init(
        ctx: typer.Context,
        path: Annotated[Path | None, typer.Argument(help="Folder for the new vault (default: current folder).")] = None,
        ghost: Annotated[list[str] | None, typer.Option("--ghost", help="Register a ghost (repeatable).")] = None,
        vault: VaultOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Create a new vault from the template: folders, vaultmem.toml, .gitignore, examples."""
        from vaultmem.services.vaults import init_vault

        target = path or vault or globals_of(ctx).get("vault") or Path.cwd()
        ghosts = list(ghost or [])
        if not ghosts and globals_of(ctx).get("ghost"):
            ghosts = [globals_of(ctx)["ghost"]]
        emit(init_vault(Path(target), ghosts), json_mode(ctx, json_), _render_init)

    ghost_app = typer.Typer(help="Register and list ghosts (agent identities).", no_args_is_help=True)
    app.add_typer(ghost_app, name="ghost")

    @ghost_app.command("add")
    def ghost_add(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="Ghost name: a-z, 0-9, '_' and '-'.")],
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Register a ghost in vaultmem.toml and create its folders."""
        from vaultmem.services.vaults import add_ghost

        app_ = open_app(ctx, vault, None)
        emit(add_ghost(app_.root, name), json_mode(ctx, json_), _render_ghosts)

    @ghost_app.command("list")
    def ghost_list(ctx: typer.Context, vault: VaultOpt = None, ghost: GhostOpt = None, json_: JsonOpt = False) -> None:
        """List registered ghosts."""
        from vaultmem.services.vaults import list_ghosts

        app_ = open_app(ctx, vault, None)
        emit(list_ghosts(app_.root), json_mode(ctx, json_), _render_ghosts)
