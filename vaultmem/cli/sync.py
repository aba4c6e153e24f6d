"""`git setup`, `sync` and `merge-driver`: memory that several clones write, merged by note."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vaultmem.cli.common import CommitMessageOpt, GhostOpt, JsonOpt, ModelOpt, ReasonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.output import emit, plain, record
from vaultmem.models import GitSetupResult, SyncResult


def _render_setup(con: Any, data: GitSetupResult) -> None:
    for line in data.attributes_added:
        record(con, "added", ".gitattributes", line)
    record(con, "driver", data.driver)


def _render_sync(con: Any, data: SyncResult) -> None:
    from vaultmem.cli.review import render_held

    render_held(con, data.held)
    for c in data.commits:
        record(con, "committed", c.sha[:10], c.message.split("\n", 1)[0])
    for x in data.crossed:  # notes edited on one side and deleted on the other
        if x["restored"]:
            record(con, "brought back", x["path"], "edited on one side while deleted on the other")
        else:
            record(con, "edit kept in trash", x["trashed_to"], f"{x['path']} was taken by another note")
    pulled = data.pulled
    if plain(con):
        record(con, "pulled", pulled["commits"], pulled["notes"])
        record(con, "pushed" if data.pushed else "not pushed", data.upstream)
        return
    con.print(
        f"pulled {pulled['commits']} commit(s) from {data.upstream}: {pulled['notes']} note(s) changed"
        + (f", indexed ({data.indexed})" if pulled["notes"] else ""),
        markup=False,
    )
    con.print(f"pushed to {data.upstream}" if data.pushed else "not pushed (--no-push)", markup=False)


def register(app: typer.Typer) -> None:
    git_app = typer.Typer(help="Set up git for memory that several clones write.", no_args_is_help=True)
    app.add_typer(git_app, name="git")

    @git_app.command("setup")
    def setup(ctx: typer.Context, vault: VaultOpt = None, ghost: GhostOpt = None, json_: JsonOpt = False) -> None:
        """Merge notes by front matter key and body lines: the merge driver in .gitattributes
        and the repository's config (run it in each clone)."""
        from vaultmem.services.gitsetup import git_setup

        emit(git_setup(open_app(ctx, vault, ghost)), json_mode(ctx, json_), _render_setup)

    @app.command("sync")
    def sync(
        ctx: typer.Context,
        include_hand_edits: Annotated[
            bool,
            typer.Option("--include-hand-edits", help="Commit a person's uncommitted edits too (as theirs)."),
        ] = False,
        push: Annotated[bool, typer.Option("--push/--no-push", help="Push after merging (default: push).")] = True,
        message: CommitMessageOpt = None,
        model: ModelOpt = None,
        reason: ReasonOpt = None,
        vault: VaultOpt = None,
        ghost: GhostOpt = None,
        json_: JsonOpt = False,
    ) -> int:
        """Commit pending memory changes, merge the upstream in (notes by the merge driver), push.

        Refuses (exit 4) when a person's hand edits are not yet committed (unless
        --include-hand-edits), when git is mid-merge, or when the merge leaves a note both
        sides changed on the same lines (named; resolve, git commit, sync again). Changes
        held back for a person (a secret, a move across scopes) stay uncommitted: exit 1."""
        from vaultmem.daemon.client import sync as watcher_sync
        from vaultmem.services.sync import sync as do_sync

        app_ = open_app(ctx, vault, ghost, model=model, reason=reason)
        result = do_sync(
            app_,
            include_hand_edits=include_hand_edits,
            push=push,
            message=message,
            # a running watcher indexes the pull (one reconcile) before sync returns
            indexed_by_watcher=lambda paths: watcher_sync(str(app_.root), paths),
        )
        emit(result, json_mode(ctx, json_), _render_sync)
        return 1 if result.held else 0

    @app.command("merge-driver")
    def merge_driver(
        base: Annotated[Path, typer.Argument(help="%O: the common ancestor's version.")],
        ours: Annotated[Path, typer.Argument(help="%A: our version; the merge is written here.")],
        theirs: Annotated[Path, typer.Argument(help="%B: their version.")],
        path: Annotated[str, typer.Argument(help="%P: the note's path in the repository.")] = "",
        json_: JsonOpt = False,  # every command takes it; git reads the exit code and the file only
    ) -> int:
        """git's merge driver for notes: front matter by key, the body three-way.

        Set up by `vaultmem git setup`; conflicts go in the body only. Exit 0 when clean."""
        from vaultmem.vault.merge import merge_files

        return 1 if merge_files(base, ours, theirs) else 0
