"""The dense retriever filters in Python (`predicate`) what Chroma would filter with
`chroma_where` and Whoosh with `whoosh_query`: three readings of the one table of
index/filter_rules.py.

All must agree on every filter, or a filter would mean one thing in BM25 and another in the
vector half — and the access filter is the privacy boundary. The table below is checked
against a real embedded Chroma and a real Whoosh index: the rows `predicate` keeps are
exactly the rows Chroma's `where` returns, and their notes exactly the notes Whoosh's filter
query matches. Vectors here are random: this is plumbing, not search quality.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from vaultmem.index.chunking import Chunk
from vaultmem.index.documents import Filters, IndexDoc
from vaultmem.index.filter_rules import chroma_where, predicate, whoosh_query
from vaultmem.index.fulltext import FullTextIndex
from vaultmem.index.vectors import (
    NoteLookup,
    VectorIndex,
    chunk_metadata,
    make_client,
    note_metadata,
    owner_key,
)

NOW = 1_800_000_000
DIMS = 16
READERS = ("shared", "private:alice", "private:bob", "project:apollo")


def _doc(i: int, rng: random.Random) -> IndexDoc:
    reader = READERS[i % len(READERS)]
    scope = reader.split(":")[0]
    return IndexDoc(
        path=f"n/{i:03d}.md",
        id=f"id{i}",
        title=f"note {i}",
        aliases=(),
        tags=tuple(t for t in ("alpha", "beta", "gamma") if rng.random() < 0.4),
        body="",
        type=("note", "decision", "topic")[i % 3],
        scope=scope,
        owner=reader.split(":")[1] if scope == "private" else "",
        project="apollo" if scope == "project" else ("" if i % 5 else "zeus"),
        reader=reader,
        created=NOW - rng.randrange(0, 400) * 86400,
        updated=NOW,
        expires=NOW + (rng.choice([-1, 1]) * 86400 if i % 7 == 0 else 10**9),
        trust=round(rng.random(), 2),
        confidence=round(rng.random(), 2),
        importance=round(rng.random(), 2),
        hash=str(i),
    )


def _vec(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(DIMS)]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> tuple[VectorIndex, list[IndexDoc]]:
    rng = random.Random(20261121)
    docs = [_doc(i, rng) for i in range(120)]
    client = make_client("embedded", Path(tmp_path_factory.mktemp("chroma")), None)
    vi = VectorIndex(client, "vault-under-test", "fp-test")
    items = [(d, Chunk(index=c, heading="", text=""), _vec(rng)) for d in docs for c in range(2)]
    vi.add(items)
    return vi, docs


def _lookup(docs: list[IndexDoc]) -> NoteLookup:
    """What App.note_lookup gives search: each note's filter metadata by its chunk-id key."""
    metas = {owner_key(d.path): note_metadata(d) for d in docs}
    return lambda keys: {k: metas[k] for k in keys if k in metas}


BASE = Filters(readers=("shared",), now=NOW)
TABLE = [
    ("shared only", BASE),
    ("alice", replace(BASE, readers=("shared", "private:alice"))),
    ("scope", replace(BASE, readers=READERS, scopes=("project",))),
    ("types any", replace(BASE, readers=READERS, types=("decision", "topic"))),
    ("tags all", replace(BASE, readers=READERS, tags=("alpha", "beta"))),
    ("project", replace(BASE, readers=READERS, project="zeus")),
    ("since", replace(BASE, readers=READERS, since=NOW - 100 * 86400)),
    ("until", replace(BASE, readers=READERS, until=NOW - 200 * 86400)),
    ("trust", replace(BASE, readers=READERS, min_trust=0.5)),
    ("confidence", replace(BASE, readers=READERS, min_confidence=0.7)),
    ("importance", replace(BASE, readers=READERS, min_importance=0.3)),
    ("expired kept", replace(BASE, readers=READERS, include_expired=True)),
    (
        "everything",
        replace(
            BASE,
            readers=("shared", "private:bob"),
            types=("note", "decision"),
            tags=("gamma",),
            since=NOW - 300 * 86400,
            min_trust=0.2,
        ),
    ),
]


@pytest.mark.parametrize(("name", "filters"), TABLE, ids=[t[0] for t in TABLE])
def test_passes_agrees_with_chroma_where(
    index: tuple[VectorIndex, list[IndexDoc]], name: str, filters: Filters
) -> None:
    vi, docs = index
    got = vi.collection.get(where=chroma_where(filters), include=["metadatas"], limit=10_000)
    by_chroma = {(m["path"], m["chunk"]) for m in got["metadatas"]}
    passes = predicate(filters)
    by_python = {
        (d.path, c) for d in docs for c in range(2) if passes(chunk_metadata(d, Chunk(index=c, heading="", text="")))
    }
    assert by_python == by_chroma
    assert by_python, "each row of the table should keep something, or it proves little"


@pytest.mark.parametrize(("name", "filters"), TABLE, ids=[t[0] for t in TABLE])
def test_whoosh_filter_agrees_with_python(
    index: tuple[VectorIndex, list[IndexDoc]], tmp_path: Path, name: str, filters: Filters
) -> None:
    _, docs = index
    ft = FullTextIndex(tmp_path / "whoosh")
    try:
        ft.apply(docs, [], fresh=True)
        with ft.ix.searcher() as searcher:
            by_whoosh = {searcher.stored_fields(n)["path"] for n in searcher.docs_for_query(whoosh_query(filters))}
    finally:
        ft.close()
    passes = predicate(filters)
    assert by_whoosh == {d.path for d in docs if passes(note_metadata(d))}


@pytest.mark.parametrize(("name", "filters"), TABLE, ids=[t[0] for t in TABLE])
def test_search_equals_chroma_filtered_query(
    index: tuple[VectorIndex, list[IndexDoc]], name: str, filters: Filters
) -> None:
    vi, docs = index
    query = _vec(random.Random(name))
    hits = vi.search(query, filters, limit=5, notes=_lookup(docs))
    # The reference: Chroma filtering over every chunk, best chunk per note.
    res = vi.collection.query(
        query_embeddings=[query], n_results=vi.count(), where=chroma_where(filters), include=["metadatas", "distances"]
    )
    best: dict[str, float] = {}
    for meta, dist in zip(res["metadatas"][0], res["distances"][0], strict=True):
        best[meta["path"]] = min(dist, best.get(meta["path"], 2.0))
    expected = sorted(best, key=lambda p: (best[p], p))[:5]
    assert [h.path for h in hits] == expected
    allowed = {d.path for d in docs if d.reader in filters.readers}
    assert all(h.path in allowed for h in hits)


def test_narrow_filter_falls_back_to_chroma_where(index: tuple[VectorIndex, list[IndexDoc]]) -> None:
    """One allowed note far from the query: the unfiltered top chunks miss it, Chroma finds it."""
    vi, docs = index
    target = docs[3]
    query = [
        -x for x in vi.collection.get(ids=None, where={"path": target.path}, include=["embeddings"])["embeddings"][0]
    ]
    # Sanity: the target is not among the nearest 40 unfiltered chunks, so the fast path misses it.
    near = vi.collection.query(query_embeddings=[query], n_results=40, include=["metadatas"])
    assert target.path not in {m["path"] for m in near["metadatas"][0]}
    # A filter only the target passes.
    narrow = replace(
        BASE,
        readers=(target.reader,),
        types=(target.type,),
        since=target.created,
        until=target.created,
        min_trust=target.trust,
    )
    assert [d.path for d in docs if predicate(narrow)(note_metadata(d))] == [target.path]
    hits = vi.search(query, narrow, limit=5, notes=_lookup(docs))
    assert [h.path for h in hits] == [target.path]
