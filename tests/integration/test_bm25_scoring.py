"""vaultmem's array BM25F gives Whoosh's own ranking and scores, as if the index held only
the notes the caller may see.

`bm25.score` reads Whoosh's postings and sums them with numpy, with statistics counted over
the caller's visible notes (SPEC §3: a hidden note changes no score). The reference is
Whoosh's searcher, same weighting, over an Or of the same boosted terms, on a fresh index
of only those notes. The index under test is built in several commits, with updates and
deletions, so the comparison runs over several segments and deleted documents, with and
without filters.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vaultmem.index import bm25
from vaultmem.index.documents import Filters, IndexDoc
from vaultmem.index.fulltext import BM25_B, BM25_K1, FIELD_BOOSTS, FullTextIndex

NOW = 1_800_000_000
WORDS = [
    "boundary",
    "layer",
    "transition",
    "swept",
    "wing",
    "heat",
    "transfer",
    "hypersonic",
    "flow",
    "buckling",
    "thin",
    "cylinder",
    "pressure",
    "shock",
    "wave",
    "supersonic",
    "nozzle",
    "vault",
    "sync",
    "plugin",
    "graph",
    "canvas",
    "link",
    "embed",
    "alias",
]
READERS = ("shared", "private:alice", "private:bob")


def _doc(i: int, rng: random.Random, version: int = 0) -> IndexDoc:
    reader = READERS[i % 3]
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 120)))
    return IndexDoc(
        path=f"notes/{i:03d}.md",
        id=f"id{i}",
        title=" ".join(rng.sample(WORDS, rng.randint(1, 4))) + (f" v{version}" if version else ""),
        aliases=tuple(rng.sample(WORDS, rng.randint(0, 2))),
        tags=tuple(rng.sample(("alpha", "beta"), rng.randint(0, 2))),
        body=body,
        type="note",
        scope=reader.split(":")[0],
        owner=reader.split(":")[1] if ":" in reader else "",
        project="",
        reader=reader,
        created=NOW - i * 86400,
        updated=NOW,
        expires=10**12,
        trust=0.5,
        confidence=0.5,
        importance=0.5,
        hash=f"{i}-{version}",
        prose=" ".join(rng.sample(WORDS, 3)) if i % 4 == 0 else "",
    )


LIVE: dict[Path, dict[str, IndexDoc]] = {}  # index directory -> what it holds, by path


def _apply(ft: FullTextIndex, docs: list[IndexDoc], deletes: list[str], fresh: bool = False) -> None:
    ft.apply(docs, deletes, fresh=fresh)
    live = LIVE.setdefault(ft.directory, {})
    for path in deletes:
        live.pop(path, None)
    live.update((d.path, d) for d in docs)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> FullTextIndex:
    rng = random.Random(7)
    ft = FullTextIndex(Path(tmp_path_factory.mktemp("whoosh")) / "whoosh")
    _apply(ft, [_doc(i, rng) for i in range(150)], [], fresh=True)
    _apply(ft, [_doc(i, rng) for i in range(150, 200)], [])
    _apply(ft, [_doc(i, rng, version=1) for i in range(0, 200, 9)], [f"notes/{i:03d}.md" for i in range(5, 200, 11)])
    _apply(ft, [_doc(i, rng, version=2) for i in range(3, 40, 6)], [])
    return ft


def _whoosh_ranking(ft: FullTextIndex, text: str, f: Filters, limit: int | None) -> list[tuple[str, float]]:
    """Whoosh's own BM25F over a fresh index of only the notes `f.readers` may see."""
    from whoosh import query as q

    from vaultmem.index.filter_rules import whoosh_query

    visible = [d for d in LIVE[ft.directory].values() if d.reader in f.readers]
    ref = FullTextIndex(ft.directory.parent / f"ref-{abs(hash((text, f)))}")
    try:
        ref.apply(visible, [], fresh=True)
        searcher = ref._current_searcher()
        clauses = [q.Term(field, term, boost=boost) for term in ft.terms(text) for field, boost in FIELD_BOOSTS.items()]
        hits = searcher.search(q.Or(clauses), limit=limit, filter=whoosh_query(f))
        return [(hit["path"], hit.score) for hit in hits]
    finally:
        ref.close()


QUERIES = [
    "boundary layer transition",
    "heat",
    "Hypersonic flow over a thin cylinder under pressure",
    "vault sync plugin graph canvas link embed alias",
    "alpha",
    "v1",
    "wing wing wing",
]
FILTERS = [
    Filters(readers=READERS, now=NOW),
    Filters(readers=("shared",), now=NOW),
    Filters(readers=("shared", "private:alice"), now=NOW, tags=("alpha",)),
    Filters(readers=READERS, now=NOW, since=NOW - 60 * 86400),
]


def test_index_has_several_segments_and_deletions(index: FullTextIndex) -> None:
    searcher = index._current_searcher()
    assert len(searcher.leaf_searchers()) > 1
    assert searcher.doc_count_all() > searcher.doc_count()


@pytest.mark.parametrize("f", FILTERS, ids=["all", "shared", "alice+tag", "since"])
@pytest.mark.parametrize("text", QUERIES)
def test_same_ranking_and_scores_as_whoosh(index: FullTextIndex, text: str, f: Filters) -> None:
    expected = dict(_whoosh_ranking(index, text, f, None))
    got = index.search(text, f, 20)
    assert expected, "every query of the table matches something"
    assert len(got) == min(20, len(expected))
    # The same score for every note, and the best 20 of them. Not to the last digit: Whoosh
    # keeps each document's field length in one byte (lossy) and averages exact totals,
    # which cannot be split by reader, so the average here is over the stored lengths
    # (scores differ by under 1%; docnums differ too, so near-equal scores may swap).
    assert [h.score for h in got] == pytest.approx([expected[h.path] for h in got], rel=1e-2)
    assert sum(expected[h.path] for h in got) == pytest.approx(sum(sorted(expected.values())[-20:]), rel=1e-3)
    assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)
    assert [h.rank for h in got] == list(range(1, len(got) + 1))


def test_hidden_notes_change_no_score(tmp_path: Path) -> None:
    """Bob's scores are the same whatever alice's private notes say (SPEC §3)."""
    rng = random.Random(11)
    docs = [_doc(i, rng) for i in range(60)]
    bob = Filters(readers=("shared", "private:bob"), now=NOW)
    runs: list[list[tuple[str, float]]] = []
    for planted in ("", " ".join(["waldocorn"] * 40 + ["heat"] * 40)):
        ft = FullTextIndex(tmp_path / f"w{len(runs)}")
        secret = replace(docs[1], path="notes/secret.md", reader="private:alice", scope="private", body=planted)
        ft.apply([*docs, secret], [], fresh=True)
        runs.append([(h.path, h.score) for h in ft.search("waldocorn heat transfer", bob, 30)])
        assert ft.term_weights("waldocorn heat", bob) == ft.term_weights("waldocorn heat", bob)
        ft.close()
    assert runs[0] and runs[0] == runs[1]


def test_empty_filter_matches_nothing(index: FullTextIndex) -> None:
    f = replace(FILTERS[0], readers=("private:nobody",))
    assert index.search("heat", f, 10) == []
    assert index.count(f) == 0


def test_search_sees_new_segments_and_deletions(tmp_path: Path) -> None:
    rng = random.Random(3)
    ft = FullTextIndex(tmp_path / "whoosh")
    _apply(ft, [_doc(i, rng) for i in range(30)], [], fresh=True)
    f = Filters(readers=READERS, now=NOW)
    first = ft.search("heat transfer", f, 50)
    assert first
    gone = first[0].path
    _apply(ft, [replace(_doc(99, rng), path="notes/new.md", title="zeppelin heat")], [gone])
    again = ft.search("heat transfer zeppelin", f, 50)
    assert gone not in [h.path for h in again]
    assert again[0].path == "notes/new.md"
    assert {h.path for h in again} == {p for p, _ in _whoosh_ranking(ft, "heat transfer zeppelin", f, 50)}


def _whole_index_paths(ft: FullTextIndex, f: Filters) -> set[str]:
    """What Whoosh itself matches for `f` over the whole index, deleted documents left out."""
    from vaultmem.index.filter_rules import whoosh_query

    searcher = ft._current_searcher()
    reader = searcher.reader()
    docs = searcher.docs_for_query(whoosh_query(f))
    return {searcher.stored_fields(d)["path"] for d in docs if not reader.is_deleted(d)}


def test_filter_masks_kept_per_segment_follow_edits_and_the_clock(tmp_path: Path) -> None:
    """Filter masks are kept per segment across commits (fulltext._segment_mask): after
    every commit, with deletions in old segments and notes expiring as minutes pass, the
    mask still allows exactly what Whoosh matches over the whole index."""
    rng = random.Random(5)
    ft = FullTextIndex(tmp_path / "whoosh")
    docs = [_doc(i, rng) for i in range(40)]
    docs[4] = replace(docs[4], expires=NOW + 90)  # expires in the second minute
    docs[7] = replace(docs[7], expires=NOW - 10)  # already expired
    ft.apply(docs, [], fresh=True)
    filters = [*FILTERS, replace(FILTERS[0], include_expired=True)]
    for step in range(6):
        for clock in (NOW, NOW + 61, NOW + 150):
            for f in filters:
                g = replace(f, now=clock)
                mask = ft._filter_docs(ft._current_searcher(), g)
                searcher = ft._current_searcher()
                got = {searcher.stored_fields(int(d))["path"] for d in np.flatnonzero(mask)}
                assert got == _whole_index_paths(ft, replace(g, now=clock - clock % 60)), (step, clock, f)
        # an edit (new segment, a deletion in an old one) and a deletion
        edited = replace(_doc(step * 5, rng, version=step + 1), expires=NOW + 30 if step % 2 else 10**12)
        ft.apply([edited], [f"notes/{step * 5 + 2:03d}.md"])
    ft.close()


BM25_TABLE = [
    # idf, tf, fl, avgfl: the BM25 of Whoosh's scoring.bm25
    (1.0, 1.0, 10.0, 10.0),
    (2.5, 3.0, 5.0, 10.0),
    (0.3, 0.7, 40.0, 12.5),
    (4.0, 12.0, 100.0, 20.0),
]


@pytest.mark.parametrize(("idf", "tf", "fl", "avgfl"), BM25_TABLE)
def test_bm25_is_whooshs_formula(idf: float, tf: float, fl: float, avgfl: float) -> None:
    from whoosh.scoring import bm25 as whoosh_bm25

    got = bm25.bm25(idf, np.array([tf]), np.array([fl]), avgfl, BM25_B, BM25_K1)
    assert got[0] == pytest.approx(whoosh_bm25(idf, tf, fl, avgfl, BM25_B, BM25_K1), rel=1e-12)


TOP_TABLE = [
    # scores, allowed, limit, expected docnums
    ([0.0, 1.0, 3.0, 2.0], [True] * 4, 2, [2, 3]),
    ([0.0, 1.0, 3.0, 2.0], [True, True, False, True], 5, [3, 1]),
    ([1.0, 1.0, 1.0], [True] * 3, 2, [0, 1, 2]),  # ties at the cut: all, for the caller to order
    ([0.0, 0.0], [True, True], 3, []),  # no positive score, no match
    ([5.0, 4.0, 4.0, 4.0, 1.0], [True] * 5, 3, [0, 1, 2, 3]),  # a tie across the cut
]


@pytest.mark.parametrize(("scores", "allowed", "limit", "expected"), TOP_TABLE)
def test_top(scores: list[float], allowed: list[bool], limit: int, expected: list[int]) -> None:
    got = bm25.top(np.array(scores), np.array(allowed), limit)
    assert [d for d, _ in got] == expected
    assert [s for _, s in got] == [scores[d] for d in expected]
