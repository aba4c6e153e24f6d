"""`capture`, `inbox list|promote` and `write`: getting raw memory into the vault."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import (
    BATCH_LIMIT,
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
)
from vaultmem.cli.output import emit, error, notice, plain, record, safe
from vaultmem.models import CaptureResult, InboxList, IngestResult, PromoteResult


def _render_path(con: Any, data: CaptureResult | PromoteResult) -> None:
    """`path  (id …)`; through a pipe `path<TAB>id`."""
    from rich.text import Text

    if plain(con):
        record(con, data.path, data.id)
        return
    con.print(Text.assemble(safe(data.path, "bold"), "  (id ", safe(data.id), ")"))


def _render_inbox(con: Any, data: InboxList) -> None:
    """A table on a terminal; through a pipe `id created title path` per capture, tab-separated."""
    from rich.table import Table

    if plain(con):
        for c in data.captures:
            record(con, c.id, c.created, c.title, c.path)
        if not data.captures:
            notice("Inbox is empty.")
        return
    if not data.captures:
        con.print("Inbox is empty.")
        return
    table = Table("id", "created", "title", "path", box=None)
    for c in data.captures:
        table.add_row(*(safe(v) for v in (c.id, c.created, c.title, c.path)))
    con.print(table)


def _render_writes(con: Any, data: IngestResult) -> None:
    """One line per item; through a pipe `wrote|duplicate|rejected index path-or-reason`."""
    from rich.text import Text

    rows = [("wrote", "green", w["index"], w["path"]) for w in data.written]
    rows += [("duplicate", "yellow", d["index"], d["path"]) for d in data.duplicates]
    rows += [("rejected", "red", r["index"], r["reason"]) for r in data.rejected]
    for what, style, index, text in rows:
        if plain(con):
            record(con, what, index, text)
        else:
            con.print(Text.assemble((what, style), f" #{index} ", safe(text)))


def register(app: typer.Typer) -> None:
    @app.command("capture")
    def capture(
        ctx: typer.Context,
        text: Annotated[str | None, typer.Argument(help="Text to capture; '-' or nothing reads stdin.")] = None,
        scope: Annotated[
            str, typer.Option("--scope", help="private (your inbox) or shared (inbox/shared).")
        ] = "private",
        tag: Annotated[list[str] | None, typer.Option("--tag", help="Tag (repeatable).")] = None,
        source: Annotated[str | None, typer.Option("--source", help="Where it came from.")] = None,
        allow_secret: AllowSecretOpt = False,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Store raw text in the inbox for later curation (memory_capture)."""
        from vaultmem.services.capture import capture as do_capture

        app_ = open_app(ctx, vault, ghost, model=model, reason=reason)
        body = read_file_arg("-", "stdin") if text in (None, "-") else text
        emit(do_capture(app_, body or "", scope, tag or [], source, allow_secret), json_mode(ctx, json_), _render_path)

    inbox_app = typer.Typer(help="Curate captures into structured notes.", no_args_is_help=True)
    app.add_typer(inbox_app, name="inbox")

    @inbox_app.command("list")
    def inbox_list(ctx: typer.Context, vault: VaultOpt = None, ghost: GhostOpt = None, json_: JsonOpt = False) -> None:
        """List the captures you can see: your inbox and the shared one."""
        from vaultmem.services.capture import list_inbox

        emit(list_inbox(open_app(ctx, vault, ghost)), json_mode(ctx, json_), _render_inbox)

    @inbox_app.command("promote")
    def inbox_promote(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Capture id or path.")],
        title: Annotated[str, typer.Option("--title", help="Title of the new note.")],
        type_: Annotated[str, typer.Option("--type", help="Type of the new note.")],
        scope: Annotated[str, typer.Option("--scope", help="shared | private | diary | project")],
        project: Annotated[str | None, typer.Option("--project", help="Project (scope project).")] = None,
        parent: Annotated[str | None, typer.Option("--parent", help="Parent note: id or title.")] = None,
        expect_version: ExpectVersionOpt = None,
        allow_secret: AllowSecretOpt = False,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Turn a capture into a structured note and remove it from the inbox."""
        from vaultmem.services.capture import promote

        result = promote(
            open_app(ctx, vault, ghost, model=model, reason=reason),
            ref,
            title,
            type_,
            scope,
            project,
            parent,
            expect_version,
            allow_secret,
        )
        emit(result, json_mode(ctx, json_), _render_path)

    @app.command("write")
    def write(
        ctx: typer.Context,
        file: Annotated[str, typer.Argument(help="JSON file with a memory_writes array; '-' reads stdin.")] = "-",
        scope: Annotated[
            str, typer.Option("--scope", help="Where semantic memories go: private or shared.")
        ] = "private",
        allow_secret: AllowSecretOpt = False,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> int:
        """Ingest tool `memory_writes` (episodic, semantic, conversation) as notes.

        Input: a JSON array (or an object with a `memory_writes` array) of writes, each
        {"type": "episodic" | "semantic" | "conversation", "content": TEXT, and optionally
        "role" (conversation), "tags": [..], "confidence": 0-1, "ttl_days": N,
        "source": {"tool", "turn_id", "timestamp": ISO-8601 or epoch seconds}, "context":
        {..}}. Episodic and conversation memories go to diary/<ghost>/, semantic ones to
        private/<ghost>/ (or shared/ with --scope shared). Each item is checked alone: a
        bad one is listed in `rejected` with its reason while the others are written; an
        identical memory is listed in `duplicates`. Exit 5 when every item was rejected (a
        batch of duplicates only is no error: those memories are there)."""
        from vaultmem.errors import InvalidInput
        from vaultmem.services.writes import ingest, parse_writes

        if scope not in ("private", "shared"):
            raise InvalidInput(f"--scope must be private or shared, not {scope!r}")
        items = parse_writes(read_file_arg(file, "memory writes", BATCH_LIMIT))
        app_ = open_app(ctx, vault, ghost, model=model, reason=reason)
        result = ingest(app_, items, shared=scope == "shared", allow_secret=allow_secret)
        # every item refused: the caller's input was wrong, whatever it holds (SPEC §6 exit 5),
        # said as every error is: an `error` object beside the lists, `vaultmem: error:` on stderr
        if not (result.rejected and not result.written and not result.duplicates):
            emit(result, json_mode(ctx, json_), _render_writes)
            return 0
        message = f"every memory write was rejected ({len(result.rejected)}); nothing written"
        if json_mode(ctx, json_):
            emit({**result.to_dict(), "error": {"code": "invalid_input", "message": message}}, True)
        else:
            emit(result, False, _render_writes)
            error("invalid_input", message, False)
        return 5
