"""`init` and `ghost add|list`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, globals_of, json_mode
from vaultmem.cli.output import clean, emit, safe
from vaultmem.models import GhostsResult, InitResult
from vaultmem.paths import STATE_DIR

APPENDED = {".gitignore": f"{STATE_DIR}/", ".gitattributes": "the write journal's merge rule"}


def _render_init(con: Any, data: InitResult) -> None:
    """What init made, and in a folder that held notes, what it added and left alone."""
    from rich.text import Text

    def listing(paths: list[str]) -> str:
        return ", ".join(clean(p, inline=True) for p in paths)

    con.print(Text.assemble("Created vault at ", safe(data.vault, "bold")))
    if data.ghosts:
        con.print(Text("Ghosts: " + listing(data.ghosts)))
    con.print("Next: open it in Obsidian, `git init` it, and try `vaultmem note create --help`.", markup=False)
    if data.existing_notes:
        con.print(Text(f"Kept {data.existing_notes} existing note(s) as they were."))
    if data.added:
        con.print(Text(f"Added: {listing(data.added)}"))
    for path in data.appended:  # the line each got: .gitattributes' is no `.vaultmem/`
        con.print(Text(f"Appended {APPENDED.get(path, 'its line')} to: {listing([path])}"))
    if data.kept:
        con.print(Text("Already there, left alone: " + listing(data.kept)))
    if not data.examples:
        con.print(Text("No example notes added (run with --examples for them)."))


def _render_ghosts(con: Any, data: GhostsResult) -> None:
    from rich.text import Text

    names = [clean(g, inline=True) for g in data.ghosts]
    con.print(Text("\n".join(names) if names else "(no ghosts registered)"))


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init(
        ctx: typer.Context,
        path: Annotated[Path | None, typer.Argument(help="Folder for the new vault (default: current folder).")] = None,
        ghost: Annotated[list[str] | None, typer.Option("--ghost", help="Register a ghost (repeatable).")] = None,
        examples: Annotated[
            bool | None,
            typer.Option(
                "--examples/--no-examples",
                help="Add the example notes, README and lint hook (default: only in a folder without notes).",
            ),
        ] = None,
        vault: VaultOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Create a new vault from the template: folders, vaultmem.toml, .gitignore, examples.

        In a folder that already holds notes (an existing Obsidian vault), init adds only
        vaultmem.toml, the scope folders, the `.vaultmem/` rule in .gitignore and the write
        journal's merge rule in .gitattributes (each appended once to an existing file); no
        examples unless --examples. Existing notes and
        files are never changed. It lists what it added and what it kept. If vaultmem.toml
        already exists, init changes nothing and exits 4; use `vaultmem ghost add` to
        register more ghosts.
        """
        from vaultmem.services.vaults import init_vault

        target = path or vault or globals_of(ctx).get("vault") or Path.cwd()
        ghosts = list(ghost or [])
        if not ghosts and globals_of(ctx).get("ghost"):
            ghosts = [globals_of(ctx)["ghost"]]
        emit(init_vault(Path(target), ghosts, examples), json_mode(ctx, json_), _render_init)

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

        emit(add_ghost(_vault_root(ctx, vault), name), json_mode(ctx, json_), _render_ghosts)

    @ghost_app.command("list")
    def ghost_list(ctx: typer.Context, vault: VaultOpt = None, ghost: GhostOpt = None, json_: JsonOpt = False) -> None:
        """List registered ghosts."""
        from vaultmem.services.vaults import list_ghosts

        emit(list_ghosts(_vault_root(ctx, vault)), json_mode(ctx, json_), _render_ghosts)


def _vault_root(ctx: typer.Context, vault: Path | None) -> Path:
    """The vault `ghost add|list` work on. They act as no ghost: registering the ghost that
    $VAULTMEM_GHOST already names must not fail because it is not registered yet."""
    from vaultmem.vault.nesting import opened_vault

    return opened_vault(vault or globals_of(ctx).get("vault"))
