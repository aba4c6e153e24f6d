"""`review`, `commit`, `history`, `revert`: memory changes as a person reviews them in git."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from vaultmem.cli.common import CommitMessageOpt, GhostOpt, JsonOpt, ModelOpt, ReasonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.output import clean, emit, flat, plain, record
from vaultmem.models import Change, CommitResult, HistoryResult, RevertResult, ReviewResult, to_json

MD_CHANGES_PER_WRITER = 8  # a PR description a person reads in a minute


def _who(by: list[str]) -> str:
    """Who made a change: ghost/model labels from the journal, whose model a client names
    (--model, $VAULTMEM_MODEL, an MCP host's clientInfo): data, shown as such."""
    return ", ".join(clean(b, inline=True) for b in by) or "?"


def markdown(data: ReviewResult) -> str:
    """A pull request description: totals, what needs a person, then per writer its notes."""
    lines = [f"## Memory changes ({clean(data.range, inline=True)})", ""]
    writers = ", ".join(f"{clean(w, inline=True)} {sum(k.values())}" for w, k in data.by_ghost.items())
    lines.append(f"{len(data.changes)} notes changed" + (f" — {writers}" if writers else "") + ".")
    flagged = [c for c in data.changes if c.flags]
    if flagged:
        lines += ["", f"### Needs a person ({len(flagged)})", ""]
        for c in flagged[:12]:
            for f in c.flags:
                mark = "⛔" if f.blocking else "⚠"
                lines.append(f"- {mark} `{clean(c.path, inline=True)}`: {flat(f.reason)}")
    by_writer: dict[str, list[Change]] = {}
    for c in data.changes:
        by_writer.setdefault(c.by[0].split("/")[0] if c.by else "?", []).append(c)
    for writer, changes in by_writer.items():
        counts = data.by_ghost.get(writer, {})
        tally = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
        lines += ["", f"### {clean(writer, inline=True)}: {tally or len(changes)}", ""]
        for c in changes[:MD_CHANGES_PER_WRITER]:
            lines.append(f"- **{c.kind}** [[{clean(c.title, inline=True)}]]: {flat(c.summary)} _({_who(c.by)})_")
        if len(changes) > MD_CHANGES_PER_WRITER:
            lines.append(f"- … and {len(changes) - MD_CHANGES_PER_WRITER} more (`vaultmem review --json`)")
    return "\n".join(lines) + "\n"


def _render(con: Any, data: ReviewResult) -> None:
    """Through a pipe one tab-separated line per change (kind, by, path, summary, flags); on
    a terminal, the markdown digest."""
    if plain(con):
        for c in data.changes:
            record(con, c.kind, _who(c.by), c.path, c.summary, "; ".join(f.code for f in c.flags))
        return
    from rich.text import Text

    con.print(Text(markdown(data)))


def register(app: typer.Typer) -> None:
    @app.command("review")
    def review(
        ctx: typer.Context,
        rev: Annotated[
            str | None,
            typer.Argument(help="A commit (its change), A..B, or nothing: everything not yet committed."),
        ] = None,
        since: Annotated[str | None, typer.Option("--since", help="Changes since 7d, 12h, 2w or a date.")] = None,
        by: Annotated[
            str | None, typer.Option("--by", help="Only the changes of this writer: a ghost, person or hand.")
        ] = None,
        format_: Annotated[str, typer.Option("--format", help="table, md (a PR description) or json.")] = "table",
        check: Annotated[
            bool, typer.Option("--check", help="Exit 1 when a change holds a secret or crossed scopes by hand.")
        ] = False,
        staged: Annotated[
            bool, typer.Option("--staged", help="What is staged for the next commit (a pre-commit hook).")
        ] = False,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> int:
        """Digest of memory changes: who changed which note how, and what needs a person.

        With --ghost, that ghost's view and its own changes."""
        from vaultmem.errors import InvalidInput
        from vaultmem.services.review import review as do_review

        if format_ not in ("table", "md", "json"):
            raise InvalidInput(f"--format must be table, md or json, not {format_!r}")
        app_ = open_app(ctx, vault, ghost)
        result = do_review(app_, rev, since, by or app_.ghost, staged)
        if format_ == "md" and not json_mode(ctx, json_):
            sys.stdout.write(markdown(result))
        else:
            emit(result, json_mode(ctx, json_) or format_ == "json", _render)
        return 1 if check and result.blocking else 0

    @app.command("commit")
    def commit(
        ctx: typer.Context,
        message: CommitMessageOpt = None,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> int:
        """Commit pending memory changes, one commit per ghost (a person's edits as theirs).

        Only notes and the write journal; a change that adds a secret or moves a note
        across scopes by hand is held back for a person (exit 1, listed in `held`)."""
        from vaultmem.services.commits import commit_pending

        result = commit_pending(open_app(ctx, vault, ghost, model=model, reason=reason), message)
        emit(result, json_mode(ctx, json_), _render_commits)
        return 1 if result.held else 0

    @app.command("history")
    def history(
        ctx: typer.Context,
        ref: Annotated[str, typer.Argument(help="Note id, path, title or alias.")],
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """The versions of one note across renames: when, who, what changed."""
        from vaultmem.services.history import note_history

        emit(note_history(open_app(ctx, vault, ghost), ref), json_mode(ctx, json_), _render_history)

    @app.command("revert")
    def revert(
        ctx: typer.Context,
        target: Annotated[str | None, typer.Argument(help="A note (with --to) or a commit to undo.")] = None,
        to: Annotated[str | None, typer.Option("--to", help="With a note: bring it back to this revision.")] = None,
        by: Annotated[str | None, typer.Option("--by", help="Undo every change of this ghost (with --since).")] = None,
        since: Annotated[str | None, typer.Option("--since", help="With --by: from this revision on.")] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what it would do; change nothing.")] = False,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> int:
        """Undo an agent's changes as a new change; a later edit of the same lines is a conflict."""
        from vaultmem.services.reverts import revert as do_revert

        app_ = open_app(ctx, vault, ghost, model=model, reason=reason)
        result = do_revert(app_, target, to, by, since, dry_run)
        emit(result, json_mode(ctx, json_), _render_revert)
        return 4 if result.conflicts else 0  # a dry run exits as the revert would


def render_held(con: Any, held: list[dict[str, Any]]) -> None:
    """Changes left uncommitted for a person: `held<TAB>path<TAB>reasons`."""
    for h in held:
        record(con, "held", h.get("path"), "; ".join(h.get("reasons") or []))


def _render_commits(con: Any, data: CommitResult) -> None:
    render_held(con, data.held)
    if not data.commits:
        con.print("nothing to commit", markup=False)
    for c in data.commits:
        record(con, c.sha[:10], c.by, c.message.split("\n", 1)[0]) if plain(con) else con.print(
            f"{c.sha[:10]} {c.message.splitlines()[0]} ({len(c.paths)} files)", markup=False
        )


def _render_history(con: Any, data: HistoryResult) -> None:
    for v in data.versions:
        fields = [v.commit[:10] if v.commit else "uncommitted", v.at or "", _who(v.by), v.path, v.kind, v.summary]
        if plain(con):
            record(con, *fields)
        else:
            con.print(" · ".join(clean(f, inline=True) for f in fields), markup=False)


def _render_revert(con: Any, data: RevertResult) -> None:
    for r in data.restored:
        record(con, "dry-run" if data.dry_run else "reverted", r.get("action"), r.get("path"))
    for c in data.conflicts:
        record(con, "conflict", c.get("path"), c.get("reason"))
    if data.review is not None and not plain(con):
        con.print(to_json(data.review), markup=False)
