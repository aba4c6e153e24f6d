"""`git setup` and `merge-driver`: memory that several clones write, merged by note."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vaultmem.cli.common import GhostOpt, JsonOpt, VaultOpt, json_mode, open_app
from vaultmem.cli.output import emit, record
from vaultmem.models import GitSetupResult


def _render_setup(con: Any, data: GitSetupResult) -> None:
    for line in data.attributes_added:
        record(con, "added", ".gitattributes", line)
    record(con, "driver", data.driver)


def register(app: typer.Typer) -> None:
    git_app = typer.Typer(help="Set up git for memory that several clones write.", no_args_is_help=True)
    app.add_typer(git_app, name="git")

    @git_app.command("setup")
    def setup(ctx: typer.Context, vault: VaultOpt = None, ghost: GhostOpt = None, json_: JsonOpt = False) -> None:
        """Merge notes by front matter key and body lines: the merge driver in .gitattributes
        and the repository's config (run it in each clone)."""
        from vaultmem.services.gitsetup import git_setup

        emit(git_setup(open_app(ctx, vault, ghost)), json_mode(ctx, json_), _render_setup)

    @app.command("merge-driver")
    def merge_driver(
        base: Annotated[Path, typer.Argument(help="%O: the common ancestor's version.")],
        ours: Annotated[Path, typer.Argument(help="%A: our version; the merge is written here.")],
        theirs: Annotated[Path, typer.Argument(help="%B: their version.")],
        path: Annotated[str, typer.Argument(help="%P: the note's path in the repository.")] = "",
    ) -> int:
        """git's merge driver for notes: front matter by key, the body three-way.

        Set up by `vaultmem git setup`; conflicts go in the body only. Exit 0 when clean."""
        from vaultmem.vault.merge import merge_files

        return 1 if merge_files(base, ours, theirs) else 0
