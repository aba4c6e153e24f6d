"""`lint [--fix]`: vault consistency for review and CI (exit 1 when errors are found)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.output import emit, notice, plain, record, safe
from vaultmem.models import LintReport


def _render(con: Any, data: LintReport) -> None:
    """A table on a terminal; through a pipe one tab-separated line per problem, `path
    severity code message` (and `path fixed id <id>` per id written, `path fixed comments
    <what>` per note whose comments were rewritten), the totals on stderr."""
    from rich.table import Table
    from rich.text import Text

    totals = f"{data.checked} notes checked: {data.errors} errors, {data.warnings} warnings"
    if plain(con):
        for p in data.problems:
            record(con, p.path, p.severity, p.code, p.message)
        for fixed in data.fixed or []:
            for what, value in _fixes(fixed):
                record(con, fixed["path"], "fixed", what, value)
        notice(totals)
        return
    if data.problems:
        table = Table("path", "severity", "code", "message", box=None)
        for p in data.problems:
            style = "red" if p.severity == "error" else "yellow"
            # Paths and messages are data (a file may be named "[red].md"), never markup.
            table.add_row(safe(p.path), Text(p.severity, style=style), safe(p.code), safe(p.message))
        con.print(table)
    for fixed in data.fixed or []:
        for what, value in _fixes(fixed):
            con.print(Text.assemble(("fixed", "green"), " ", safe(fixed["path"]), f": {what} ", safe(value)))
    con.print(totals, markup=False)


def _fixes(fixed: dict[str, str]) -> list[tuple[str, str]]:
    """What one `fixed` entry says was written: (`id`, the new id), (`comments`, how)."""
    return [(key, value) for key, value in fixed.items() if key != "path"]


def register(app: typer.Typer) -> None:
    @app.command("lint")
    def lint(
        ctx: typer.Context,
        fix: Annotated[
            bool,
            typer.Option(
                "--fix",
                help="Fix what it can: write missing ids, links Obsidian does not resolve by file name, older comments and zoned dates in their current form.",
            ),
        ] = False,
        staged: Annotated[
            bool, typer.Option("--staged", help="Check the notes staged for the next commit, as staged (a hook).")
        ] = False,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> int:
        """Check every note: front matter, scopes, ids, types, ranges, links."""
        from vaultmem.errors import InvalidInput
        from vaultmem.services.lint import lint_staged, lint_vault

        if fix and staged:
            raise InvalidInput("--fix changes files; --staged checks what git holds: use one")
        app_ = open_app(ctx, vault, ghost)
        result = lint_staged(app_) if staged else lint_vault(app_, fix=fix)
        emit(result, json_mode(ctx, json_), _render)
        return 1 if result.errors else 0
