"""`search`: hybrid retrieval with graph expansion (memory_search)."""

from __future__ import annotations

import json
import re
import sys
from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.filters import (
    IncludeExpiredOpt,
    MemoryTypeOpt,
    ProjectOpt,
    ScopeOpt,
    SinceOpt,
    TagOpt,
    TypeOpt,
    UntilOpt,
)
from vaultmem.cli.output import clean, emit, flat, notice, plain, progress_hook, record, safe
from vaultmem.index.documents import DATED_TYPES
from vaultmem.models import MemoryResult, Neighbour, NoteSummary, SearchResult, SessionTurn, to_json
from vaultmem.search.filters import DEFAULT_MODE, MODES

FORMATS = ("table", "md", "json")
RELATIONS = (("parents", "parent"), ("links_out", "links out"), ("links_in", "links in"))


def _explain(explain: Any) -> str:
    return json.dumps(to_json(explain), ensure_ascii=False, separators=(",", ":"), default=str)


def _titles(results: list[MemoryResult]) -> dict[str, str]:
    """id -> title of the results: a neighbour that is one of them carries only its id."""
    return {r.summary.id: r.summary.title for r in results}


def _title_of(n: Neighbour, titles: dict[str, str]) -> str:
    return titles.get(n.id, n.id) if n.is_result or n.title is None else n.title


def score_text(score: float | None) -> str:
    """A relevance for people: three significant digits (a BM25-only probability can be
    0.00002; four decimals would show every such score as 0.0000)."""
    return f"{score or 0.0:.3g}"


def said(s: NoteSummary) -> str | None:
    """When a dated memory (a conversation turn, an episode) happened, and who said it:
    "2023-05-08 13:56 UTC · Caroline"; None for other notes (their `created` is when the
    file was made, not an event)."""
    if s.type not in DATED_TYPES or not s.created:
        return None
    # no zone is UTC by the vault's convention (clock.note_time); `Z` is older vaults' UTC
    utc = s.created.endswith("Z") or re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?", s.created)
    when = s.created[:16].replace("T", " ") + (" UTC" if utc else "")
    return f"{when} · {s.role}" if s.role else when


def render_memory_results(con: Any, results: list[MemoryResult]) -> None:
    """Results as a table on a terminal; through a pipe one line per result, `score id path
    title snippet` tab-separated (the explain trace as JSON after it when asked)."""
    from rich.table import Table
    from rich.text import Text

    if plain(con):
        for result in results:
            s = result.summary
            fields = [score_text(s.score), s.id, s.path, s.title, flat(s.snippet)]
            if result.explain is not None:
                fields.append(_explain(result.explain))
            record(con, *fields)
        return
    table = Table("#", "score", "note", box=None, show_lines=False, padding=(0, 1))
    titles = _titles(results)
    for i, result in enumerate(results, 1):
        s = result.summary
        cell = Text.assemble(safe(s.title, "bold"), " ", safe(s.path, "dim"))
        if (moment := said(s)) is not None:
            cell.append("\n" + clean(moment, inline=True), style="cyan")
        if s.snippet:
            cell.append("\n" + flat(s.snippet))
        for turn, text in _context(result, titles):
            cell.append(f"\n{'↰' if turn.offset < 0 else '↳'} {text}", style="dim")
        related = []
        for near, arrow in ((result.parents, "↑"), (result.links_out, "→"), (result.links_in, "←")):
            related += [f"{arrow} {clean(_title_of(n, titles), inline=True)}" for n in near]
        if related:
            cell.append("\n" + "  ".join(related[:6]), style="dim")
        if result.explain is not None:
            cell.append("\n" + clean(_explain(result.explain)), style="dim")
        table.add_row(str(i), score_text(s.score), cell)
    con.print(table)


def _context(result: MemoryResult, titles: dict[str, str]) -> list[tuple[SessionTurn, str]]:
    """A conversation result's session turns in the order said, each as one safe line: its
    text, or the title of the result it is."""
    turns = sorted(result.context, key=lambda t: t.offset)
    return [(t, flat(t.text) if t.text is not None else clean(titles.get(t.id, t.id), inline=True)) for t in turns]


def _link(n: Neighbour, titles: dict[str, str]) -> str:
    """A neighbour as a wikilink to its title (`get TITLE` reads it), or its id in code
    when the title would not survive as one (brackets, pipes, backticks, no title)."""
    title = _title_of(n, titles)
    hops = f" ({n.hops} hops)" if n.hops > 1 else ""
    if not title or any(c in title for c in "[]|`#^") or title == n.id:
        return f"`{clean(n.id, inline=True)}`{hops}"
    return f"[[{clean(title, inline=True)}]]{hops}"


def markdown(results: list[MemoryResult], heading: str | None = None) -> str:
    """Results as compact markdown for a prompt: per result a heading with its rank and
    title, a line of path, id and score, tags, the snippet as a quote, then its links.

    Note text is data: every field is one line (`clean(inline=True)`/`flat`), and every
    line starts with markup of ours, so a note cannot open a heading, list or fence."""
    titles = _titles(results)
    lines = [f"# {clean(heading, inline=True)}", ""] if heading else []
    for i, r in enumerate(results, 1):
        s = r.summary
        lines.append(f"## {i}. {clean(s.title, inline=True)}")
        meta = [f"path: {clean(s.path, inline=True)}", f"id: {clean(s.id, inline=True)}"]
        if (moment := said(s)) is not None:
            meta.insert(0, f"said: {clean(moment, inline=True)}")
        if s.score is not None:
            meta.append(f"score: {score_text(s.score)}")
        if r.tags:
            meta.append("tags: " + " ".join(f"#{clean(t, inline=True)}" for t in r.tags))
        lines.append(" · ".join(meta))
        if s.snippet:
            lines.append(f"> {flat(s.snippet)}")
        for turn, text in _context(r, titles):
            lines.append(f"{'said before' if turn.offset < 0 else 'said after'}: {text}")
        links = [
            f"{label}: " + ", ".join(_link(n, titles) for n in getattr(r, name))
            for name, label in RELATIONS
            if getattr(r, name)
        ]
        if links:
            lines.append(" · ".join(links))
        if r.duplicates:
            lines.append("duplicates: " + ", ".join(clean(d, inline=True) for d in r.duplicates))
        if r.explain is not None:
            lines.append(f"explain: {clean(_explain(r.explain), inline=True)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def emit_markdown(data: SearchResult) -> None:
    """`--format md`: the results as markdown on stdout (a line saying there are none when
    there are none); the warnings already went to stderr."""
    if data.results:
        text = markdown(data.results, f"Search: {data.query}")
    else:
        text = f"No results for {clean(data.query, inline=True)!r}.\n"
    sys.stdout.write(text)
    sys.stdout.flush()


def render_results(con: Any, data: SearchResult) -> None:
    """Search results for people, and a summary line (on stderr through a pipe). Warnings
    are not repeated here: the service already sent them to stderr."""
    from rich.text import Text

    summary = f"{data.returned} results, mode {data.mode}, {data.search_time_ms} ms, ~{data.tokens_used} tokens"
    if not data.results:
        message = f"No results for {str(data.query)!r}."  # repr() shows control characters as escapes
        notice(message) if plain(con) else con.print(Text(message))
        return
    render_memory_results(con, data.results)
    notice(summary) if plain(con) else con.print(Text(summary, style="dim"))


def register(app: typer.Typer) -> None:
    @app.command("search")
    def search(
        ctx: typer.Context,
        query: Annotated[str, typer.Argument(help="What to look for, in natural language.")],
        mode: Annotated[str, typer.Option("--mode", help=" | ".join(MODES))] = DEFAULT_MODE,
        limit: Annotated[int | None, typer.Option("--limit", help="Maximum results (default from config).")] = None,
        scope: ScopeOpt = None,
        tag: TagOpt = None,
        type_: TypeOpt = None,
        memory_type: MemoryTypeOpt = None,
        project: ProjectOpt = None,
        since: SinceOpt = None,
        until: UntilOpt = None,
        min_trust: Annotated[float | None, typer.Option("--min-trust", help="Minimum trust_score.")] = None,
        min_confidence: Annotated[float | None, typer.Option("--min-confidence", help="Minimum confidence.")] = None,
        min_importance: Annotated[float | None, typer.Option("--min-importance", help="Minimum importance.")] = None,
        include_expired: IncludeExpiredOpt = False,
        bm25_weight: Annotated[float | None, typer.Option("--bm25-weight", help="Weight of the BM25 ranking.")] = None,
        embedding_weight: Annotated[
            float | None, typer.Option("--embedding-weight", help="Weight of the vector ranking.")
        ] = None,
        rrf_k: Annotated[float | None, typer.Option("--rrf-k", help="RRF constant k.")] = None,
        trust_bias: Annotated[float | None, typer.Option("--trust-bias", help="Trust bias of the final score.")] = None,
        graph_depth: Annotated[int | None, typer.Option("--graph-depth", help="Hops of neighbours to include.")] = None,
        no_links_in: Annotated[
            bool, typer.Option("--no-links-in", help="Leave out notes linking to each result.")
        ] = False,
        no_links_out: Annotated[
            bool, typer.Option("--no-links-out", help="Leave out notes each result links to.")
        ] = False,
        no_parent: Annotated[bool, typer.Option("--no-parent", help="Leave out parents.")] = False,
        budget_tokens: Annotated[
            int | None, typer.Option("--budget-tokens", help="Pack results into N tokens (chars/4).")
        ] = None,
        explain: Annotated[bool, typer.Option("--explain", help="Show how each score was made.")] = False,
        min_score: Annotated[
            float | None,
            typer.Option("--min-score", help="Leave out results scoring below this relevance in [0, 1] (0: keep all)."),
        ] = None,
        format_: Annotated[
            str | None,
            typer.Option(
                "--format",
                help="table (for people; records through a pipe) | md (compact markdown for a prompt) | json (= --json).",
                show_default=False,
            ),
        ] = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Hybrid search (BM25 + vectors, fused into a calibrated relevance) with graph expansion (memory_search)."""
        from vaultmem.errors import UsageError
        from vaultmem.services.search import FilterSpec, SearchRequest
        from vaultmem.services.search import search as do_search

        as_json = json_mode(ctx, json_)
        if format_ is not None and format_ not in FORMATS:
            raise UsageError(f"invalid value for '--format': {format_!r} is not one of {', '.join(FORMATS)}")
        if as_json and format_ not in (None, "json"):
            raise UsageError(f"--json and --format {format_} do not go together")

        req = SearchRequest(
            query=query, mode=mode, limit=limit,
            filters=FilterSpec(
                scope=scope, tags=tag or [], types=type_ or [], memory_type=memory_type, project=project,
                since=since, until=until, min_trust=min_trust, min_confidence=min_confidence,
                min_importance=min_importance, include_expired=include_expired,
            ),
            bm25_weight=bm25_weight, embedding_weight=embedding_weight, rrf_k=rrf_k, trust_bias=trust_bias,
            graph_depth=graph_depth, include_parent=not no_parent, include_links_in=not no_links_in,
            include_links_out=not no_links_out, budget_tokens=budget_tokens, explain=explain, min_score=min_score,
        )  # fmt: skip
        with progress_hook(True) as hook:
            result = do_search(open_app(ctx, vault, ghost, progress=hook), req)
        if format_ == "md":
            emit_markdown(result)
        else:
            emit(result, as_json or format_ == "json", render_results)
