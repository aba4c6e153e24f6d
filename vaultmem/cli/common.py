"""Options every command takes, and the one way a command opens the vault."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from vaultmem.services.app import App

VaultOpt = Annotated[
    Path | None,
    typer.Option("--vault", help="Vault folder. Default: $VAULTMEM_VAULT, else the nearest folder holding vaultmem.toml.", show_default=False),
]
GhostOpt = Annotated[
    str | None,
    typer.Option("--ghost", help="Acting ghost (agent identity). Default: $VAULTMEM_GHOST.", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout.")]


def globals_of(ctx: typer.Context) -> dict[str, Any]:
    root = ctx.find_root()
    return root.obj if isinstance(root.obj, dict) else {}


def json_mode(ctx: typer.Context, flag: bool) -> bool:
    return flag or bool(globals_of(ctx).get("json"))


def open_app(ctx: typer.Context, vault: Path | None, ghost: str | None, progress: Any = None) -> App:
    from vaultmem.cli.output import notice
    from vaultmem.services.app import App

    g = globals_of(ctx)
    app = App.open(vault or g.get("vault"), ghost or g.get("ghost"), notice=notice, progress=progress)
    ctx.call_on_close(app.close)
    return app


def read_text_arg(value: str | None, what: str) -> str | None:
    """`-` means stdin; anything else is the text itself."""
    if value == "-":
        return sys.stdin.read()
    return value


def read_file_arg(path: str, what: str) -> str:
    from vaultmem.errors import InvalidInput

    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {what} {path!r}: {exc}") from None
