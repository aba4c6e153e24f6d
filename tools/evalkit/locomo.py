"""LoCoMo conversations as an evaluation set (issue 24): what agents ask about their own memory.

Each conversation of ../shared/corpora/locomo-tune is a vault of its own. Every turn is written
as one conversation memory through `vaultmem write`, as the corpus README says: `content`
"Speaker: text", `role` the speaker, `source.timestamp` the session's date and time,
`source.turn_id` the turn's `dia_id`. A question is searched in its conversation's vault (as
the ghost that wrote the memories); a hit is any of its evidence turns among the top k. The
peers index the same turn texts, per conversation. Questions of categories 1-4 with evidence
(5, adversarial, has none to find); tune and test split by conversation (data/locomo_split.json).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tools.evalkit.tasks import DATA, Task, load_offtopic, log
from tools.evalkit.vaults import memory_vault, write_memories

FOLDER = "locomo-tune"
SPLIT_FILE = DATA / "locomo_split.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
GHOST = "eval"  # the agent whose conversation memories the vaults hold
_SESSION_TIME = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    when: str  # ISO-8601, UTC: the session's date and time
    session: int

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Asked:
    id: str
    question: str
    evidence: tuple[str, ...]  # dia_ids of the turns that answer it
    category: str


@dataclass
class Conversation:
    name: str  # the file's stem, e.g. conv-42
    turns: list[Turn]
    questions: list[Asked] = field(default_factory=list)


def session_time(text: str) -> str:
    """ "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00Z"."""
    match = _SESSION_TIME.match(text)
    if match is None:
        raise ValueError(f"LoCoMo session time {text!r} is not like '1:56 pm on 8 May, 2023'")
    hour, minute, half, day, month, year = match.groups()
    if not 1 <= int(hour) <= 12 or int(minute) > 59:
        raise ValueError(f"LoCoMo session time {text!r} is not a 12-hour clock time")
    hour24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    moment = datetime.strptime(f"{day} {month[:3]} {year}", "%d %b %Y").replace(
        hour=hour24, minute=int(minute), tzinfo=UTC
    )
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_conversation(name: str, data: dict[str, Any]) -> Conversation:
    turns: list[Turn] = []
    number = 1
    while f"session_{number}" in data:
        when = session_time(data[f"session_{number}_date_time"])
        for turn in data[f"session_{number}"]:
            turns.append(Turn(turn["dia_id"], turn["speaker"], turn["text"], when, number))
        number += 1
    known = {t.dia_id for t in turns}
    conv = Conversation(name, turns)
    for index, qa in enumerate(data.get("qa", [])):
        category = CATEGORIES.get(qa.get("category"))
        evidence = tuple(e for e in qa.get("evidence", []) if e in known)
        if category is not None and evidence:
            conv.questions.append(Asked(f"{name}:{index}", qa["question"], evidence, category))
    return conv


def load_conversations(corpora: Path) -> list[Conversation]:
    folder = corpora / FOLDER
    return [
        parse_conversation(path.stem, json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(folder.glob("conv-*.json"))
    ]


def load_split(path: Path = SPLIT_FILE) -> dict[str, str]:
    """conversation name -> "tune" | "test"."""
    split = json.loads(path.read_text(encoding="utf-8"))["split"]
    return {name: part for part in ("tune", "test") for name in split[part]}


def memory_writes(conv: Conversation) -> list[dict[str, Any]]:
    """The conversation as the `memory_writes` an agent would send (corpus README)."""
    return [
        {
            "type": "conversation",
            "content": turn.content,
            "role": turn.speaker,
            "source": {"timestamp": turn.when, "turn_id": turn.dia_id},
        }
        for turn in conv.turns
    ]


def doc_id(conv: str, dia_id: str) -> str:
    return f"{conv}/{dia_id}"


def locomo_task(convs: list[Conversation], split: dict[str, str]) -> Task:
    """Every conversation's turns and questions in one task; `groups` keeps each question with
    its own conversation's turns (peers search one conversation at a time)."""
    aliases = {c.name: duplicate_aliases(c) for c in convs}
    unsplit = [c.name for c in convs if c.name not in split]
    if unsplit:
        raise SystemExit(f"eval: LoCoMo conversations in no split of {SPLIT_FILE.name}: {unsplit}")
    task = Task(
        name="locomo",
        doc_ids=[doc_id(c.name, t.dia_id) for c in convs for t in c.turns],
        texts=[t.content for c in convs for t in c.turns],
        queries=[q.question for c in convs for q in c.questions],
        query_ids=[q.id for c in convs for q in c.questions],
        qrels={q.id: _evidence(c, q, aliases[c.name]) for c in convs for q in c.questions},
        splits={q.id: split[c.name] for c in convs for q in c.questions},
        measure="evidence",
        offtopic=load_offtopic("locomo"),
        groups={q.id: c.name for c in convs for q in c.questions},
    )
    for name in CATEGORIES.values():
        task.subsets[name] = {q.id for c in convs for q in c.questions if q.category == name}
    return task


def _evidence(conv: Conversation, asked: Asked, aliases: dict[str, str]) -> dict[str, int]:
    """The evidence turns, and for a turn that repeats an earlier one of its session word
    for word, that earlier turn too: the vault holds them as one memory."""
    docs = [doc_id(conv.name, e) for e in asked.evidence]
    return dict.fromkeys([*docs, *(aliases[d] for d in docs if d in aliases)], 1)


def build_vault(vault: Path, conv: Conversation) -> tuple[dict[str, str], dict[str, Any]]:
    """The conversation's vault, written once through `vaultmem write` (kept while its writes
    are unchanged) and indexed. Returns (note path -> doc id, the index's figures). Two turns
    with the same words in one session are one memory (write's duplicate rule): the note
    stands for the first, and the other's doc id maps to it (`aliases` in the map file)."""
    writes = memory_writes(conv)

    def fill(vault: Path) -> dict[str, str]:
        answer = write_memories(vault, GHOST, writes)
        if answer.get("rejected"):
            raise RuntimeError(f"vaultmem write rejected {len(answer['rejected'])} turns: {answer['rejected'][:3]}")
        paths: dict[str, str] = {}
        for entry in [*answer.get("written", []), *answer.get("duplicates", [])]:
            paths.setdefault(entry["path"], doc_id(conv.name, conv.turns[entry["index"]].dia_id))
        return paths

    return memory_vault(vault, GHOST, writes, fill)


def duplicate_aliases(conv: Conversation) -> dict[str, str]:
    """doc id of a turn -> doc id of the first turn of its session with the same words."""
    first: dict[tuple[int, str], str] = {}
    out: dict[str, str] = {}
    for turn in conv.turns:
        key = (turn.session, " ".join(turn.content.split()))
        primary = first.setdefault(key, doc_id(conv.name, turn.dia_id))
        if primary != doc_id(conv.name, turn.dia_id):
            out[doc_id(conv.name, turn.dia_id)] = primary
    if out:
        log(f"locomo {conv.name}: {len(out)} turns repeat an earlier turn of their session word for word")
    return out
