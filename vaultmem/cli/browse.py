"""`list`, `links`, `tags` and `orphans`: browse the notes the ghost can see."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.filters import (
    ChangedSinceOpt,
    ChangedUntilOpt,
    ProjectOpt,
    ScopeOpt,
    SinceOpt,
    TagOpt,
    TypeOpt,
    UntilOpt,
)
from vaultmem.cli.output import emit, plain, record, safe
from vaultmem.models import LinkReport, ListedNote, NoteList, OrphanList, TagList
from vaultmem.vault.dates import later


def _notes_table(con: Any, notes: list[ListedNote]) -> None:
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False)
    for name in ("changed", "title", "type", "scope", "path"):
        table.add_column(name, style="dim" if name in ("changed", "path") else "", overflow="fold")
    for n in notes:
        table.add_row(safe(_changed(n)), safe(n.title, "bold"), safe(n.type), safe(n.scope), safe(n.path))
    con.print(table)


def _changed(n: ListedNote) -> str:
    """The later of `updated` and the file time, to the minute."""
    return _latest(n)[:16].replace("T", " ")


def _latest(n: ListedNote) -> str:
    """The later of `updated` and the file time, compared as times (`updated` may be in
    Obsidian's form or an older vault's `…Z`)."""
    return str(later(n.updated, n.modified) or n.modified)


def _render_list(con: Any, data: NoteList) -> None:
    """Through a pipe `path<TAB>id<TAB>title<TAB>type<TAB>updated` per note (deleted notes:
    `deleted<TAB>path<TAB>id<TAB>deleted_at`); on a terminal a table and a count."""
    from rich.text import Text

    if plain(con):
        for n in data.notes:
            record(con, n.path, n.id, n.title, n.type, _latest(n))
        for d in data.deleted or []:
            record(con, "deleted", d.path, d.id, d.deleted_at)
        return
    if data.notes:
        _notes_table(con, data.notes)
    first = data.offset + 1 if data.returned else data.offset
    con.print(Text(f"{data.returned} of {data.total} notes ({first}-{data.offset + data.returned})", style="dim"))
    for d in data.deleted or []:
        when = d.deleted_at or "time unknown"
        con.print(Text.assemble(("deleted ", "red"), safe(d.path), (f"  ({when})", "dim")))


def _render_links(con: Any, data: LinkReport) -> None:
    """Through a pipe one `relation<TAB>path<TAB>id<TAB>title<TAB>heading<TAB>label` per
    link (relation: out, in, parent, child, dangling)."""
    from rich.text import Text

    links = data.links
    rows: list[tuple[str, str | None, str | None, str | None, str | None, str | None]] = []
    if links.parent is not None:
        rows.append(("parent", links.parent.path, links.parent.id, links.parent.title, None, None))
    rows += [("child", c.path, c.id, c.title, None, None) for c in links.children]
    rows += [("out", o.note.path, o.note.id, o.note.title, o.heading, o.label) for o in links.out]
    rows += [("in", i.note.path, i.note.id, i.note.title, i.heading, i.label) for i in links.in_]
    rows += [("dangling", None, None, d.target, d.heading, None) for d in links.dangling]
    if plain(con):
        for row in rows:
            record(con, *row)
        return
    con.print(Text.assemble(safe(data.note.title, "bold"), "  (", safe(data.note.path), ")"))
    arrows = {"parent": "↑", "child": "↓", "out": "→", "in": "←", "dangling": "✗"}
    for relation, path, _, title, heading, label in rows:
        parts: list[Any] = [(f"  {arrows[relation]} {relation:<8} ", "dim"), safe(title)]
        if heading or label:  # as written in the link: [[…#heading|label]]
            parts += [("  [[…", "dim")]
            parts += [("#", "dim"), safe(heading)] if heading else []
            parts += [("|", "dim"), safe(label)] if label else []
            parts += [("]]", "dim")]
        if path:
            parts += [("  ", ""), safe(path, "dim")]
        con.print(Text.assemble(*parts))
    if not rows:
        con.print(Text("  no links", style="dim"))


def _render_tags(con: Any, data: TagList) -> None:
    """Through a pipe `tag<TAB>count<TAB>notes`; on a terminal nested tags indented under
    their parents."""
    from rich.text import Text

    if plain(con):
        for t in data.tags:
            record(con, t.tag, t.count, t.notes)
        return
    for t in data.tags:
        depth = t.tag.count("/")
        con.print(Text.assemble("  " * depth, ("#", "dim"), safe(t.tag), (f"  {t.count}", "cyan")))
    con.print(Text(f"{data.total} tags", style="dim"))


def _render_orphans(con: Any, data: OrphanList) -> None:
    from rich.text import Text

    if plain(con):
        for n in data.orphans:
            record(con, n.path, n.id, n.title)
        return
    if data.orphans:
        _notes_table(con, data.orphans)
    con.print(Text(f"{data.total} notes link nowhere and nothing links to them", style="dim"))


def register(app: typer.Typer) -> None:
    @app.command("list")
    def list_(
        ctx: typer.Context,
        scope: ScopeOpt = None,
        type_: TypeOpt = None,
        tag: TagOpt = None,
        project: ProjectOpt = None,
        owner: Annotated[str | None, typer.Option("--owner", help="Only notes this ghost owns.")] = None,
        since: SinceOpt = None,
        until: UntilOpt = None,
        changed_since: ChangedSinceOpt = None,
        changed_until: ChangedUntilOpt = None,
        sort: Annotated[
            str, typer.Option("--sort", help="updated (newest first) | created | title | trust | importance")
        ] = "updated",
        limit: Annotated[int, typer.Option("--limit", "-n", help="Notes per page.")] = 20,
        offset: Annotated[int, typer.Option("--offset", help="Skip this many notes (the next page).")] = 0,
        include_deleted: Annotated[
            bool, typer.Option("--include-deleted", help="Also list deleted notes (trash and files gone from disk).")
        ] = False,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """List notes, newest change first, with filters and pages."""
        from vaultmem.services.browse import ListSpec, list_notes

        spec = ListSpec(
            scope=scope, types=type_ or [], tags=tag or [], project=project, owner=owner, since=since,
            until=until, changed_since=changed_since, changed_until=changed_until, sort=sort, limit=limit, offset=offset,
            include_deleted=include_deleted,
        )  # fmt: skip
        emit(list_notes(open_app(ctx, vault, ghost), spec), json_mode(ctx, json_), _render_list)

    @app.command("links")
    def links(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, path, title, alias or file name.", show_default=False)],
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Show a note's links out and in, its parent and children, and dangling targets."""
        from vaultmem.services.browse import note_links

        emit(note_links(open_app(ctx, vault, ghost), ref), json_mode(ctx, json_), _render_links)

    @app.command("tags")
    def tags(
        ctx: typer.Context,
        prefix: Annotated[
            str | None, typer.Argument(help="Only this tag and the tags nested under it.", show_default=False)
        ] = None,
        sort: Annotated[str, typer.Option("--sort", help="count (most used first) | name")] = "count",
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Count every tag in use (front matter and inline #tags; nested tags roll up)."""
        from vaultmem.services.browse import tag_counts

        emit(tag_counts(open_app(ctx, vault, ghost), sort, prefix), json_mode(ctx, json_), _render_tags)

    @app.command("orphans")
    def orphans(ctx: typer.Context, vault: VaultOpt = None, ghost: GhostOpt = None, json_: JsonOpt = False) -> None:
        """List notes that nothing links to and that link nowhere."""
        from vaultmem.services.browse import orphan_notes

        emit(orphan_notes(open_app(ctx, vault, ghost)), json_mode(ctx, json_), _render_orphans)
