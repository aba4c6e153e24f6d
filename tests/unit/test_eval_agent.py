"""The agent-memory evaluation set (tools/evalkit/agent.py): what the task holds, and that its
split is by note, so no test question asks about a note a tune question asks about."""

from __future__ import annotations

from collections import Counter

from tools.evalkit.agent import agent_task, load_set


def test_every_question_has_one_answer_and_notes_split_whole() -> None:
    filler, notes = load_set()
    task = agent_task(filler, notes)
    assert len(filler) == 150 and len(set(filler)) == 150
    assert len(task.doc_ids) == len(set(task.doc_ids)) == len(task.texts) == 180
    assert len(task.query_ids) == len(set(task.query_ids)) == len(task.queries)
    assert all(len(rel) == 1 and set(rel) <= {n.id for n in notes} for rel in task.qrels.values())
    split_of_note = {n.id: n.split for n in notes}
    for qid, rel in task.qrels.items():
        (answer,) = rel
        assert task.splits[qid] == split_of_note[answer]
    assert Counter(task.splits.values()) == {"tune": 37, "test": 24}
    assert len(task.offtopic) == 20
    # the notes are texts the peers see as the file holds them: title, then body
    assert task.texts[task.doc_ids.index("n01")] == "User prefers light reds\nEarthy Pinot Noir, no oaky Chardonnay."
