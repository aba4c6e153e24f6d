"""`mcp`: the memory tools over the Model Context Protocol; `token add`: its HTTP tokens."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, globals_of, json_mode
from vaultmem.cli.output import clean, emit


def _render_token(con: Any, data: dict[str, Any]) -> None:
    import sys

    # The token itself is the data (stdout); how to use it is talk (stderr).
    con.file.write(data["token"] + "\n")
    sys.stderr.write(
        f"token for ghost {clean(data['ghost'], inline=True)}: shown once, only its hash is kept "
        f"({clean(data['file'], inline=True)}). Send it as `Authorization: Bearer <token>`.\n"
    )


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp(
        ctx: typer.Context,
        http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")] = False,
        host: Annotated[str, typer.Option("--host", help="Address to bind with --http.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", help="Port with --http.")] = 8765,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
    ) -> None:
        """Serve the memory tools over the Model Context Protocol (stdio, or HTTP with --http).

        Over stdio the tools act as the ghost given here (--ghost or $VAULTMEM_GHOST); over
        HTTP every request must carry a bearer token from `vaultmem token add GHOST` and
        acts as that token's ghost. Tools: memory_search, memory_get, memory_capture,
        reference_search, memory_query, memory_write, memory_note_create/update/validate/
        comment/delete, memory_save, memory_update, memory_delete."""
        import os

        from vaultmem.config import find_vault, load_config
        from vaultmem.errors import InvalidInput, UsageError
        from vaultmem.services.app import _checked_ghost

        g = globals_of(ctx)
        root = find_vault(vault or g.get("vault"))
        who = ghost or g.get("ghost") or os.environ.get("VAULTMEM_GHOST") or None
        if http:
            if ghost or g.get("ghost"):
                raise UsageError("over HTTP the ghost comes from each request's token, not --ghost")
            who = None
        else:
            _checked_ghost(load_config(root), who)  # an unknown ghost fails now, not at every call
        if not 0 < port < 65536:
            raise InvalidInput(f"--port must be between 1 and 65535, not {port}")
        from vaultmem.cli.autostart import start_in_background

        # The watcher owns the indexes; the server forwards to it. Not waited for here:
        # `initialize` is answered meanwhile, and the first call that needs it waits.
        starting = start_in_background(root)
        if http:
            from vaultmem.mcp.http import serve_http

            serve_http(root, host, port, starting)
        else:
            from vaultmem.mcp.server import serve_stdio

            serve_stdio(root, who, starting)

    token_app = typer.Typer(help="Bearer tokens for `mcp --http`, one per ghost.", no_args_is_help=True)
    app.add_typer(token_app, name="token")

    @token_app.command("add")
    def add(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="The ghost the token acts as.")],
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Make a new token for GHOST and print it once (only its hash is stored under .vaultmem/)."""
        from vaultmem.config import find_vault
        from vaultmem.services.tokens import add_token

        root = find_vault(vault or globals_of(ctx).get("vault"))
        emit(add_token(root, name), json_mode(ctx, json_), _render_token)
