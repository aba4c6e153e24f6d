"""BM25F over Whoosh's postings, scored a whole posting list at a time.

Whoosh stores and analyses everything and supplies the postings, term weights and field
lengths; the statistics and the scoring loop are computed here. Whoosh
scores an OR of terms through a tree of union matchers, one Python call per posting per
level: at 10k notes a five-word query walks ~30k postings and takes ~100 ms. Reading each
posting list block by block into arrays and summing with numpy gives the same scores —
`bm25` is Whoosh's formula, `scoring.BM25F` with the same B and K1, and the tests compare
both on every query (against a Whoosh index of only the documents the caller may see) —
in a few milliseconds.

Field lengths and posting lists are cached per segment: a segment never changes once
written (a deletion only marks a document, and the caller's mask never allows a deleted
one), so after an edit only the new small segment is read. Term statistics are counted
per query over the documents the caller may see (a numpy sum over cached postings). Queries
share words, so in a long-lived process most of a query's postings are already decoded
(~20 ms of a 12-word query at 10k notes).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where it is used: `vaultmem --help` needs none of it
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]
    Ints = npt.NDArray[np.int64]


def bm25(idf: float, tf: Floats, fl: Floats, avgfl: float, b: float, k1: float) -> Floats:
    """Whoosh's `scoring.bm25`, over arrays."""
    out: Floats = idf * ((tf * (k1 + 1)) / (tf + k1 * ((1 - b) + b * fl / avgfl)))
    return out


def top(scores: Floats, allowed: npt.NDArray[np.bool_], limit: int) -> list[tuple[int, float]]:
    """The best `limit` allowed documents with a positive score, by score — and every one
    tied with the last of them: which of tied notes make the cut, and in what order, is the
    caller's to decide by note (FullTextIndex.search: by path), never by document number,
    which follows the index's history (other ghosts' notes included)."""
    import numpy as np

    candidates = np.flatnonzero((scores > 0) & allowed)
    if len(candidates) > limit:
        # Partition first: sorting every match of a common word would cost more.
        kth = np.partition(scores[candidates], len(candidates) - limit)[len(candidates) - limit]
        candidates = candidates[scores[candidates] >= kth]
    order = np.lexsort((candidates, -scores[candidates]))
    return [(int(candidates[i]), float(scores[candidates[i]])) for i in order]


# Postings held merged over a searcher's segments (SegmentCache.merged): ~16 bytes each.
MERGED_MAX = 500_000


class Leaves(tuple[tuple[Any, int], ...]):
    """A searcher's (segment reader, first global docnum) pairs (SegmentCache.leaves_of)."""

    __slots__ = ()


class SegmentCache:
    """Decoded field lengths and posting lists of each segment, kept while the segment
    exists: whole segments decoded ahead (`add_segment`, by FullTextIndex.warm) and, for
    the others, the lists searches read, within a budget, least recently used first out."""

    def __init__(self, max_postings: int = 2_000_000) -> None:
        self._lengths: dict[tuple[str, str], Floats] = {}
        self._postings: OrderedDict[tuple[str, str, str], tuple[Ints, Floats]] = OrderedDict()
        self._held = 0
        self._whole: dict[str, WholeSegment] = {}
        self.max_postings = max_postings  # of the lists searches read; ~16 bytes each
        # One searcher's leaves and, for it, each (field, term)'s postings over all of its
        # segments: a search reads a term's list twice (its scores, its document frequency)
        # and the next search reads common words again; at 10k notes a full build leaves
        # ~13 segments, so each read was ~13 lookups and a concatenation.
        self._leaves: tuple[Any, Leaves] | None = None
        self._merged: OrderedDict[tuple[str, str], tuple[Ints, Floats]] = OrderedDict()
        self._merged_held = 0

    def lengths(self, reader: Any, field: str) -> Floats:
        import numpy as np

        key = (self.segment_key(reader), field)
        lengths = self._lengths.get(key)
        if lengths is None:
            n = reader.doc_count_all()
            # doc_field_length gives None for an empty field; such a document has no postings.
            lengths = np.fromiter((reader.doc_field_length(i, field, 0) or 0 for i in range(n)), np.float64, n)
            self._lengths[key] = lengths
        return lengths

    def postings(self, reader: Any, field: str, term: str) -> tuple[Ints, Floats]:
        segment = self.segment_key(reader)
        whole = self._whole.get(segment)
        if whole is not None:
            return whole.postings(field, term)
        key = (segment, field, term)
        got = self._postings.get(key)
        if got is not None:
            self._postings.move_to_end(key)
            return got
        got = postings(reader, field, term)
        self._postings[key] = got
        self._held += len(got[0])
        while self._held > self.max_postings and len(self._postings) > 1:
            _, (ids, _) = self._postings.popitem(last=False)
            self._held -= len(ids)
        return got

    def leaves_of(self, searcher: Any) -> Leaves:
        """The searcher's segments with their first global docnum, the same object for as
        long as the searcher is (term_postings keeps what it merged for it)."""
        if self._leaves is None or self._leaves[0] is not searcher:
            self._leaves = (searcher, Leaves((sub.reader(), offset) for sub, offset in searcher.leaf_searchers()))
            self._merged.clear()
            self._merged_held = 0
        return self._leaves[1]

    def merged(self, leaves: Leaves, field: str, term: str) -> tuple[Ints, Floats] | None:
        if self._leaves is None or self._leaves[1] is not leaves:
            return None
        got = self._merged.get((field, term))
        if got is not None:
            self._merged.move_to_end((field, term))
        return got

    def keep_merged(self, field: str, term: str, got: tuple[Ints, Floats]) -> None:
        self._merged[(field, term)] = got
        self._merged_held += len(got[0])
        while self._merged_held > MERGED_MAX and len(self._merged) > 1:
            _, (ids, _) = self._merged.popitem(last=False)
            self._merged_held -= len(ids)

    def add_segment(self, reader: Any, whole: WholeSegment) -> None:
        """Hold every posting list of a segment's fields: a search then reads none of that
        segment, and a word it lacks is known to be missing without a lookup."""
        segment = self.segment_key(reader)
        for key in [k for k in self._postings if k[0] == segment]:
            self._held -= len(self._postings.pop(key)[0])
        self._whole[segment] = whole

    def is_whole(self, reader: Any) -> bool:
        return self.segment_key(reader) in self._whole

    @property
    def held(self) -> int:
        """Postings held now."""
        return self._held + sum(len(w.ids) for w in self._whole.values())

    @staticmethod
    def segment_key(reader: Any) -> str:
        segment = reader.segment()
        return str(segment.segment_id()) if segment is not None else str(id(reader))

    def keep_only(self, searcher: Any) -> None:
        """Forget the segments `searcher` no longer has."""
        live = {self.segment_key(sub.reader()) for sub, _ in searcher.leaf_searchers()}
        self._lengths = {k: v for k, v in self._lengths.items() if k[0] in live}
        for key in [k for k in self._postings if k[0] not in live]:
            self._held -= len(self._postings.pop(key)[0])
        self._whole = {k: v for k, v in self._whole.items() if k in live}


@dataclass(frozen=True, slots=True)
class WholeSegment:
    """Every posting list of a segment in two arrays, each list a slice of them (made by
    SegmentFill): a list of its own costs ~1 kB besides its postings (two arrays, their
    keys), more than the postings of most words hold: 6M postings at 50k notes take 109 MB
    so, 123 MB as lists of their own."""

    spans: dict[tuple[str, str], tuple[int, int]]
    ids: Ints
    weights: Floats

    def postings(self, field: str, term: str) -> tuple[Ints, Floats]:
        start, stop = self.spans.get((field, term), (0, 0))
        return self.ids[start:stop], self.weights[start:stop]


class SegmentFill:
    """A WholeSegment being filled list by list, into arrays of the segment's size made
    once: each decoded list is copied in and dropped, so decoding a segment of a million
    postings never holds it twice nor leaves thousands of freed arrays behind."""

    def __init__(self, size: int) -> None:
        import numpy as np

        self.spans: dict[tuple[str, str], tuple[int, int]] = {}
        # int64, not int32 (half the memory): numpy copies other integers to its index type
        # at every `scores[ids]`, a few milliseconds of a query at 50k notes.
        self.ids = np.empty(size, np.int64)
        self.weights = np.empty(size, np.float64)
        self.at = 0

    def add(self, field: str, term: str, ids: Ints, weights: Floats) -> None:
        end = self.at + len(ids)
        if end > len(self.ids):  # more than the lexicon counted: grow (never seen; a guard)
            self.ids.resize(max(end, 2 * len(self.ids)), refcheck=False)
            self.weights.resize(len(self.ids), refcheck=False)
        self.ids[self.at : end] = ids
        self.weights[self.at : end] = weights
        self.spans[(field, term)] = (self.at, end)
        self.at = end

    def done(self) -> WholeSegment:
        return WholeSegment(self.spans, self.ids[: self.at], self.weights[: self.at])


def _blocks(matcher: Any) -> Iterator[tuple[Any, Any]]:
    """(docnums, weights) of a posting list, one block at a time.

    Reads the blocks of whoosh3's leaf matcher (pinned version) itself: a block's data is a
    pickled tuple of docnum deltas and weights, and a cumulative sum in numpy replaces
    Whoosh's per-posting Python generator (most of a cold query's time at 10k notes). Any
    other matcher falls back to the public per-posting interface: slower, same numbers."""
    import numpy as np

    # Under deletions the leaf is wrapped in a filter that may already have stepped past
    # deleted postings; whole blocks are read anyway and the caller's mask, which never
    # allows a deleted document, drops them.
    leaf = getattr(matcher, "child", matcher)
    if all(hasattr(leaf, a) for a in ("_read_data", "_data", "_byteids", "_blocklength", "_next_block", "_atend")):
        while not leaf._atend:
            if leaf._data is None:
                leaf._read_data()
            raw_ids, raw_weights = leaf._data[0], leaf._data[1]
            ids = np.asarray(raw_ids, dtype=np.int64)
            if not leaf._byteids:
                ids = np.cumsum(ids)
            if raw_weights is None:
                weights = np.ones(leaf._blocklength, dtype=np.float64)
            elif isinstance(raw_weights, float):
                weights = np.full(leaf._blocklength, raw_weights, dtype=np.float64)
            else:
                weights = np.asarray(raw_weights, dtype=np.float64)
            yield ids, weights
            leaf._next_block()
        return
    every_id, every_weight = [], []
    while matcher.is_active():
        every_id.append(matcher.id())
        every_weight.append(matcher.weight())
        matcher.next()
    yield every_id, every_weight


def postings(reader: Any, field: str, term: str) -> tuple[Ints, Floats]:
    """Docnums (segment-local) and term weights of one term in one segment."""
    import numpy as np

    if (field, term) not in reader:
        return np.empty(0, np.int64), np.empty(0, np.float64)
    ids: list[Any] = []
    weights: list[Any] = []
    for block_ids, block_weights in _blocks(reader.postings(field, term)):
        ids.append(np.asarray(block_ids, dtype=np.int64))
        weights.append(np.asarray(block_weights, dtype=np.float64))
    if not ids:  # every posting deleted: the deletion filter left the matcher at its end
        return np.empty(0, np.int64), np.empty(0, np.float64)
    return np.concatenate(ids), np.concatenate(weights)


def score(
    searcher: Any,
    terms: Sequence[str],
    boosts: Mapping[str, float],
    b: float,
    k1: float,
    cache: SegmentCache,
    visible: npt.NDArray[np.bool_],
) -> Floats:
    """BM25F scores of every document (global docnums) for an OR of `terms` over `boosts`'
    fields: the sum over fields and terms of boost × bm25, as Whoosh's Or of boosted Terms.

    The statistics (document count, document frequency, idf, average field length) are
    those of the `visible` documents only, as if the index held nothing else: a note the
    caller may not see must not change a score or an order (SPEC §3). Whoosh's own formula
    (idf = log(N / (df + 1)) + 1) over that set."""
    import math

    import numpy as np

    n = int(visible.sum())
    scores = np.zeros(searcher.doc_count_all(), dtype=np.float64)
    if n == 0:
        return scores
    leaves = cache.leaves_of(searcher)
    for field, boost in boosts.items():
        lengths = field_lengths(leaves, field, cache, len(scores))
        avgfl = float(lengths[visible].sum()) / n or 1.0
        for term in terms:
            ids, tf = term_postings(leaves, field, term, cache)
            if not len(ids):
                continue
            df = int(visible[ids].sum())
            if df == 0:
                continue
            idf = math.log(n / (df + 1)) + 1
            scores[ids] += boost * bm25(idf, tf, lengths[ids], avgfl, b, k1)
    return scores


def field_lengths(leaves: Sequence[tuple[Any, int]], field: str, cache: SegmentCache, total: int) -> Floats:
    """Every document's length in `field`, by global docnum."""
    import numpy as np

    out = np.zeros(total, dtype=np.float64)
    for reader, offset in leaves:
        part = cache.lengths(reader, field)
        out[offset : offset + len(part)] = part
    return out


def term_postings(leaves: Sequence[tuple[Any, int]], field: str, term: str, cache: SegmentCache) -> tuple[Ints, Floats]:
    """Global docnums and term weights of one term in one field, over every segment
    (kept for the searcher when `leaves` are its SegmentCache.leaves_of)."""
    import numpy as np

    if isinstance(leaves, Leaves):
        got = cache.merged(leaves, field, term)
        if got is not None:
            return got
    ids, weights = [], []
    for reader, offset in leaves:
        seg_ids, seg_weights = cache.postings(reader, field, term)
        if len(seg_ids):
            ids.append(seg_ids + offset)
            weights.append(seg_weights)
    if not ids:
        got = np.empty(0, np.int64), np.empty(0, np.float64)
    else:
        got = np.concatenate(ids), np.concatenate(weights)
    if isinstance(leaves, Leaves):
        cache.keep_merged(field, term, got)
    return got


def document_frequencies(
    leaves: Sequence[tuple[Any, int]], fields: Sequence[str], terms: Sequence[str], cache: SegmentCache, visible: Any
) -> dict[str, int]:
    """How many `visible` documents hold each term in any of `fields`."""
    import numpy as np

    out = {}
    held = np.zeros(len(visible), dtype=bool)
    for term in terms:
        # A mark per document instead of np.unique over the fields' postings: the same
        # count without sorting (~8 ms a query at 50k notes, where common words hold most)
        held[:] = False
        for field in fields:
            held[term_postings(leaves, field, term, cache)[0]] = True
        out[term] = int(np.count_nonzero(held & visible))
    return out
