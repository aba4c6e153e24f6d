"""The watcher decodes the index's posting lists ahead (FullTextIndex.warm, issue 14: a
first query at 50k notes spent ~9 ms of ~50 decoding its own). Warming changes no result,
reads each segment once, stops when asked, and keeps within its budget."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration._vaults import generate, make_vault
from vaultmem.index import bm25, fulltext
from vaultmem.index.documents import Filters
from vaultmem.index.fulltext import FIELD_BOOSTS, FullTextIndex

QUERIES = ["vector index", "graph link budget", "memory agent ghost", "token"]
FILTERS = Filters(readers=("public", "ghost:alice"), now=int(time.time()))


def _size(reader: Any) -> int:
    """Postings of one segment, as its lexicon counts them."""
    return sum(info.doc_frequency() for field in FIELD_BOOSTS for _, info in reader.iter_field(field))


def _postings_in(ix: FullTextIndex) -> int:
    return sum(_size(sub.reader()) for sub, _ in ix._current_searcher().leaf_searchers())


def _results(ix: FullTextIndex) -> list[list[tuple[str, float]]]:
    return [[(h.path, h.score) for h in ix.search(q, FILTERS, 15)] for q in QUERIES]


@dataclass(frozen=True)
class Segmented:
    root: Path
    directory: Path
    expected: list[list[tuple[str, float]]]  # QUERIES' results from a cold index


@pytest.fixture
def segmented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Segmented:
    """A 120-note vault indexed in several segments, and what a cold index answers."""
    root = make_vault(tmp_path / "v")
    generate(root, 120)
    monkeypatch.setattr(fulltext, "SEGMENT_CHARS", 30_000)
    Cli(root).ok("index", "--full")
    directory = root / ".vaultmem" / "whoosh"
    cold = FullTextIndex(directory)
    expected = _results(cold)
    cold.close()
    return Segmented(root, directory, expected)


class _Reads(list[tuple[str, str]]):
    def __init__(self) -> None:
        super().__init__()
        self.segments: list[str] = []


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The (field, term) whose posting lists are decoded from the index (a word a segment
    does not hold is looked up in its lexicon and found missing, nothing to decode), and
    in `reads.segments` the segment of each."""
    seen = _Reads()
    decode = bm25.postings

    def counted(reader: Any, field: str, term: str) -> Any:
        got = decode(reader, field, term)
        if len(got[0]):
            seen.append((field, term))
            seen.segments.append(bm25.SegmentCache.segment_key(reader))
        return got

    monkeypatch.setattr(bm25, "postings", counted)
    return seen


def test_warm_decodes_every_posting_list_once_and_changes_no_result(
    segmented: Segmented, monkeypatch: pytest.MonkeyPatch, reads: list[tuple[str, str]]
) -> None:
    root, expected = segmented.root, segmented.expected
    ix = FullTextIndex(segmented.directory)
    assert len(ix._current_searcher().leaf_searchers()) >= 2
    assert all(expected), "every query finds something"
    assert ix.warm() is True
    assert ix._segments.held == _postings_in(ix) > 0
    decoded = len(reads)
    assert _results(ix) == expected
    assert len(reads) == decoded  # every search read from memory
    assert ix.warm() is True and len(reads) == decoded  # a segment is warmed once

    # A new note is a new segment: only its posting lists are read, and a warm-up asked to
    # stop at once stops, leaving it for the next.
    (root / "shared" / "zebra.md").write_text("---\ntitle: Zebra\n---\nA zebrafinch sang by the vector index.\n")
    Cli(root).ok("index")
    monkeypatch.setattr(fulltext, "WARM_STEP_WORDS", 5)  # a step smaller than the new segment
    assert ix.warm(keep_going=lambda: False) is False
    reads.clear()
    assert ix.warm() is True
    assert ("body", "zebrafinch") in reads
    assert len(reads) < decoded / 2
    assert ix._segments.held == _postings_in(ix)
    assert [h.path for h in ix.search("zebrafinch", FILTERS, 5)] == ["shared/zebra.md"]
    ix.close()


def test_warm_keeps_to_its_budget_whole_segments_and_changes_no_result(segmented: Segmented) -> None:
    ix = FullTextIndex(segmented.directory)
    readers = [sub.reader() for sub, _ in ix._current_searcher().leaf_searchers()]
    size = {id(r): _size(r) for r in readers}
    budget = sum(size.values()) // 2
    assert ix.warm(postings=budget) is True
    cache = ix._segments
    assert 0 < cache.held <= budget
    whole = [r for r in readers if cache.is_whole(r)]
    left = [r for r in readers if not cache.is_whole(r)]
    assert whole and left
    assert cache.held == sum(size[id(r)] for r in whole)
    # a segment left out would not have fitted in what the budget had left at its turn
    assert all(size[id(r)] > budget - cache.held for r in left)
    assert _results(ix) == segmented.expected  # the rest is read on demand
    ix.close()


def test_an_interrupted_warm_up_goes_on_where_it_stopped(
    segmented: Segmented, monkeypatch: pytest.MonkeyPatch, reads: _Reads
) -> None:
    """Requests keep interrupting the watcher's warm-up: each call must take it further,
    never start it over, or it would never end."""
    monkeypatch.setattr(fulltext, "WARM_STEP_WORDS", 50)
    monkeypatch.setattr(fulltext, "WARM_STEP_LISTS", 20)
    ix = FullTextIndex(segmented.directory)
    asked = 0

    def every_third_says_stop() -> bool:
        nonlocal asked
        asked += 1
        return asked % 3 != 0

    rounds = 1
    while not ix.warm(keep_going=every_third_says_stop):
        rounds += 1
        assert rounds < 10_000
    assert rounds > 10
    decoded = list(zip(reads.segments, reads, strict=True))
    assert len(decoded) == len(set(decoded))  # no posting list read twice
    assert ix._segments.held == _postings_in(ix)
    ix.close()


def test_the_note_lookup_warmed_in_parts_goes_on_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher reads each note's filter metadata ahead in batches, stopping at each
    request (views.warm_note_lookup): cut short, it goes on at the next call, and once done a
    dense search's lookup makes no note's metadata again while the db is unchanged."""
    from vaultmem.index import documents
    from vaultmem.index.statedb import StateDB
    from vaultmem.index.vectors import owner_key
    from vaultmem.index.views import WarmViews
    from vaultmem.paths import StatePaths

    root = make_vault(tmp_path / "v")
    paths = generate(root, 450)
    Cli(root).ok("index")
    db = StateDB(StatePaths(root).db)
    made: list[str] = []
    doc_for = documents.doc_for
    monkeypatch.setattr(documents, "doc_for", lambda rec, body: made.append(rec.path) or doc_for(rec, body))
    views = WarmViews()
    calls = iter([True, False])  # one batch, then a request arrives
    assert views.warm_note_lookup(db, lambda: next(calls, False)) is False
    assert 0 < len(made) < 450
    assert views.warm_note_lookup(db, lambda: True) is True
    assert sorted(made) == sorted(f"{p}" for p in paths) and len(set(made)) == len(made)
    made.clear()
    lookup = views.note_lookup(db)
    found = lookup({owner_key(p) for p in paths})
    assert made == [] and {meta["path"] for meta in found.values()} == set(paths)
    db.close()
