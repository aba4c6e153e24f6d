"""`query` (QueryMemory) and `reference search` (reference_search)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.filters import (
    ChangedSinceOpt,
    ChangedUntilOpt,
    IncludeExpiredOpt,
    MemoryTypeOpt,
    ScopeOpt,
    SinceOpt,
    TypeOpt,
    UntilOpt,
)
from vaultmem.cli.output import clean, emit, flat, notice, plain, progress_hook, record, safe
from vaultmem.models import QueryResult, ReferenceResult
from vaultmem.search.filters import QUERY_LIMIT, QUERY_MIN_RELEVANCE


def _render_query(con: Any, data: QueryResult) -> None:
    """Through a pipe: one line per match, `relevance id path title excerpt` tab-separated
    (the excerpt whole), and the summary on stderr."""
    from rich.table import Table
    from rich.text import Text

    if plain(con):
        for m in data.matches:
            record(con, f"{m.relevance:.2f}", m.id, m.path, m.title, flat(m.excerpt))
        notice(data.query_summary)
        return
    con.print(safe(data.query_summary, inline=False))
    if data.matches:
        table = Table("relevance", "note", box=None, padding=(0, 1))
        for m in data.matches:
            cell = Text.assemble(safe(m.title, "bold"), " ", safe(m.path, "dim"), "\n", flat(m.excerpt))
            table.add_row(f"{m.relevance:.2f}", cell)
        con.print(table)


def _render_reference(con: Any, data: ReferenceResult) -> None:
    """The topic, then its results as `search` shows them (through a pipe the topic is a
    first line `topic id path title summary`)."""
    from rich.text import Text

    from vaultmem.cli.search import render_memory_results

    topic = data.topic
    about = f"({clean(topic.path, inline=True)}, {topic.files} files): {flat(topic.summary)}"
    summary = f"{data.returned} results, mode {data.mode}, {data.search_time_ms} ms"
    if plain(con):
        # Shaped like a result line, "topic" in the score column: cut -f2- still works.
        record(con, "topic", topic.id, topic.path, topic.title, flat(topic.summary))
        notice(f"topic {topic.path} lists {topic.files} files")
    else:
        con.print(Text.assemble("Topic ", safe(topic.title, "bold"), " ", about))
    if not data.results:
        message = f"No results for {data.question!r}."
        notice(message) if plain(con) else con.print(Text(message))
        return
    render_memory_results(con, data.results)
    notice(summary) if plain(con) else con.print(Text(summary, style="dim"))


def register(app: typer.Typer) -> None:
    @app.command("query")
    def query(
        ctx: typer.Context,
        text: Annotated[str, typer.Argument(help="Keywords (or a regular expression with --regex).")],
        type_: TypeOpt = None,
        memory_type: MemoryTypeOpt = None,
        scope: ScopeOpt = None,
        since: SinceOpt = None,
        until: UntilOpt = None,
        changed_since: ChangedSinceOpt = None,
        changed_until: ChangedUntilOpt = None,
        limit: Annotated[int, typer.Option("--limit", help="Maximum matches.")] = QUERY_LIMIT,
        min_relevance: Annotated[
            float, typer.Option("--min-relevance", help="Minimum relevance in [0, 1].")
        ] = QUERY_MIN_RELEVANCE,
        regex: Annotated[bool, typer.Option("--regex", help="Treat TEXT as a regular expression.")] = False,
        include_expired: IncludeExpiredOpt = False,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Grep-style search over the note files; needs no index (QueryMemory)."""
        from vaultmem.services.query import QueryRequest
        from vaultmem.services.query import query as do_query

        req = QueryRequest(
            query=text, types=type_ or [], memory_type=memory_type, scope=scope, since=since, until=until,
            changed_since=changed_since, changed_until=changed_until, limit=limit, min_relevance=min_relevance, regex=regex, include_expired=include_expired,
        )  # fmt: skip
        emit(do_query(open_app(ctx, vault, ghost), req), json_mode(ctx, json_), _render_query)

    ref_app = typer.Typer(help="Search the files that topic notes list (docs, source code).", no_args_is_help=True)
    app.add_typer(ref_app, name="reference")

    @ref_app.command("search")
    def reference_search(
        ctx: typer.Context,
        topic: Annotated[str, typer.Argument(help="Topic to look up (matched against topic notes).")],
        question: Annotated[str, typer.Argument(help="Question to answer from the topic's files.")],
        limit: Annotated[int | None, typer.Option("--limit", help="Maximum results.")] = None,
        rrf_k: Annotated[float | None, typer.Option("--rrf-k", help="RRF constant k.")] = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Find the best topic note, then search the files it lists (reference_search)."""
        from vaultmem.services.reference import reference_search as do_reference

        with progress_hook(True) as hook:
            result = do_reference(open_app(ctx, vault, ghost, progress=hook), topic, question, limit, rrf_k)
        emit(result, json_mode(ctx, json_), _render_reference)
