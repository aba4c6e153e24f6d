"""`note create|update|validate|comment|delete` and `get`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import (
    AllowSecretOpt,
    ExpectVersionOpt,
    GhostOpt,
    JsonOpt,
    ModelOpt,
    ReasonOpt,
    VaultOpt,
    json_mode,
    open_app,
    read_file_arg,
    read_text_arg,
)
from vaultmem.cli.files import register_move
from vaultmem.cli.output import clean, emit, markdown_text, plain, record, safe
from vaultmem.models import CommentResult, DeleteResult, NoteDocument, ValidateResult, WriteResult

BodyOpt = Annotated[str | None, typer.Option("--body", help="Body text; '-' reads stdin.")]
BodyFileOpt = Annotated[str | None, typer.Option("--body-file", help="Read the body from a file ('-' = stdin).")]


def _render_write(con: Any, data: WriteResult | ValidateResult | CommentResult) -> None:
    """`path  (id …, version N)`; through a pipe `path<TAB>id<TAB>version`."""
    from rich.text import Text

    if plain(con):
        record(con, data.path, data.id, data.version)
        return
    con.print(Text.assemble(safe(data.path, "bold"), "  (id ", safe(data.id), f", version {data.version}", ")"))


def _render_delete(con: Any, data: DeleteResult) -> None:
    """Through a pipe `path<TAB>trashed_to`."""
    from rich.text import Text

    if plain(con):
        record(con, data.path, data.trashed_to)
        return
    con.print(Text.assemble("Moved ", safe(data.path), " to ", safe(data.trashed_to)))


_META_KEYS = ("id", "type", "scope", "owner", "project", "path", "trust_score", "updated", "version")


def _render_note(con: Any, doc: NoteDocument) -> None:
    """On a terminal: a panel of fields, the body as markdown, links and comments. Through a
    pipe, like a mail message: `key<TAB>value` header lines (title, fields, `tag`, `link-out`
    / `link-in` `id path title`, `comment` `at by text`), a blank line, then the body as
    stored. Everything from the note is data: markup-like text prints literally and control
    characters are neutralised (`clean`), in the body too."""
    from rich.markdown import Markdown
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    note, links = doc.note, doc.links
    comments = [c for c in doc.comments if isinstance(c, dict)]
    if plain(con):
        record(con, "title", note["title"])
        for key in _META_KEYS:
            if note.get(key) is not None:
                record(con, key, note[key])
        for tag in doc.tags:
            record(con, "tag", tag)
        for kind, items in (("link-out", [i.note for i in links.out]), ("link-in", [i.note for i in links.in_])):
            for item in items:
                record(con, kind, item.id, item.path, item.title)
        for c in comments:
            record(con, "comment", c.get("at"), c.get("by"), c.get("text"))
        body = clean(doc.body)
        con.file.write("\n" + body + ("" if not body or body.endswith("\n") else "\n"))
        con.file.flush()
        return
    meta = Table.grid(padding=(0, 2))
    for key in _META_KEYS:
        if note.get(key) is not None:
            meta.add_row(Text(key, style="dim"), safe(note[key]))
    if doc.tags:
        meta.add_row(Text("tags", style="dim"), Text(", ".join(clean(t, inline=True) for t in doc.tags)))
    con.print(Panel(meta, title=safe(note["title"], "bold"), expand=False))
    # Markdown of the cleaned body: escape sequences are already visible text; links show
    # their target ("text (url)") rather than hiding it in a terminal hyperlink.
    con.print(Markdown(markdown_text(doc.body), hyperlinks=False))
    if links.out or links.in_:
        con.print()
        for arrow, items in (("→", [i.note for i in links.out]), ("←", [i.note for i in links.in_])):
            for item in items:
                con.print(Text.assemble((arrow, "dim"), " ", safe(item.title), " (", safe(item.path), ")"))
    for c in comments:
        who = " ".join(clean(c.get(k), inline=True) for k in ("at", "by") if c.get(k)) + ":"
        # one line each: a newline in a comment's text must not print as another comment
        con.print(Text.assemble((who, "dim"), " ", safe(c.get("text"))))


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
    register_move(note_app)

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
        edit: Annotated[bool, typer.Option("--edit", help="Then open the new note in $VISUAL/$EDITOR.")] = False,
        allow_secret: AllowSecretOpt = False,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Create a structured note (memory_note_create)."""
        from vaultmem.services.notes import NewNote, create_note

        spec = NewNote(
            title=title, type=type_, scope=scope, project=project, body=_body(body, body_file) or "",
            parent=parent, tags=tag or [], aliases=alias or [], source=source, trust=trust,
            confidence=confidence, importance=importance, ttl_days=ttl_days, allow_secret=allow_secret,
        )  # fmt: skip
        app_ = open_app(ctx, vault, ghost, model=model, reason=reason)
        result = create_note(app_, spec)
        if edit:
            from vaultmem.cli.editing import render_edit, run_editor
            from vaultmem.services.editing import open_in_editor

            edited = open_in_editor(app_, result.path, run_editor, created=True)
            emit(edited, json_mode(ctx, json_), render_edit)
            return
        emit(result, json_mode(ctx, json_), _render_write)

    @note_app.command("update")
    def update(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, vault-relative path, title or alias.")],
        title: Annotated[str | None, typer.Option("--title", help="New title.")] = None,
        set_: Annotated[
            list[str] | None,
            typer.Option(
                "--set",
                help="KEY=VALUE front matter field, VALUE read as YAML (5, true, [a, b]) unless that "
                "would drop some of it (repeatable; empty VALUE removes).",
            ),
        ] = None,
        add_tag: Annotated[list[str] | None, typer.Option("--add-tag", help="Add a tag (repeatable).")] = None,
        remove_tag: Annotated[list[str] | None, typer.Option("--remove-tag", help="Remove a tag (repeatable).")] = None,
        body: BodyOpt = None,
        body_file: BodyFileOpt = None,
        append: Annotated[str | None, typer.Option("--append", help="Append text to the body ('-' = stdin).")] = None,
        replace_section: Annotated[
            str | None, typer.Option("--replace-section", help="Replace the section under HEADING with --body.")
        ] = None,
        expect_version: ExpectVersionOpt = None,
        allow_secret: AllowSecretOpt = False,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Patch a note's front matter and/or body (memory_note_update)."""
        from vaultmem.services.notes import NotePatch
        from vaultmem.services.retitles import update_named

        patch = NotePatch(
            title=title, sets=set_ or [], add_tags=add_tag or [], remove_tags=remove_tag or [],
            body=_body(body, body_file), append=read_text_arg(append, "append"), replace_section=replace_section,
        )  # fmt: skip
        app_ = open_app(ctx, vault, ghost, model=model, reason=reason)
        # an agent (a ghost) replaces no text a person edited and it has not read, as over MCP
        result = update_named(
            app_, ref, patch, expect_version, refuse_unseen_edits=app_.ghost is not None, allow_secret=allow_secret
        )
        emit(result, json_mode(ctx, json_), _render_write)

    @note_app.command("validate")
    def validate(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, path, title or alias.")],
        by: Annotated[str, typer.Option("--by", help="Who validated: GHOST/MODEL.")],
        trust: Annotated[float | None, typer.Option("--trust", help="New trust_score in [0, 1].")] = None,
        expect_version: ExpectVersionOpt = None,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Record a validation and optionally adjust trust (memory_note_validate)."""
        from vaultmem.services.notes import validate_note

        app_ = open_app(ctx, vault, ghost, model=model, reason=reason)
        result = validate_note(app_, ref, by, trust, expect_version, refuse_unseen_edits=app_.ghost is not None)
        emit(result, json_mode(ctx, json_), _render_write)

    @note_app.command("comment")
    def comment(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, path, title or alias.")],
        text: Annotated[str, typer.Option("--text", help="Comment text ('-' = stdin).")],
        model: Annotated[str | None, typer.Option("--model", help="Model that wrote the comment.")] = None,
        expect_version: ExpectVersionOpt = None,
        allow_secret: AllowSecretOpt = False,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Append a comment to a note's front matter (memory_note_comment)."""
        from vaultmem.services.notes import comment_note

        text_ = read_text_arg(text, "text") or ""
        app_ = open_app(ctx, vault, ghost, model=model, reason=reason)
        result = comment_note(
            app_, ref, text_, model, expect_version, allow_secret=allow_secret, unseen_caller=app_.ghost is not None
        )
        emit(result, json_mode(ctx, json_), _render_write)

    @note_app.command("delete")
    def delete(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, path, title or alias.")],
        expect_version: ExpectVersionOpt = None,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Move a note into .trash/ (memory_delete; Obsidian's trash folder); `vaultmem trash restore` brings it back."""
        from vaultmem.services.notes import delete_note

        result = delete_note(open_app(ctx, vault, ghost, model=model, reason=reason), ref, expect_version)
        emit(result, json_mode(ctx, json_), _render_delete)
        if result.linked_from:
            from vaultmem.cli.output import notice

            paths = ", ".join(clean(src.path, inline=True) for src in result.linked_from)
            notice(
                f"warning: {len(result.linked_from)} note(s) link to it and now have a dangling link: {paths}; "
                f"`vaultmem trash restore {result.id}` brings it back"
            )

    @app.command("get")
    def get(
        ctx: typer.Context,
        refs: Annotated[
            list[str],
            typer.Argument(
                help="Note id (or its first 6+ characters), vault-relative path, title, alias, file name, "
                "or a pasted [[Note#Heading|label]]. Several: a JSON array.",
                show_default=False,
            ),
        ],
        raw: Annotated[bool, typer.Option("--raw", help="Print the file exactly as stored.")] = False,
        scope: Annotated[
            str | None,
            typer.Option("--scope", "-s", help="Look only in: all | shared | private | project | diary | inbox"),
        ] = None,
        section: Annotated[
            str | None, typer.Option("--section", help="Only the section under this heading (and its subsections).")
        ] = None,
        lines: Annotated[
            str | None, typer.Option("--lines", help="Only lines A:B of the body (or of --section), from 1; A: or :B.")
        ] = None,
        at: Annotated[
            str | None, typer.Option("--at", help="The note as it was at this git revision (its path then).")
        ] = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Show one note with its links (memory_get)."""
        import sys

        from vaultmem.services.documents import get_note

        app_ = open_app(ctx, vault, ghost)
        if at is not None:
            from vaultmem.services.history import note_at

            docs = [note_at(app_, ref, at) for ref in refs]
        else:
            docs = [get_note(app_, ref, raw=raw, scope=scope, section=section, lines=lines) for ref in refs]
        if raw and not json_mode(ctx, json_):
            text = "".join(doc.raw or "" for doc in docs)
            # the file as stored, to a pipe or a file; on a terminal its escape sequences
            # shown, not obeyed (they could clear the screen or set its title), as elsewhere
            sys.stdout.write(clean(text) if sys.stdout.isatty() else text)
            return
        if len(docs) == 1:
            emit(docs[0], json_mode(ctx, json_), _render_note)
            return
        emit(docs, json_mode(ctx, json_), _render_notes)


def _render_notes(con: Any, docs: list[NoteDocument]) -> None:
    """Several notes, one after another; through a pipe separated by a blank line."""
    for i, doc in enumerate(docs):
        if i:
            con.file.write("\n") if plain(con) else con.rule()
        _render_note(con, doc)
