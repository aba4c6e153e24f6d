"""The filter options `search`, `query` and `list` share, declared once (as sqlite-utils
declares its `output_options`): the same names, help and meaning in every command. Dates:
`--since`/`--until` test when a note was made, `--changed-since`/`--changed-until` when it
last changed (index/documents.py created_epoch, changed_epoch)."""

from __future__ import annotations

from typing import Annotated

import typer

DATE_HELP = "ISO date or time, or relative: 30m, 2h, 3d, 1w, today, yesterday."

ScopeOpt = Annotated[
    str | None, typer.Option("--scope", help="all | shared | private | project | diary | inbox", show_default=False)
]
TypeOpt = Annotated[list[str] | None, typer.Option("--type", help="Note type (repeatable; any matches).")]
TagOpt = Annotated[list[str] | None, typer.Option("--tag", help="Tag (repeatable; all must match; nested count).")]
MemoryTypeOpt = Annotated[str | None, typer.Option("--memory-type", help="Memory-type group from vaultmem.toml.")]
ProjectOpt = Annotated[str | None, typer.Option("--project", help="Only this project's notes.")]
SinceOpt = Annotated[str | None, typer.Option("--since", help=f"Created at or after. {DATE_HELP}")]
UntilOpt = Annotated[str | None, typer.Option("--until", help=f"Created at or before. {DATE_HELP}")]
ChangedSinceOpt = Annotated[
    str | None,
    typer.Option(
        "--changed-since", "--updated-since", help=f"Changed (updated field or file) at or after. {DATE_HELP}"
    ),
]
ChangedUntilOpt = Annotated[
    str | None, typer.Option("--changed-until", help=f"Changed (updated field or file) at or before. {DATE_HELP}")
]
IncludeExpiredOpt = Annotated[bool, typer.Option("--include-expired", help="Include notes past `expires`.")]
