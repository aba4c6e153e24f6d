"""`note create|update|validate|comment|delete` and `get`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app, read_file_arg, read_text_arg
from vaultmem.cli.output import emit

BodyOpt = Annotated[str | None, typer.Option("--body", help="Body text; '-' reads stdin.")]
BodyFileOpt = Annotated[str | None, typer.Option("--body-file", help="Read the body from a file ('-' = stdin).")]


def _render_write(con: Any, data: dict[str, Any]) -> None:
    from rich.markup import escape

    version = f", version {data['version']}" if "version" in data else ""
    con.print(f"[bold]{escape(data['path'])}[/]  (id {escape(data['id'])}{version})")


def _render_delete(con: Any, data: dict[str, Any]) -> None:
    from rich.markup import escape

    con.print(f"Moved {escape(data['path'])} to {escape(data['trashed_to'])}")


def _render_note(con: Any, doc: dict[str, Any]) -> None:
    from rich.markdown import Markdown
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    # Note data is text, never rich markup: a title like "[/]" must print, not crash.
    note = doc["note"]
    meta = Table.grid(padding=(0, 2))
    for key in ("id", "type", "scope", "owner", "project", "path", "trust_score", "updated", "version"):
        if note.get(key) is not None:
            meta.add_row(f"[dim]{key}[/]", Text(str(note[key])))
    if doc["tags"]:
        meta.add_row("[dim]tags[/]", Text(", ".join(doc["tags"])))
    con.print(Panel(meta, title=Text(str(note["title"]), style="bold"), expand=False))
    con.print(Markdown(doc["body"]))
    links = doc["links"]
    if links["out"] or links["in"]:
        con.print()
        for item in links["out"]:
            con.print(f"[dim]→[/] {escape(str(item['title']))} [dim]({escape(item['path'])})[/]")
        for item in links["in"]:
            con.print(f"[dim]←[/] {escape(str(item['title']))} [dim]({escape(item['path'])})[/]")
    for comment in doc["comments"]:
        if isinstance(comment, dict):
            who = escape(f"{comment.get('at')} {comment.get('by')}:")
            con.print(f"[dim]{who}[/] {escape(str(comment.get('text')))}")


def _body(body: str | None, body_file: str | None) -> str | None:
    from vaultmem.errors import InvalidInput

    if body is not None and body_file is not None:
        raise InvalidInput("use either --body or --body-file, not both")
    if body_file is not None:
        return read_file_arg(body_file, "body file")
    return read_text_arg(body, "body")


def register(app: typer.Typer) -> None:
    note_app = typer.Typer(help="Create, change, validate, comment on and delete notes.", no_args_is_help=True)
    app.add_typer(note_app, name="note")

    @note_app.command("create")
    def create(
        ctx: typer.Context,
        title: Annotated[str, typer.Option("--title", help="Display title (unique among shared notes).")],
        type_: Annotated[str, typer.Option("--type", help="Note type, one of the vault's types.")],
        scope: Annotated[str, typer.Option("--scope", help="shared | private | diary | project")],
        project: Annotated[str | None, typer.Option("--project", help="Project name (scope project).")] = None,
        body: BodyOpt = None,
        body_file: BodyFileOpt = None,
        parent: Annotated[str | None, typer.Option("--parent", help="Parent note: id or title.")] = None,
        tag: Annotated[list[str] | None, typer.Option("--tag", help="Tag (repeatable).")] = None,
        alias: Annotated[list[str] | None, typer.Option("--alias", help="Alias (repeatable).")] = None,
        source: Annotated[str | None, typer.Option("--source", help="Where the knowledge came from.")] = None,
        trust: Annotated[float | None, typer.Option("--trust", help="trust_score in [0, 1] (default 0.5).")] = None,
        confidence: Annotated[float | None, typer.Option("--confidence", help="confidence in [0, 1].")] = None,
        importance: Annotated[float | None, typer.Option("--importance", help="importance in [0, 1].")] = None,
        ttl_days: Annotated[float | None, typer.Option("--ttl-days", help="Expire after N days.")] = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Create a structured note (memory_note_create)."""
        from vaultmem.services.notes import NewNote, create_note

        spec = NewNote(
            title=title, type=type_, scope=scope, project=project, body=_body(body, body_file) or "",
            parent=parent, tags=tag or [], aliases=alias or [], source=source, trust=trust,
            confidence=confidence, importance=importance, ttl_days=ttl_days,
        )  # fmt: skip
        result = create_note(open_app(ctx, vault, ghost), spec)
        emit(result.to_dict(), json_mode(ctx, json_), _render_write)

    @note_app.command("update")
    def update(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, vault-relative path, title or alias.")],
        title: Annotated[str | None, typer.Option("--title", help="New title.")] = None,
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help="KEY=VALUE front matter field (repeatable; empty VALUE removes)."),
        ] = None,
        add_tag: Annotated[list[str] | None, typer.Option("--add-tag", help="Add a tag (repeatable).")] = None,
        remove_tag: Annotated[list[str] | None, typer.Option("--remove-tag", help="Remove a tag (repeatable).")] = None,
        body: BodyOpt = None,
        body_file: BodyFileOpt = None,
        append: Annotated[str | None, typer.Option("--append", help="Append text to the body ('-' = stdin).")] = None,
        replace_section: Annotated[
            str | None, typer.Option("--replace-section", help="Replace the section under HEADING with --body.")
        ] = None,
        expect_version: Annotated[
            int | None, typer.Option("--expect-version", help="Fail with exit 4 unless the note is at this version.")
        ] = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Patch a note's front matter and/or body (memory_note_update)."""
        from vaultmem.services.notes import NotePatch, update_note

        patch = NotePatch(
            title=title, sets=set_ or [], add_tags=add_tag or [], remove_tags=remove_tag or [],
            body=_body(body, body_file), append=read_text_arg(append, "append"), replace_section=replace_section,
        )  # fmt: skip
        result = update_note(open_app(ctx, vault, ghost), ref, patch, expect_version)
        emit(result.to_dict(), json_mode(ctx, json_), _render_write)

    @note_app.command("validate")
    def validate(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, path, title or alias.")],
        by: Annotated[str, typer.Option("--by", help="Who validated: GHOST/MODEL.")],
        trust: Annotated[float | None, typer.Option("--trust", help="New trust_score in [0, 1].")] = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Record a validation and optionally adjust trust (memory_note_validate)."""
        from vaultmem.services.notes import validate_note

        emit(validate_note(open_app(ctx, vault, ghost), ref, by, trust), json_mode(ctx, json_), _render_write)

    @note_app.command("comment")
    def comment(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, path, title or alias.")],
        text: Annotated[str, typer.Option("--text", help="Comment text ('-' = stdin).")],
        model: Annotated[str | None, typer.Option("--model", help="Model that wrote the comment.")] = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Append a comment to a note's front matter (memory_note_comment)."""
        from vaultmem.services.notes import comment_note

        result = comment_note(open_app(ctx, vault, ghost), ref, read_text_arg(text, "text") or "", model)
        emit(result, json_mode(ctx, json_), _render_write)

    @note_app.command("delete")
    def delete(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, path, title or alias.")],
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Move a note into .vaultmem/trash/ (memory_delete)."""
        from vaultmem.services.notes import delete_note

        emit(delete_note(open_app(ctx, vault, ghost), ref), json_mode(ctx, json_), _render_delete)

    @app.command("get")
    def get(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, vault-relative path, title or alias.")],
        raw: Annotated[bool, typer.Option("--raw", help="Print the file exactly as stored.")] = False,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Show one note with its links (memory_get)."""
        import sys

        from vaultmem.services.notes import get_note

        doc = get_note(open_app(ctx, vault, ghost), ref, raw=raw)
        if raw and not json_mode(ctx, json_):
            sys.stdout.write(doc["raw"])
            return
        emit(doc, json_mode(ctx, json_), _render_note)
