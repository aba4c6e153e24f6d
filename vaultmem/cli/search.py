"""`search`: hybrid retrieval with graph expansion (memory_search)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.output import emit, progress_hook


def render_results(con: Any, data: dict[str, Any]) -> None:
    from rich.table import Table

    for warning in data.get("warnings", []):
        con.print(f"[yellow]{warning}[/]")
    if not data["results"]:
        con.print(f"No results for {data['query']!r}.")
        return
    table = Table("#", "score", "note", box=None, show_lines=False, padding=(0, 1))
    for i, result in enumerate(data["results"], 1):
        s = result["summary"]
        lines = [f"[bold]{s['title']}[/] [dim]{s['path']}[/]"]
        if s.get("snippet"):
            lines.append(s["snippet"])
        related = []
        for key, arrow in (("parents", "↑"), ("links_out", "→"), ("links_in", "←")):
            related += [f"{arrow} {n['title']}" for n in result.get(key, [])]
        if related:
            lines.append("[dim]" + "  ".join(related[:6]) + "[/]")
        if "explain" in result:
            lines.append(f"[dim]{result['explain']}[/]")
        table.add_row(str(i), f"{s['score']:.4f}", "\n".join(lines))
    con.print(table)
    con.print(
        f"[dim]{data['returned']} results, mode {data['mode']}, {data['search_time_ms']} ms, ~{data['tokens_used']} tokens[/]"
    )


def register(app: typer.Typer) -> None:
    @app.command("search")
    def search(
        ctx: typer.Context,
        query: Annotated[str, typer.Argument(help="What to look for, in natural language.")],
        mode: Annotated[str, typer.Option("--mode", help="hybrid | bm25 | vector")] = "hybrid",
        limit: Annotated[int | None, typer.Option("--limit", help="Maximum results (default from config).")] = None,
        scope: Annotated[
            str | None, typer.Option("--scope", help="all | shared | private | project | diary | inbox")
        ] = None,
        tag: Annotated[
            list[str] | None, typer.Option("--tag", help="Required tag (repeatable; all must match).")
        ] = None,
        type_: Annotated[list[str] | None, typer.Option("--type", help="Note type (repeatable; any matches).")] = None,
        memory_type: Annotated[
            str | None, typer.Option("--memory-type", help="Memory-type group from vaultmem.toml.")
        ] = None,
        project: Annotated[str | None, typer.Option("--project", help="Only this project's notes.")] = None,
        since: Annotated[str | None, typer.Option("--since", help="Created on or after (ISO-8601).")] = None,
        until: Annotated[str | None, typer.Option("--until", help="Created on or before (ISO-8601).")] = None,
        min_trust: Annotated[float | None, typer.Option("--min-trust", help="Minimum trust_score.")] = None,
        min_confidence: Annotated[float | None, typer.Option("--min-confidence", help="Minimum confidence.")] = None,
        min_importance: Annotated[float | None, typer.Option("--min-importance", help="Minimum importance.")] = None,
        include_expired: Annotated[
            bool, typer.Option("--include-expired", help="Include notes past `expires`.")
        ] = False,
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
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Hybrid search (BM25 + vectors, RRF) with graph expansion (memory_search)."""
        from vaultmem.services.search import FilterSpec, SearchRequest
        from vaultmem.services.search import search as do_search

        req = SearchRequest(
            query=query, mode=mode, limit=limit,
            filters=FilterSpec(
                scope=scope, tags=tag or [], types=type_ or [], memory_type=memory_type, project=project,
                since=since, until=until, min_trust=min_trust, min_confidence=min_confidence,
                min_importance=min_importance, include_expired=include_expired,
            ),
            bm25_weight=bm25_weight, embedding_weight=embedding_weight, rrf_k=rrf_k, trust_bias=trust_bias,
            graph_depth=graph_depth, include_parent=not no_parent, include_links_in=not no_links_in,
            include_links_out=not no_links_out, budget_tokens=budget_tokens, explain=explain,
        )  # fmt: skip
        with progress_hook(True) as hook:
            result = do_search(open_app(ctx, vault, ghost, progress=hook), req)
        emit(result, json_mode(ctx, json_), render_results)
