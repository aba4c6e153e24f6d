"""Options every command takes, and the one way a command opens the vault."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from vaultmem.services.app import App

VaultOpt = Annotated[
    Path | None,
    typer.Option(
        "--vault",
        help="Vault folder. Default: $VAULTMEM_VAULT, else the nearest folder holding vaultmem.toml.",
        show_default=False,
    ),
]
GhostOpt = Annotated[
    str | None,
    typer.Option("--ghost", help="Acting ghost (agent identity). Default: $VAULTMEM_GHOST.", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", "-j", help="Print exactly one JSON document on stdout.")]
ExpectVersionOpt = Annotated[
    int | None,
    typer.Option(
        "--expect-version",
        help="Fail with exit 4, changing nothing, unless the note is at this version (a hand edit is a new version).",
    ),
]
AllowSecretOpt = Annotated[
    bool,
    typer.Option(
        "--allow-secret",
        help="Store text in which a secret (API key, token, private key, password) was detected; refused otherwise.",
    ),
]


def globals_of(ctx: typer.Context) -> dict[str, Any]:
    root = ctx.find_root()
    return root.obj if isinstance(root.obj, dict) else {}


def json_mode(ctx: typer.Context, flag: bool) -> bool:
    return flag or bool(globals_of(ctx).get("json"))


ModelOpt = Annotated[
    str | None,
    typer.Option("--model", help="The model making this write, for the journal and review (or $VAULTMEM_MODEL)."),
]
ReasonOpt = Annotated[
    str | None,
    typer.Option("--reason", help="Why this write is made, for the journal and review (or $VAULTMEM_REASON)."),
]
CommitMessageOpt = Annotated[
    str | None, typer.Option("-m", "--message", help="A line to put first in every commit message.")
]
PROVENANCE_MAX = 500  # characters of a model name or a reason


def provenance(ctx: typer.Context, model: str | None, reason: str | None) -> tuple[str | None, str | None]:
    """(model, reason) of a write: the command's flags, else the root's, else $VAULTMEM_MODEL
    and $VAULTMEM_REASON (which travel with a command the watcher runs)."""
    import os

    from vaultmem.errors import InvalidInput

    g = globals_of(ctx)
    out = []
    for name, value in (("model", model), ("reason", reason)):
        value = value or g.get(name) or os.environ.get(f"VAULTMEM_{name.upper()}") or None
        if value is not None and len(value) > PROVENANCE_MAX:
            raise InvalidInput(f"--{name} is longer than {PROVENANCE_MAX} characters")
        out.append(value)
    return out[0], out[1]


def open_app(
    ctx: typer.Context,
    vault: Path | None,
    ghost: str | None,
    progress: Any = None,
    model: str | None = None,
    reason: str | None = None,
) -> App:
    app = _open_app(ctx, vault, ghost, progress)
    app.model, app.reason = provenance(ctx, model, reason)
    return app


def _open_app(ctx: typer.Context, vault: Path | None, ghost: str | None, progress: Any = None) -> App:
    from vaultmem.cli.output import notice
    from vaultmem.services.app import App

    g = globals_of(ctx)
    provider = g.get("app_provider")
    if provider is not None:
        # Inside the watcher (vaultmem/daemon/bridge.py): its warm App, as this request's ghost.
        app: App = provider(vault or g.get("vault"), ghost or g.get("ghost"), notice, progress)
        return app
    import os

    from vaultmem.cli.notices import show_model_notices
    from vaultmem.daemon.client import synced_after_write
    from vaultmem.daemon.forwarding import UNRESPONSIVE_ENV
    from vaultmem.services.freshness import AsTheyAre

    unresponsive = os.environ.get(UNRESPONSIVE_ENV)  # set when forwarding met a hung watcher
    if unresponsive:
        notice(f"warning: the watcher did not answer ({unresponsive}): answering without it, from the index as it is")
    else:
        show_model_notices()  # a first search may prepare the embedding model: ~20 s, said on stderr
    freshness = AsTheyAre(unresponsive) if unresponsive else None
    app = App.open(
        vault or g.get("vault"), ghost or g.get("ghost"), notice=notice, progress=progress, freshness=freshness
    )
    app.after_write = synced_after_write(str(app.root), notice)
    ctx.call_on_close(app.close)
    return app


# What a command reads from stdin or a file is read up to a bound, then refused: `--body-file
# /dev/zero` read until memory ran out (a traceback, or the process killed). A note's text is
# read up to a note's size (vault/layout.py MAX_NOTE_BYTES); a `write` batch holds many.
BATCH_LIMIT = 256 * 1024 * 1024


def _bounded(stream: Any, what: str, limit: int | None) -> Any:
    """`stream.read()`, refused past `limit` (bytes, or characters of a text stream; None:
    a note's size)."""
    from vaultmem.errors import InvalidInput
    from vaultmem.vault.layout import MAX_NOTE_BYTES

    limit = limit or MAX_NOTE_BYTES
    data = stream.read(limit + 1)
    if len(data) > limit:
        mib = limit // (1024 * 1024)
        raise InvalidInput(f"{what} is over {mib} MiB: at most {mib} MiB is read; nothing written")
    return data


def read_stdin(what: str, limit: int | None = None) -> str:
    """All of stdin as UTF-8 text, up to `limit` bytes (None: a note's size); other bytes
    are invalid input, not a crash."""
    from vaultmem.errors import InvalidInput

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return str(_bounded(sys.stdin, what, limit))
    try:
        return _bounded(stream, what, limit).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"stdin is not valid UTF-8 (byte {exc.start}); {what} must be UTF-8 text") from None


def read_text_arg(value: str | None, what: str) -> str | None:
    """`-` means stdin; anything else is the text itself."""
    if value == "-":
        return read_stdin(what)
    return value


def read_file_arg(path: str, what: str, limit: int | None = None) -> str:
    from vaultmem.errors import InvalidInput

    if path == "-":
        return read_stdin(what, limit)
    try:
        with open(path, "rb") as fh:
            return _bounded(fh, what, limit).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {what} {path!r}: {exc}") from None
