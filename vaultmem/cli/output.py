"""Rendering: stdout is data, stderr is talk.

With `--json`, stdout gets exactly one JSON document from `to_dict()`-style data. Without
it, a rich rendering for people. Notices, warnings and progress go to stderr; progress only
on a terminal. rich is imported only when something is rendered for a person.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from vaultmem.shown import UNSAFE, clean

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

Renderer = Callable[["Console", Any], None]


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def console(stderr: bool = False) -> Console:
    """A rich console for people. On a terminal (or with FORCE_COLOR) renderers draw tables
    and colours; elsewhere (a pipe, a file) nothing is wrapped and renderers print plain
    records, one per line (see `plain` and `record`)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if _isatty(stream) else int(os.environ.get("COLUMNS", "100"))
    # No emoji codes either: ":smile:" in a path stays ":smile:".
    con = Console(file=stream, width=width, highlight=False, soft_wrap=False, emoji=False)
    con.soft_wrap = not con.is_terminal
    return con


# --- note text is data: vaultmem/shown.py ----------------------------------------------------


_ENTITY = re.compile(r"&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def markdown_text(value: Any) -> str:
    """Note text for rich's Markdown: `clean`, and each character reference (`&#x202e;`,
    `&rlm;`) that Markdown would turn into a character `clean` makes visible kept as the
    reference, so that it cannot bring back what `clean` took out."""
    import html

    def meant(ref: str) -> str:
        if not ref.startswith("#"):
            return html.unescape(f"&{ref};")
        code = int(ref[2:], 16) if ref[1:2] in "xX" and len(ref) > 2 else int(ref[1:])
        return chr(code) if code < 0x110000 else ""

    def defused(match: re.Match[str]) -> str:
        return "&amp;" + match.group()[1:] if UNSAFE.search(meant(match.group(1))) else match.group()

    return _ENTITY.sub(defused, clean(value))


def flat(value: Any) -> str:
    """Running text (a snippet, an excerpt) as one safe line: whitespace runs become one space."""
    return " ".join(clean(value).split())


def safe(value: Any, style: str = "", inline: bool = True) -> Text:
    """Note-derived text as a rich Text: never markup, escape sequences neutralised."""
    from rich.text import Text

    return Text(clean(value, inline=inline), style=style)


def plain(con: Console) -> bool:
    """True when stdout is not a terminal: print records, not tables."""
    return not con.is_terminal


def record(con: Console, *fields: Any) -> None:
    """One tab-separated line of full, unpadded, untruncated, safe fields (for grep and cut)."""
    con.file.write("\t".join(clean(f, inline=True) for f in fields) + "\n")
    con.file.flush()


def dumps(data: Any) -> str:
    """The JSON of a result (models.to_json: the one serializer) or of plain data."""
    from vaultmem.errors import VaultmemError
    from vaultmem.models import to_json

    data = to_json(data)
    # allow_nan=False: NaN and Infinity are not JSON, and an agent parsing stdout must never
    # meet them. Flags refuse non-finite numbers (cli/main.py); this is the last guard.
    try:
        if _isatty(sys.stdout):
            return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        raise VaultmemError(
            "internal error: the result holds a number JSON cannot carry (NaN or infinity); nothing printed"
        ) from None


def emit(data: Any, json_mode: bool, render: Renderer | None = None) -> None:
    if json_mode or render is None:
        sys.stdout.write(dumps(data) + "\n")
        sys.stdout.flush()
        return
    render(console(), data)


def notice(message: str) -> None:
    """A line for people on stderr (never on stdout, never in JSON); note text in it is data,
    and one line it stays (a newline in a file name must not print as a line of its own)."""
    sys.stderr.write(clean(message.rstrip("\n"), inline=True) + "\n")
    sys.stderr.flush()


def error(code: str, message: str, json_mode: bool, details: dict[str, Any] | None = None) -> None:
    if json_mode:
        payload: dict[str, Any] = {"code": code, "message": message}
        if details:
            payload.update(details)
        sys.stdout.write(json.dumps({"error": payload}, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    sys.stderr.write(f"vaultmem: error: {clean(message, inline=True)}\n")
    # the notes an error names (`paths`, as in JSON): a person reads them here, one a line
    paths = (details or {}).get("paths")
    for path in paths if isinstance(paths, list) else ():
        sys.stderr.write(f"  {clean(str(path), inline=True)}\n")
    sys.stderr.flush()


SCANNING_AFTER_S = 0.5


@contextmanager
def progress_hook(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress callback drawing a rich bar on stderr, only when stderr is a terminal."""
    if not enabled or not _isatty(sys.stderr):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=console(stderr=True), transient=True,
    )  # fmt: skip
    import threading

    tasks: dict[str, Any] = {}
    lock = threading.Lock()

    def hook(label: str, done: int, total: int) -> None:
        counted = total if total > 0 else None  # 0: a stage told without its counts (a ghost's)
        with lock:
            if "" in tasks:  # the first real step replaces the placeholder
                bar.remove_task(tasks.pop(""))
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=counted)
        bar.update(tasks[label], completed=done, total=counted)

    def scanning() -> None:
        # Long work shows within a second, even before its first step can count anything
        # (the stat walk of a large vault); quick work (most searches) never flashes a bar.
        with lock:
            if not tasks:
                tasks[""] = bar.add_task("scanning the vault", total=None)

    timer = threading.Timer(SCANNING_AFTER_S, scanning)
    timer.daemon = True
    with bar:
        timer.start()
        try:
            yield hook
        finally:
            timer.cancel()
