"""Rendering: stdout is data, stderr is talk.

With `--json`, stdout gets exactly one JSON document from `to_dict()`-style data. Without
it, a rich rendering for people. Notices, warnings and progress go to stderr; progress only
on a terminal. rich is imported only when something is rendered for a person.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

Renderer = Callable[["Console", Any], None]


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if _isatty(stream) else int(os.environ.get("COLUMNS", "100"))
    return Console(file=stream, width=width, highlight=False, soft_wrap=False)


def dumps(data: Any) -> str:
    if _isatty(sys.stdout):
        return json.dumps(data, ensure_ascii=False, indent=2)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def emit(data: Any, json_mode: bool, render: Renderer | None = None) -> None:
    if json_mode or render is None:
        sys.stdout.write(dumps(data) + "\n")
        sys.stdout.flush()
        return
    render(console(), data)


def notice(message: str) -> None:
    """A line for people on stderr (never on stdout, never in JSON)."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def error(code: str, message: str, json_mode: bool, details: dict[str, Any] | None = None) -> None:
    if json_mode:
        payload: dict[str, Any] = {"code": code, "message": message}
        if details:
            payload.update(details)
        sys.stdout.write(json.dumps({"error": payload}, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    sys.stderr.write(f"vaultmem: error: {message}\n")
    sys.stderr.flush()


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
    tasks: dict[str, Any] = {}

    def hook(label: str, done: int, total: int) -> None:
        if label not in tasks:
            tasks[label] = bar.add_task(label, total=total)
        bar.update(tasks[label], completed=done, total=total)

    with bar:
        yield hook
