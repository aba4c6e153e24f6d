"""`note move`, `fix-names` and `trash list|restore`: where note files live, links kept working."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.output import emit, notice, plain, record, safe
from vaultmem.models import MoveReport, RestoreResult, TrashList

DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="List what would change; change nothing.")]


def _render_moves(con: Any, data: MoveReport) -> None:
    """`from -> to` per move and the notes whose links change; through a pipe tab-separated
    records `move<TAB>from<TAB>to` and `relink<TAB>path`."""
    from rich.text import Text

    verb = "would move" if data.dry_run else "moved"
    if plain(con):
        for move in data.moves:
            record(con, "move", move.from_, move.to)
        for path in data.links_updated:
            record(con, "relink", path)
        for skipped in data.skipped:
            record(con, "skipped", skipped["path"], skipped["reason"])
    else:
        for move in data.moves:
            con.print(Text.assemble((verb, "bold"), " ", safe(move.from_), " → ", safe(move.to)))
        for path in data.links_updated:
            con.print(Text.assemble(("links", "dim"), " ", safe(path)))
        for skipped in data.skipped:
            con.print(Text.assemble(("skipped", "yellow"), " ", safe(skipped["path"]), ": ", safe(skipped["reason"])))
    if not data.moves:
        notice("nothing to rename: every note's file name already follows its title")
    elif data.dry_run:
        notice(
            f"{len(data.moves)} notes would move, links rewritten in {len(data.links_updated)}; "
            "run without --dry-run to apply"
        )


def _render_trash(con: Any, data: TrashList) -> None:
    from rich.table import Table

    if plain(con):
        for t in data.trashed:
            record(con, t.id, t.deleted_at, t.path, t.title)
        return
    if not data.trashed:
        notice("the trash is empty")
        return
    table = Table("id", "deleted", "path", "title", box=None)
    for t in data.trashed:
        table.add_row(safe(t.id), safe(t.deleted_at), safe(t.path), safe(t.title))
    con.print(table)


def _render_restored(con: Any, data: RestoreResult) -> None:
    from rich.text import Text

    if plain(con):
        record(con, data.id, data.path)
        return
    con.print(Text.assemble("restored ", safe(data.path, style="bold"), " (id ", safe(data.id), ")"))


def register(app: typer.Typer) -> None:
    @app.command("fix-names")
    def fix_names(
        ctx: typer.Context,
        dry_run: DryRunOpt = False,
        all_: Annotated[
            bool,
            typer.Option("--all", help="Also rename notes whose name was chosen by hand, not only old slug names."),
        ] = False,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Rename notes after their titles as Obsidian names files; every link to them is rewritten.

        Notes created before vaultmem named files like Obsidian have slug names
        (`wine-basics.md`); Obsidian resolves `[[Wine basics]]` by file name, so those links
        are dead there. This renames them (`Wine basics.md`), keeps their ids, and rewrites
        wikilinks (labels, headings, embeds kept) and markdown links that no longer resolve.
        Review with `git diff`: only names and link targets change.

        Example: vaultmem fix-names --dry-run, then vaultmem fix-names
        """
        from vaultmem.services.moves import fix_names as run

        report = run(open_app(ctx, vault, ghost), dry_run=dry_run, every=all_)
        emit(report, json_mode(ctx, json_), _render_moves)

    trash_app = typer.Typer(help="Deleted notes: list them, bring one back.", no_args_is_help=True)
    app.add_typer(trash_app, name="trash")

    @trash_app.command("list")
    def trash_list(ctx: typer.Context, vault: VaultOpt = None, ghost: GhostOpt = None, json_: JsonOpt = False) -> None:
        """Deleted notes you could see, newest first."""
        from vaultmem.services.trash import list_trash

        emit(list_trash(open_app(ctx, vault, ghost)), json_mode(ctx, json_), _render_trash)

    @trash_app.command("restore")
    def trash_restore(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Id of the deleted note, its old path, or its path in the trash.")],
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Put a deleted note back where it was (exit 4 if that path is taken: nothing is overwritten)."""
        from vaultmem.services.trash import restore

        emit(restore(open_app(ctx, vault, ghost), ref), json_mode(ctx, json_), _render_restored)


def register_move(note_app: typer.Typer) -> None:
    @note_app.command("move")
    def move(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, vault-relative path, title or alias.")],
        target: Annotated[
            str, typer.Argument(help="New file name (rename in place), a folder ending in '/', or a vault path.")
        ],
        dry_run: DryRunOpt = False,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Rename or move one note; its id stays and every link to it is rewritten (as Obsidian does)."""
        from vaultmem.services.moves import move_note

        report = move_note(open_app(ctx, vault, ghost), ref, target, dry_run=dry_run)
        emit(report, json_mode(ctx, json_), _render_moves)
