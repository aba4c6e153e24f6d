"""Agent memory: an agent's own notes asked about in the agent's own words (issue 24).

The README's scenario at the size of a set: thirty notes an agent made with `note create`
(a title that says the gist, a short body: "User prefers light reds" / "Earthy Pinot Noir, no
oaky Chardonnay."), private to the ghost, among 150 memories of a person's life written
through `vaultmem write`, and two or three questions per note that do not repeat its words
("what does the user like to drink"). One vault; the questions are split by note, tune and
test (data/agent_memory.json). LoCoMo's questions mostly name what they ask about; these
mostly do not, which is where a word match on "user" or "should" used to outrank meaning.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.evalkit.tasks import DATA, Task, load_offtopic
from tools.evalkit.vaults import memory_vault, run_cli, write_memories

SET = DATA / "agent_memory.json"
GHOST = "alice"
NOTE_KIND = ("preference", "private")  # the agent's notes: `note create --type --scope`


@dataclass(frozen=True)
class AgentNote:
    id: str
    title: str
    body: str
    split: str
    questions: list[dict[str, str]]


def load_set(path: Path = SET) -> tuple[list[str], list[AgentNote]]:
    """(the filler memories, the agent's notes with their questions)"""
    data = json.loads(path.read_text(encoding="utf-8"))
    notes = [AgentNote(n["id"], n["title"], n["body"], n["split"], n["questions"]) for n in data["notes"]]
    return list(data["filler"]), notes


def filler_id(i: int) -> str:
    return f"m{i + 1:03d}"


def agent_task(filler: list[str], notes: list[AgentNote]) -> Task:
    """Peers index each memory's text and each note as title + body (what the file holds)."""
    doc_ids = [filler_id(i) for i in range(len(filler))] + [n.id for n in notes]
    texts = [*filler, *(f"{n.title}\n{n.body}" for n in notes)]
    asked = [(q, n) for n in notes for q in n.questions]
    return Task(
        name="agent",
        doc_ids=doc_ids,
        texts=texts,
        queries=[q["question"] for q, _ in asked],
        query_ids=[q["id"] for q, _ in asked],
        qrels={q["id"]: {n.id: 1} for q, n in asked},
        splits={q["id"]: n.split for q, n in asked},
        measure="answer",
        offtopic=load_offtopic("agent"),
    )


def build_vault(vault: Path, filler: list[str], notes: list[AgentNote]) -> tuple[dict[str, str], dict[str, Any]]:
    """The vault as an agent makes it: the memories in one `vaultmem write`, each note with
    `note create` (private to the ghost), written once (kept while the set is unchanged),
    then indexed. Returns (note path -> doc id, the index's figures)."""
    kind, scope = NOTE_KIND

    def fill(vault: Path) -> dict[str, str]:
        writes = [{"type": "semantic", "content": text, "confidence": 0.8} for text in filler]
        answer = write_memories(vault, GHOST, writes)
        if answer.get("rejected") or answer.get("duplicates"):
            raise RuntimeError(f"vaultmem write did not write every memory: {answer.get('rejected')}")
        paths = {entry["path"]: filler_id(entry["index"]) for entry in answer.get("written", [])}
        for note in notes:
            create = ["note", "create", "--title", note.title, "--type", kind, "--scope", scope]
            made = run_cli([*create, "--body", note.body, "--vault", str(vault), "--ghost", GHOST])
            paths[made["path"]] = note.id
        return paths

    spec = {"filler": filler, "notes": [[n.id, n.title, n.body] for n in notes], "as": [GHOST, *NOTE_KIND]}
    return memory_vault(vault, GHOST, spec, fill)
