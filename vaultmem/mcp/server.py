"""`vaultmem mcp`: the memory tools over the Model Context Protocol (the official `mcp` SDK).

Imported only by the `mcp` command: the SDK alone costs ~0.5-0.8 s to import. The tools and
how a call runs are SDK-free (tools.py, runner.py); this module wires them to the protocol:
tools/list from the tool table, tools/call into the Runner on a worker thread, results as
structured content (the CLI's `--json` document) plus a short text, errors as tool errors
carrying the CLI's code and message.

Identity is never a tool argument. Over stdio the ghost is the one given at start; over
HTTP it is the ghost whose bearer token the request carries (auth.py).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server

from vaultmem import __version__
from vaultmem.mcp.runner import Outcome, Runner, error_outcome
from vaultmem.mcp.tools import BY_NAME, TOOLS

INSTRUCTIONS = (
    "Long-term memory kept as markdown notes. Search before answering from memory "
    "(memory_search); save what should outlive this conversation (memory_save)."
)
# Who is asking: stdio knows it at start; HTTP reads it from the request (auth.py).
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


def result_of(outcome: Outcome, text_of: Callable[[Any], str] | None) -> types.CallToolResult:
    if outcome.is_error:
        error = outcome.data.get("error", {})
        text = json.dumps({"error": error}, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
    text = text_of(outcome.data) if text_of else json.dumps(outcome.data, ensure_ascii=False)
    extra = [line for line in outcome.warnings.splitlines() if line.removeprefix("warning: ") not in text]
    if extra:
        text += "\n" + "\n".join(extra)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=outcome.data)


def build_server(root: Path, ghost_of: GhostOf, starting: subprocess.Popen[bytes] | None = None) -> Server[Any]:
    """`starting`: a watcher this process has just started (runner.py waits for it)."""
    runner = Runner(root, starting)
    tools = list_tools()

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = BY_NAME.get(params.name)
        if tool is None:
            outcome = error_outcome("invalid_input", f"unknown tool {params.name!r}; tools: {', '.join(BY_NAME)}")
            return result_of(outcome, None)
        ghost = ghost_of(ctx)
        outcome = await anyio.to_thread.run_sync(runner.call, tool, params.arguments, ghost)
        return result_of(outcome, tool.text)

    return Server(
        "vaultmem",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def serve_stdio(root: Path, ghost: str | None, starting: subprocess.Popen[bytes] | None = None) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(root, lambda ctx: ghost, starting)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
