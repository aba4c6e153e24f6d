"""`vaultmem mcp`: the memory tools over the Model Context Protocol (the official `mcp` SDK).

Imported only by the `mcp` command: the SDK alone costs ~0.5-0.8 s to import. The tools and
how a call runs are SDK-free (tools.py, runner.py); this module wires them to the protocol:
tools/list from the tool table, tools/call into the Runner on a worker thread, results as
structured content (the CLI's `--json` document) plus a short text, errors as tool errors
carrying the CLI's code and message.

Identity is never a tool argument. Over stdio the ghost is the one given at start; over
HTTP it is the ghost of the bearer token that opened the session (http.py).
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server

from vaultmem import __version__
from vaultmem.errors import InvalidInput, VaultmemError, environment_error
from vaultmem.mcp.runner import Answer, Runner
from vaultmem.mcp.tools import BY_NAME, TOOLS

log = logging.getLogger("vaultmem.mcp")

INSTRUCTIONS = (
    "Long-term memory kept as markdown notes. Search before answering from memory "
    "(memory_search); save what should outlive this conversation (memory_save)."
)
# Who is asking: stdio knows it at start; HTTP from the token that opened the session (http.py).
GhostOf = Callable[[Any], str | None]


def list_tools() -> list[types.Tool]:
    return [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.input_schema(),
            output_schema=tool.output_schema(),
            annotations=_annotations(tool.annotations()),
        )
        for tool in TOOLS
    ]


def _annotations(hints: dict[str, bool]) -> types.ToolAnnotations:
    return types.ToolAnnotations(
        read_only_hint=hints["readOnlyHint"],
        destructive_hint=hints["destructiveHint"],
        idempotent_hint=hints["idempotentHint"],
        open_world_hint=hints["openWorldHint"],
    )


def result_of(answer: Answer, text_of: Callable[[Any], str] | None) -> types.CallToolResult:
    text = text_of(answer.data) if text_of else json.dumps(answer.data, ensure_ascii=False)
    extra = [w for w in answer.warnings if w.removeprefix("warning: ") not in text]
    if extra:
        text += "\n" + "\n".join(extra)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=answer.data)


def error_of(error: VaultmemError, root: Path | None = None) -> types.CallToolResult:
    """A typed error as a tool error; with `root`, the server's own paths in it are told
    relative to the vault (a broken `vaultmem.toml`, a read-only folder): a client over HTTP
    may be on another machine, and where the server keeps its vault is not its business."""
    body = error.to_dict()
    if root is not None:
        body = {k: in_vault_terms(v, root) for k, v in body.items()}
    text = json.dumps({"error": body}, ensure_ascii=False, default=str)
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def in_vault_terms(value: Any, root: Path) -> Any:
    """`value` (a string, or a list or dict holding some) with every absolute path of the
    vault `root` told relative to it: `/srv/vault/vaultmem.toml` as `vaultmem.toml`, the
    root itself as `.`."""
    if isinstance(value, str):
        for base in dict.fromkeys((str(root.resolve()), str(root.absolute()))):
            if base == os.sep:
                continue  # a vault at / : every path is inside it, and no path says less
            # the root as a whole path: not inside another (`/home/me/srv/vault`), and then a
            # separator or the path's end (not `/srv/vault2`, `/srv/vault~`)
            pattern = r"(?<![\w.~/-])" + re.escape(base) + r"(/|(?![\w.~-]))"
            value = re.sub(pattern, lambda m: "" if m.group(1) else ".", value)
        return value
    if isinstance(value, list):
        return [in_vault_terms(v, root) for v in value]
    if isinstance(value, dict):
        return {k: in_vault_terms(v, root) for k, v in value.items()}
    return value


def client_name(ctx: Any) -> str | None:
    """The MCP host's own name and version from the session's `initialize` (`clientInfo`):
    the write journal's `model` for this session's writes (vault/journal.py), where nothing
    better is said. None when the host gave none."""
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    info = getattr(params, "client_info", None)
    name, version = getattr(info, "name", None), getattr(info, "version", None)
    if not isinstance(name, str) or not name.strip():
        return None
    text = f"{name.strip()}/{version.strip()}" if isinstance(version, str) and version.strip() else name.strip()
    return text[:200]


def call_tool(
    runner: Runner, name: str, arguments: Any, ghost: str | None, model: str | None = None
) -> types.CallToolResult:
    """One tool call, start to end, on a worker thread: checked arguments, the typed use
    case, its result or its typed error. `model`: the host's name, for the journal."""
    tool = BY_NAME.get(name)
    if tool is None:
        return error_of(InvalidInput(f"unknown tool {name!r}; tools: {', '.join(BY_NAME)}"))
    try:
        return result_of(runner.call(tool.plan(arguments, ghost), ghost, model), tool.text)
    except VaultmemError as exc:
        return error_of(exc, runner.root)
    except Exception as exc:
        known = environment_error(exc)  # a read-only or full disk
        if known is not None:
            return error_of(known, runner.root)
        # The last guard of a call (Whoosh, Chroma and SQLite raise their own types): logged
        # here, a short message to the client, never a traceback, and the server serves on.
        log.exception("tool %s failed", name)
        return error_of(VaultmemError(f"internal error: {type(exc).__name__}: {exc}"), runner.root)


def build_server(root: Path, ghost_of: GhostOf, starting: subprocess.Popen[bytes] | None = None) -> Server[Any]:
    """`starting`: a watcher this process has just started (runner.py waits for it)."""
    runner = Runner(root, starting)
    tools = list_tools()

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            ghost = ghost_of(ctx)
        except VaultmemError as exc:
            return error_of(exc)
        model = client_name(ctx)
        return await anyio.to_thread.run_sync(call_tool, runner, params.name, params.arguments, ghost, model)

    return Server(
        "vaultmem",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def log_to_stderr() -> None:
    """The server's log (refused tokens, refused sessions, failed calls) on stderr, where an
    MCP host or a service manager keeps it; stdout is the protocol's, over stdio."""
    logging.basicConfig(level=logging.WARNING, format="vaultmem mcp: %(levelname)s %(name)s: %(message)s")


def serve_stdio(root: Path, ghost: str | None, starting: subprocess.Popen[bytes] | None = None) -> None:
    from mcp.server.stdio import stdio_server

    from vaultmem.mcp.unreadable import AnswersUnreadable

    log_to_stderr()

    server = build_server(root, lambda ctx: ghost, starting)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            readable = AnswersUnreadable(read_stream, write_stream)
            await server.run(readable, write_stream, server.create_initialization_options())  # type: ignore[arg-type]

    anyio.run(main)
