"""A new note that nearly repeats another, for `review` (services/review.py): in its words
(the BM25 index, word 3-gram Jaccard) or in other words (the embedding model and the vector
index, where a watcher holds them loaded). Only notes the caller may read are compared."""

from __future__ import annotations

from typing import Any

from vaultmem.services.app import App
from vaultmem.vault.changes import NoteChange

DUPLICATE_QUERY_WORDS = 20  # of a new note's body, searched for notes it may repeat
NEAR_DUPLICATE = 0.85  # word-3-gram Jaccard of two bodies (search/text.py NearDuplicates)
# all-MiniLM-L6-v2 cosine of a new note's body to another note's best chunk (as indexed:
# title, then text). Measured on memory-like pairs: the same fact in other words 0.81-0.90
# ("Miso the cat will only eat salmon" / "Alice's cat is named Miso and eats only salmon":
# 0.81; light reds and Pinot Noir reworded: 0.90), the same fact updated 0.91 (a meeting
# moved from Tuesday to Friday); different facts on the same subject 0.50-0.65 (another
# fact about the same cat: 0.65; the test script beside the deploy script: 0.59).
SAME_MEANING = 0.80
# new notes checked by meaning at most (an embedding and a vector search each, ~30 ms on 2
# cores: a review of 1,000 new notes stays within seconds)
SAME_MEANING_CHECKS = 100
NEAR_DUPLICATE_CHECKS = 2000  # new notes checked for near-duplicates at most (a BM25 search each)


class Twins:
    """The near-duplicate check of one review, its indexes opened once."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._checked_duplicates = 0
        self._checked_meaning = 0
        self._dense_parts: tuple[tuple[Any, Any, Any] | None] | None = None
        self._filters: Any = None

    def of(self, change: NoteChange) -> str:
        """Another note the new one nearly repeats: its own words searched in the BM25 index
        as it stands (read beside a watcher too: nothing is reindexed for a review), the
        best other candidates compared word for word (3-gram Jaccard ≥ NEAR_DUPLICATE, the
        rule that collapses near-duplicate search results)."""
        from vaultmem.search.text import jaccard, shingles
        from vaultmem.services.search import FilterSpec, build_filters, read_body

        new = change.new
        if new is None or self._checked_duplicates >= NEAR_DUPLICATE_CHECKS:
            return ""
        self._checked_duplicates += 1
        words = " ".join(new.body.split())
        if len(words.split()) < 3:
            return ""
        if self._filters is None:
            self._lexical_fresh()
            self._filters = build_filters(self.app, FilterSpec())
        mine = shingles(words.lower())
        hits = self.app.indexes.fulltext().search(" ".join(words.split()[:DUPLICATE_QUERY_WORDS]), self._filters, 3)
        records = self.app.db.by_paths([h.path for h in hits if h.path != change.path])
        for path, rec in records.items():
            body = read_body(self.app, rec)
            similar = jaccard(mine, shingles(" ".join((body or "").lower().split()))) if body else 0.0
            if similar >= NEAR_DUPLICATE:
                return f"nearly repeats [[{rec.title}]] ({path}): {similar:.0%} of its wording"
        return self._same_meaning(change, words)

    def _same_meaning(self, change: NoteChange, words: str) -> str:
        """Another note that says nearly the same in other words: the new note's body
        embedded (another title for the same fact would pull the two apart) and its nearest
        notes in the vector index the caller may read, at a cosine of at least SAME_MEANING."""
        dense = self._dense()
        if dense is None or self._checked_meaning >= SAME_MEANING_CHECKS:
            return ""
        self._checked_meaning += 1
        index, embedder, lookup = dense
        vector = embedder.embed([words[:2000]])[0]
        for hit in index.search(vector, self._filters, 3, lookup):  # only notes the caller may read
            if hit.path == change.path:
                continue
            cosine = 1.0 - hit.distance
            if cosine < SAME_MEANING:
                return ""  # the nearest other note is not close: none further is
            rec = self.app.db.by_paths([hit.path]).get(hit.path)
            name = rec.title if rec is not None else hit.path
            return (
                f"says nearly what [[{name}]] says ({hit.path}), cosine {cosine:.2f}: a duplicate, or an update of it?"
            )
        return ""

    def _dense(self) -> tuple[Any, Any, Any] | None:
        """(vector index, embedder, note lookup) for the meaning check, opened once; None
        where the model is not loaded already (the watcher answers a review with it loaded,
        daemon/forwarding.py: loading it for a review would cost seconds) or no vectors exist."""
        if self._dense_parts is None:
            self._dense_parts = (None,)
            indexes = self.app.indexes
            if not self.app.freshness.lexical_only and indexes.model_loaded():
                identity = indexes.vector_identity()
                embedder = indexes.embedder()
                if identity is not None and embedder is not None and identity[2]:
                    from vaultmem.services.search import FilterSpec, build_filters

                    if self._filters is None:
                        self._filters = build_filters(self.app, FilterSpec())
                    self._dense_parts = ((indexes.vector_index(identity[0]), embedder, indexes.note_lookup()),)
        return self._dense_parts[0]

    def _lexical_fresh(self) -> None:
        """The BM25 index up to date with the files, when no watcher or indexer holds it
        (one that does keeps it fresh itself); vectors are left to the next index."""
        from vaultmem.errors import IndexBusy

        try:
            with self.app.lock("index", wait_s=0):
                self.app.indexes.indexer(None).run(full=False, with_vectors=False)
        except IndexBusy:
            pass
