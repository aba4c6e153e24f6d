"""BM25F over Whoosh's postings, scored a whole posting list at a time.

Whoosh stores and analyses everything and supplies every statistic (postings, term
weights, field lengths, idf, average lengths); only the scoring loop moves here. Whoosh
scores an OR of terms through a tree of union matchers, one Python call per posting per
level: at 10k notes a five-word query walks ~30k postings and takes ~100 ms. Reading each
posting list block by block into arrays and summing with numpy gives the same scores —
`bm25` is Whoosh's formula, `scoring.BM25F` with the same B and K1, and the tests compare
both on every query — in a few milliseconds.

Field lengths are cached per segment: a segment never changes once written, so after an
edit only the new small segment is read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
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
    """The best `limit` allowed documents with a positive score, by score then docnum."""
    import numpy as np

    candidates = np.flatnonzero((scores > 0) & allowed)
    if len(candidates) > limit:
        # Partition first: sorting every match of a common word would cost more.
        kth = np.partition(scores[candidates], len(candidates) - limit)[len(candidates) - limit]
        candidates = candidates[scores[candidates] >= kth]
    order = np.lexsort((candidates, -scores[candidates]))[:limit]
    return [(int(candidates[i]), float(scores[candidates[i]])) for i in order]


class SegmentLengths:
    """Decoded field lengths of each segment, kept while the segment exists."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str], Floats] = {}

    def get(self, reader: Any, field: str) -> Floats:

        import numpy as np

        key = (self.segment_key(reader), field)
        lengths = self._cache.get(key)
        if lengths is None:
            n = reader.doc_count_all()
            # doc_field_length gives None for an empty field; such a document has no postings.
            lengths = np.fromiter((reader.doc_field_length(i, field, 0) or 0 for i in range(n)), np.float64, n)
            self._cache[key] = lengths
        return lengths

    @staticmethod
    def segment_key(reader: Any) -> str:
        segment = reader.segment()
        return str(segment.segment_id()) if segment is not None else str(id(reader))

    def keep_only(self, searcher: Any) -> None:
        """Forget the segments `searcher` no longer has."""
        live = {self.segment_key(sub.reader()) for sub, _ in searcher.leaf_searchers()}
        self._cache = {k: v for k, v in self._cache.items() if k[0] in live}


def _blocks(matcher: Any) -> Iterator[tuple[Any, Any]]:
    """(docnums, weights) of a posting list, one block at a time.

    Uses the block arrays of whoosh3's leaf matcher (pinned version); any other matcher
    falls back to the public per-posting interface, slower but the same numbers."""
    # Under deletions the leaf is wrapped in a filter that may already have stepped past
    # deleted postings; whole blocks are read anyway and the caller's mask, which never
    # allows a deleted document, drops them.
    leaf = getattr(matcher, "child", matcher)
    if all(hasattr(leaf, a) for a in ("_read_ids", "_read_weights", "_next_block", "_atend")):
        while not leaf._atend:
            leaf._read_ids()
            leaf._read_weights()
            yield leaf._ids, leaf._weights
            leaf._next_block()
        return
    ids, weights = [], []
    while matcher.is_active():
        ids.append(matcher.id())
        weights.append(matcher.weight())
        matcher.next()
    yield ids, weights


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
    lengths: SegmentLengths,
) -> Floats:
    """BM25F scores of every document (global docnums) for an OR of `terms` over `boosts`'
    fields: the sum over fields and terms of boost × bm25, as Whoosh's Or of boosted Terms."""
    import numpy as np

    scores = np.zeros(searcher.doc_count_all(), dtype=np.float64)
    for field, boost in boosts.items():
        # Global statistics come from the top-level searcher, as in Whoosh's BM25FScorer.
        avgfl = searcher.avg_field_length(field) or 1
        for term in terms:
            if searcher.doc_frequency(field, term) == 0:
                continue
            idf = searcher.idf(field, term)
            for sub, offset in searcher.leaf_searchers():
                reader = sub.reader()
                ids, tf = postings(reader, field, term)
                if len(ids):
                    fl = lengths.get(reader, field)[ids]
                    scores[ids + offset] += boost * bm25(idf, tf, fl, avgfl, b, k1)
    return scores
