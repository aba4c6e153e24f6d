"""`mcp`: the memory tools over the Model Context Protocol; `token add|list|revoke`: its HTTP tokens."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, globals_of, json_mode
from vaultmem.cli.output import clean, emit, plain, record, safe
from vaultmem.models import TokenCreated, TokenList, TokenRevoked


def _render_token(con: Any, data: TokenCreated) -> None:
    import sys

    # The token itself is the data (stdout); how to use it is talk (stderr).
    con.file.write(data.token + "\n")
    sys.stderr.write(
        f"token {data.id} for ghost {clean(data.ghost, inline=True)}: shown once, only its hash is kept "
        f"({clean(data.file, inline=True)}). Send it as `Authorization: Bearer <token>`; "
        f"`vaultmem token revoke {data.id}` ends it.\n"
    )


def _render_tokens(con: Any, data: TokenList) -> None:
    """Through a pipe `id<TAB>ghost<TAB>created<TAB>last used` (`-` when never used)."""
    from rich.table import Table

    if plain(con):
        for t in data.tokens:
            record(con, t.id, t.ghost, t.created, t.last_used or "-")
        return
    if not data.tokens:
        con.print("No tokens. `vaultmem token add GHOST` makes one.")
        return
    table = Table("id", "ghost", "created", "last used", box=None, padding=(0, 2))
    for t in data.tokens:
        table.add_row(t.id, safe(t.ghost), t.created, t.last_used or "never")
    con.print(table)


def _render_revoked(con: Any, data: TokenRevoked) -> None:
    from rich.text import Text

    if plain(con):
        record(con, data.id, data.ghost)
        return
    con.print(Text.assemble("Revoked token ", data.id, " of ghost ", safe(data.ghost)))


def _token_scope(ctx: typer.Context, vault: Any, ghost: str | None) -> tuple[Any, str | None]:
    """The vault, and the acting ghost (--ghost, else $VAULTMEM_GHOST): a person (no ghost)
    manages every token; a ghost only its own."""
    import os

    from vaultmem.config import load_config
    from vaultmem.services.app import _checked_ghost
    from vaultmem.vault.nesting import opened_vault

    g = globals_of(ctx)
    root = opened_vault(vault or g.get("vault"))
    acting = ghost or g.get("ghost") or os.environ.get("VAULTMEM_GHOST") or None
    return root, _checked_ghost(load_config(root), acting)


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp(
        ctx: typer.Context,
        http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")] = False,
        host: Annotated[str, typer.Option("--host", help="Address to bind with --http.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", help="Port with --http.")] = 8765,
        max_sessions: Annotated[
            int, typer.Option("--max-sessions", help="With --http: open sessions at most (then 503).")
        ] = 1000,
        sessions_per_token: Annotated[
            int, typer.Option("--sessions-per-token", help="With --http: open sessions per token at most.")
        ] = 100,
        session_idle: Annotated[
            float, typer.Option("--session-idle", help="With --http: seconds without a request that end a session.")
        ] = 1800.0,
        allow_host: Annotated[
            list[str] | None,
            typer.Option(
                "--allow-host",
                help="With --http: also answer requests with this Host header (NAME, NAME:PORT or NAME:*), "
                "e.g. a reverse proxy's public name. Repeatable; [mcp] allowed_hosts in vaultmem.toml adds more.",
            ),
        ] = None,
        allow_origin: Annotated[
            list[str] | None,
            typer.Option(
                "--allow-origin",
                help="With --http: also answer requests with this Origin header (http:// or https:// and a host, "
                "no path). Repeatable; [mcp] allowed_origins in vaultmem.toml adds more.",
            ),
        ] = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,  # every command takes it: errors before serving come as JSON
    ) -> None:
        """Serve the memory tools over the Model Context Protocol (stdio, or HTTP with --http).

        Over stdio the tools act as the ghost given here (--ghost or $VAULTMEM_GHOST); over
        HTTP every request must carry a bearer token from `vaultmem token add GHOST` and
        acts as that token's ghost, each session bound to the token that opened it; requests
        are answered for the server's own address and the --allow-host/--allow-origin names
        only, and GET /health tells a probe whether it can serve. Tools:
        memory_search, memory_get, memory_capture, reference_search, memory_query,
        memory_write, memory_note_create/update/validate/comment/delete, memory_save,
        memory_update, memory_delete."""
        import os

        from vaultmem.config import load_config
        from vaultmem.errors import InvalidInput, UsageError
        from vaultmem.services.app import _checked_ghost
        from vaultmem.vault.nesting import opened_vault

        g = globals_of(ctx)
        root = opened_vault(vault or g.get("vault"))
        who = ghost or g.get("ghost") or os.environ.get("VAULTMEM_GHOST") or None
        if http:
            if ghost or g.get("ghost"):
                raise UsageError("over HTTP the ghost comes from each request's token, not --ghost")
            who = None
        elif allow_host or allow_origin:
            raise UsageError("--allow-host and --allow-origin apply to --http only")
        else:
            _checked_ghost(load_config(root), who)  # an unknown ghost fails now, not at every call
        if not 0 < port < 65536:
            raise InvalidInput(f"--port must be between 1 and 65535, not {port}")
        if max_sessions < 1 or sessions_per_token < 1 or not 0 < session_idle < float("inf"):
            raise InvalidInput("--max-sessions, --sessions-per-token and --session-idle must be positive")
        allowed = None
        if http:
            from vaultmem.mcp.http import allow_list

            allowed = allow_list(load_config(root).mcp, host, port, allow_host or [], allow_origin or [])
        from vaultmem.cli.autostart import start_in_background

        # The watcher owns the indexes; the server forwards to it. Not waited for here:
        # `initialize` is answered meanwhile, and the first call that needs it waits.
        starting = start_in_background(root)
        if http:
            from vaultmem.mcp.http import SessionLimits, serve_http

            limits = SessionLimits(max_sessions, sessions_per_token, session_idle)
            serve_http(root, host, port, starting, limits, allowed)
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
        """Make a new token for GHOST and print it once (only its hash is kept, in .vaultmem-tokens.json)."""
        from vaultmem.services.tokens import add_token

        root, acting = _token_scope(ctx, vault, ghost)
        emit(add_token(root, name, acting), json_mode(ctx, json_), _render_token)

    @token_app.command("list")
    def list_(
        ctx: typer.Context,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """List the tokens: id, ghost, when made, when last used (never the token itself)."""
        from vaultmem.services.tokens import list_tokens

        root, acting = _token_scope(ctx, vault, ghost)
        emit(list_tokens(root, acting), json_mode(ctx, json_), _render_tokens)

    @token_app.command("revoke")
    def revoke(
        ctx: typer.Context,
        token_id: Annotated[str, typer.Argument(help="The token's id, as `token list` shows it.")],
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Revoke one token: a server refuses it (401) from its next request on."""
        from vaultmem.services.tokens import revoke_token

        root, acting = _token_scope(ctx, vault, ghost)
        emit(revoke_token(root, token_id, acting), json_mode(ctx, json_), _render_revoked)
