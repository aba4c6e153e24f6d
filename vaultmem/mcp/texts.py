"""The short text an MCP tool result carries for the model beside its structured content
(the CLI's `--json` document): a line per result, ids and paths first."""

from __future__ import annotations

from typing import Any


def search_text(data: Any) -> str:
    lines = [f"{data.get('returned', 0)} results ({data.get('mode')})"]
    for r in data.get("results", []):
        s = r.get("summary", {})
        lines.append(f"- {s.get('title')} [{s.get('id')}] {s.get('path')} score {s.get('score')}")
    for w in data.get("warnings") or []:
        lines.append(f"note: {w}")
    return "\n".join(lines)


def query_text(data: Any) -> str:
    lines = [f"{len(data.get('matches', []))} matches of {data.get('total_searched')} notes"]
    lines += [f"- {m.get('path')} relevance {m.get('relevance')}" for m in data.get("matches", [])]
    return "\n".join(lines)


def get_text(data: Any) -> str:
    note = data.get("note", {})
    return f"{note.get('title')} [{note.get('id')}] {note.get('path')} v{note.get('version')}\n\n{data.get('body', '')}"


def ref_text(data: Any) -> str:
    topic = data.get("topic") or {}
    head = f"topic {topic.get('title') if isinstance(topic, dict) else topic}: {len(data.get('results', []))} results"
    return "\n".join(
        [head, *(f"- {r.get('summary', {}).get('path')}" for r in data.get("results", []))],
    )


def write_text(data: Any) -> str:
    return f"saved: id {data.get('id')}, path {data.get('path')}, version {data.get('version')}"
