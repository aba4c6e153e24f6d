"""Issue 24, acceptance 3: the README's agent example works as printed in a vault of 150
notes, with the real model, over the CLI and over MCP: "what does the user like to drink"
finds "User prefers light reds" (whose words it does not share) first, by default.

The other 150 notes are an agent's memories of a person's life (travel, cooking, work,
money, garden, culture...) written through `write`, some of them about food and drink."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration.test_write_conversations import USER, _fill
from tests.mcp.conftest import in_memory, structured

QUESTION = "what does the user like to drink"
ANSWER = "User prefers light reds"
DISTRACTORS = [
    "The office coffee machine is descaled every Friday.",
    "Water the tomatoes every three days in summer.",
    "The user's brother brews his own beer in the garage.",
    "Bought a new kettle; the old one leaked.",
]


def memories() -> list[dict[str, Any]]:
    """150 distinct memories: things a person said (the templates of the conversation
    fixture, filled in), and a few that sit near drinks without saying what the user likes."""
    rng = random.Random(24)
    seen: list[str] = list(DISTRACTORS)
    while len(seen) < 150:
        topic = rng.choice(list(USER))
        text = _fill(rng.choice(USER[topic]), rng, topic)
        if text not in seen:
            seen.append(text)
    return [{"type": "semantic", "content": text, "confidence": 0.8} for text in seen[:150]]


@pytest.mark.slow
def test_the_readme_agent_example_finds_the_preference_first(model_vault: Path, model_cli: Cli) -> None:
    written = model_cli.ok("write", "-", ghost="alice", input=json.dumps(memories()))
    assert len(written["written"]) == 150 and written["rejected"] == []
    # as printed in the README (VAULTMEM_GHOST=alice there; --ghost here)
    created = model_cli.ok(
        "note", "create", "--title", ANSWER, "--type", "preference", "--scope", "private",
        "--body", "Earthy Pinot Noir, no oaky Chardonnay.", ghost="alice",
    )  # fmt: skip
    assert len(list(model_vault.rglob("*.md"))) >= 151
    found = model_cli.ok("search", QUESTION, "--limit", "5", "--budget-tokens", "500", ghost="alice")
    assert found["mode"] == "hybrid"
    assert [r["summary"]["title"] for r in found["results"]][:1] == [ANSWER], found["results"]
    assert found["results"][0]["summary"]["id"] == created["id"]
    md = model_cli.ok("search", QUESTION, "--format", "md", ghost="alice", json_=False)
    assert md.splitlines()[2] == f"## 1. {ANSWER}"

    async def ask(client: Any) -> None:
        doc = structured(await client.call_tool("memory_search", {"query": QUESTION, "limit": 5}))
        assert doc["mode"] == "hybrid"
        assert [r["summary"]["title"] for r in doc["results"]][:1] == [ANSWER], doc["results"]

    in_memory(model_vault, "alice", ask)
