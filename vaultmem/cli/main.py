"""The Typer application. Errors are translated here, once, into SPEC §6 exit codes."""

from __future__ import annotations

import sys
from typing import Any

import click
import typer
from typer.core import TyperGroup

from vaultmem import __version__
from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt
from vaultmem.errors import VaultmemError


class VaultmemGroup(TyperGroup):
    """Runs a command and turns every outcome into an exit code and an error document."""

    def main(  # type: ignore[override]
        self,
        args: list[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        from vaultmem.cli import output

        argv = list(sys.argv[1:] if args is None else args)
        json_mode = "--json" in argv
        try:
            rv = super().main(argv, prog_name or "vaultmem", complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
        except click.exceptions.Abort:
            output.error("interrupted", "interrupted", json_mode)
            code = 130
        except click.ClickException as exc:
            output.error("usage", exc.format_message(), json_mode)
            if not json_mode and isinstance(exc, click.UsageError) and exc.ctx is not None:
                sys.stderr.write(f"Try '{exc.ctx.command_path} --help' for help.\n")
            code = 2
        except VaultmemError as exc:
            details = {k: v for k, v in exc.details.items() if v is not None}
            output.error(exc.code, exc.message, json_mode, details)
            code = exc.exit_code
        except BrokenPipeError:
            code = 1
        except KeyboardInterrupt:
            output.error("interrupted", "interrupted", json_mode)
            code = 130
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(
    cls=VaultmemGroup,
    name="vaultmem",
    help="Long-term memory for AI agents and their people, kept as a vault of plain markdown files.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"vaultmem {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def root(
    ctx: typer.Context,
    vault: VaultOpt = None,
    ghost: GhostOpt = None,
    json_: JsonOpt = False,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Options given here apply to every command (a command's own flags win)."""
    ctx.obj = {"vault": vault, "ghost": ghost, "json": json_}


def _register() -> None:
    from vaultmem.cli import inbox, lint, notes, vaults

    for module in (vaults, notes, inbox, lint):
        module.register(app)


_register()
