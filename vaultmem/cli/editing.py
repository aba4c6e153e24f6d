"""`edit` and `diary`: open a note in the person's editor; add to the day's diary entry."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app, read_text_arg
from vaultmem.cli.output import emit, plain, record, safe
from vaultmem.models import EditResult


def run_editor(path: Path) -> None:
    """$VISUAL, else $EDITOR (a command line: `code --wait` works), on `path`; returns when
    it exits. Without either, or when it cannot start: invalid input (exit 5)."""
    import os
    import shlex
    import subprocess

    from vaultmem.cli.output import notice
    from vaultmem.errors import InvalidInput

    command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not command or not command.strip():
        raise InvalidInput("no editor: set $VISUAL or $EDITOR (e.g. export EDITOR=vim)")
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InvalidInput(f"cannot read the editor command {command!r}: {exc}") from None
    try:
        code = subprocess.call([*argv, str(path)])
    except OSError as exc:
        raise InvalidInput(f"cannot start the editor {argv[0]!r}: {exc.strerror or exc}") from None
    if code != 0:
        notice(f"warning: the editor exited with status {code}")


def render_edit(con: Any, data: EditResult) -> None:
    """Through a pipe `path<TAB>id<TAB>version<TAB>changed|unchanged`, then one
    `problem<TAB>severity<TAB>code<TAB>message` per lint problem."""
    from rich.text import Text

    if plain(con):
        record(con, data.path, data.id, data.version, "changed" if data.changed else "unchanged")
        for p in data.problems:
            record(con, "problem", p.severity, p.code, p.message)
        return
    verb = "Created" if data.created else ("Changed" if data.changed else "No changes to")
    parts: list[Any] = [verb, " ", safe(data.path, "bold")]
    if data.changed:
        parts.append((f"  +{data.lines_added} -{data.lines_removed} lines", "dim"))
    if data.fields_changed:
        parts += [("; fields: ", "dim"), safe(", ".join(data.fields_changed))]
    if data.version is not None:
        parts.append((f" (version {data.version})", "dim"))
    con.print(Text.assemble(*parts))
    for p in data.problems:
        con.print(Text.assemble((f"  {p.severity} ", "red" if p.severity == "error" else "yellow"), safe(p.message)))


def register(app: typer.Typer) -> None:
    @app.command("edit")
    def edit(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, path, title, alias or file name.", show_default=False)],
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Open a note in $VISUAL or $EDITOR, then report what changed and its lint problems."""
        from vaultmem.services.editing import open_in_editor

        result = open_in_editor(open_app(ctx, vault, ghost), ref, run_editor)
        emit(result, json_mode(ctx, json_), render_edit)

    @app.command("diary")
    def diary(
        ctx: typer.Context,
        date: Annotated[
            str | None,
            typer.Option(
                "--date", "-d", help="The day: 2026-11-21, yesterday, 2d (default today).", show_default=False
            ),
        ] = None,
        append: Annotated[
            str | None,
            typer.Option("--append", "-a", help="Add '- HH:MM TEXT' to the entry, without an editor ('-' = stdin)."),
        ] = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Open or create the ghost's diary entry for a day (diary/<ghost>/YYYY-MM-DD.md)."""
        from vaultmem.services.editing import diary_entry

        text = read_text_arg(append, "append")
        result = diary_entry(open_app(ctx, vault, ghost), date, text, None if text is not None else run_editor)
        emit(result, json_mode(ctx, json_), render_edit)
