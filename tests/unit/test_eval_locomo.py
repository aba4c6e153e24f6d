"""The LoCoMo set and the paraphrase subsets of the evaluation (tools/evalkit), on hand-made
data: no corpora, no model."""

from __future__ import annotations

import pytest

from tools.evalkit import metrics, paraphrase, peers, report
from tools.evalkit.locomo import duplicate_aliases, locomo_task, memory_writes, parse_conversation, session_time
from tools.evalkit.tasks import Task


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00Z"),
        ("7:31 pm on 21 January, 2022", "2022-01-21T19:31:00Z"),
        ("12:09 am on 13 September, 2023", "2023-09-13T00:09:00Z"),
        ("12:30 pm on 1 March 2024", "2024-03-01T12:30:00Z"),
        ("9:05 AM on 3 Oct, 2021", "2021-10-03T09:05:00Z"),
    ],
)
def test_session_time(text: str, expected: str) -> None:
    assert session_time(text) == expected


@pytest.mark.parametrize("text", ["", "yesterday", "25:00 pm on 8 May, 2023", "1:56 pm on 8 Smarch, 2023"])
def test_session_time_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ValueError):
        session_time(text)


CONV = {
    "speaker_a": "Ann",
    "speaker_b": "Bo",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex."},
        {"speaker": "Bo", "dia_id": "D1:2", "text": "Thanks!"},
        {"speaker": "Bo", "dia_id": "D1:3", "text": "Thanks!"},
    ],
    "session_2_date_time": "10:00 am on 9 June, 2023",
    "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Thanks!", "blip_caption": "a dog"}],
    "qa": [
        {"question": "What is the name of Ann's dog?", "answer": "Rex", "evidence": ["D1:1"], "category": 4},
        {"question": "When did Ann adopt?", "answer": "May 2023", "evidence": ["D1:1"], "category": 2},
        {"question": "Trick", "evidence": ["D1:1"], "category": 5},  # adversarial: left out
        {"question": "No evidence", "evidence": [], "category": 1},  # nothing to find: left out
        {"question": "Typo", "evidence": ["D9:9"], "category": 1},  # unknown turn: left out
        {"question": "Who said thanks?", "evidence": ["D1:3", "D2:1"], "category": 1},
    ],
}


def test_parse_conversation_keeps_sessions_times_and_questions_with_evidence() -> None:
    conv = parse_conversation("conv-1", CONV)
    assert [(t.dia_id, t.when, t.session) for t in conv.turns] == [
        ("D1:1", "2023-05-08T13:56:00Z", 1),
        ("D1:2", "2023-05-08T13:56:00Z", 1),
        ("D1:3", "2023-05-08T13:56:00Z", 1),
        ("D2:1", "2023-06-09T10:00:00Z", 2),
    ]
    assert [(q.question, q.category, q.evidence) for q in conv.questions] == [
        ("What is the name of Ann's dog?", "single-hop", ("D1:1",)),
        ("When did Ann adopt?", "temporal", ("D1:1",)),
        ("Who said thanks?", "multi-hop", ("D1:3", "D2:1")),
    ]


def test_memory_writes_follow_the_corpus_readme() -> None:
    writes = memory_writes(parse_conversation("conv-1", CONV))
    assert writes[0] == {
        "type": "conversation",
        "content": "Ann: I adopted a puppy named Rex.",
        "role": "Ann",
        "source": {"timestamp": "2023-05-08T13:56:00Z", "turn_id": "D1:1"},
    }
    assert len(writes) == 4


def test_a_repeated_turn_counts_as_the_memory_it_repeats() -> None:
    conv = parse_conversation("conv-1", CONV)
    # Same words in the same session: one memory. In another session: a memory of its own.
    assert duplicate_aliases(conv) == {"conv-1/D1:3": "conv-1/D1:2"}
    task = locomo_task([conv], {"conv-1": "test"})
    assert task.qrels["conv-1:5"] == {"conv-1/D1:3": 1, "conv-1/D2:1": 1, "conv-1/D1:2": 1}
    assert task.subsets["temporal"] == {"conv-1:1"}
    assert task.groups == dict.fromkeys(["conv-1:0", "conv-1:1", "conv-1:5"], "conv-1")


def test_locomo_task_refuses_a_conversation_in_no_split() -> None:
    with pytest.raises(SystemExit, match="conv-1"):
        locomo_task([parse_conversation("conv-1", CONV)], {"conv-2": "tune"})


def test_peers_search_each_group_alone() -> None:
    task = Task(
        name="t",
        doc_ids=["g1/a", "g1/b", "g2/a"],
        texts=["x", "y", "z"],
        queries=["q1", "q2", "q3"],
        query_ids=["1", "2", "3"],
        qrels={},
        groups={"1": "g2", "2": "g1", "3": "g2"},
    )
    seen: list[tuple[list[str], list[str]]] = []

    def run(part: Task) -> list[list[str]]:
        seen.append((part.doc_ids, part.queries))
        return [list(reversed(part.doc_ids)) for _ in part.queries]

    assert peers.per_group(task, run) == [["g2/a"], ["g1/b", "g1/a"], ["g2/a"]]
    assert sorted(seen) == [(["g1/a", "g1/b"], ["q2"]), (["g2/a"], ["q1", "q3"])]


@pytest.mark.parametrize(
    ("ranked", "relevant", "expected"),
    [
        (["a", "b"], {"a": 1, "z": 1}, {"recall@5": 1.0, "recall@10": 1.0, "mrr@10": 1.0}),  # any evidence is a hit
        ([*"bcdefg", "a"], {"a": 1}, {"recall@5": 0.0, "recall@10": 1.0, "mrr@10": 1 / 7}),
        (["b"], {"a": 1}, {"recall@5": 0.0, "recall@10": 0.0, "mrr@10": 0.0}),
    ],
)
def test_evidence_measure(ranked: list[str], relevant: dict[str, int], expected: dict[str, float]) -> None:
    assert metrics.query_metrics(ranked, relevant, "evidence") == pytest.approx(expected)


@pytest.mark.parametrize(
    ("question", "answers", "expected"),
    [
        ("What does the user like to drink?", ["User prefers light reds"], 1 / 3),  # user; like, drink unseen
        ("Which wines does the user prefer?", ["User prefers light red wines"], 1.0),  # stems: wines/wine, prefer(s)
        ("What is it?", ["anything"], 0.0),  # only stop words: no content to overlap
        ("dogs cats", ["a dog", "cats and dogs"], 1.0),  # the best answer counts
        ("dogs cats", [], 0.0),
    ],
)
def test_overlap(question: str, answers: list[str], expected: float) -> None:
    assert paraphrase.overlap(question, answers) == pytest.approx(expected)


def test_least_overlap_takes_a_third_of_each_split_ties_by_id() -> None:
    overlaps = {"a": 0.1, "b": 0.9, "c": 0.5, "d": 0.1, "e": 0.0, "f": 1.0, "g": 0.2}
    splits = {"a": "tune", "b": "tune", "c": "tune", "d": "tune", "e": "test", "f": "test", "g": "test"}
    # tune: 4 questions -> 2 (a and d tie at 0.1: both); test: 3 -> 1 (e)
    assert paraphrase.least_overlap(list(overlaps), overlaps, splits) == {"a", "d", "e"}


def test_score_task_reports_named_subsets() -> None:
    task = Task(
        name="t",
        doc_ids=["x", "y"],
        texts=["", ""],
        queries=["1", "2"],
        query_ids=["q1", "q2"],
        qrels={"q1": {"x": 1}, "q2": {"y": 1}},
        splits={"q1": "test", "q2": "test"},
        subsets={"paraphrase": {"q2"}},
    )
    scores = report.score_task(task, [["x"], ["x", "y"]])
    assert scores["recall@5/test"] == 1.0
    assert scores["mrr@10/test"] == pytest.approx(0.75)
    assert scores["mrr@10/paraphrase:test"] == pytest.approx(0.5)
    assert scores["recall@5/paraphrase:tune"] == 0.0  # no question there: 0, never an error
