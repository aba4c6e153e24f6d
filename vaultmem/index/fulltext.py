"""The lexical index: Whoosh (whoosh3) BM25F over title, aliases, tags and body.

Queries never go through Whoosh's query parser: the text is run through the same
analyzer as the documents and becomes an OR of terms across fields, so hyphens, colons,
quotes, paths, dates and operators are plain words and nothing a user types can raise.
"""

from __future__ import annotations

import itertools
import os
import pickle
import shutil
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from vaultmem.index.documents import Filters, IndexDoc, whoosh_fields
from vaultmem.index.filter_rules import whoosh_query
from vaultmem.index.healing import Damaged
from vaultmem.index.workers import Counted, ParallelBuildFailed, stop_workers
from vaultmem.paths import WHOOSH_SCHEMA

# The watcher decodes the posting lists when it starts, the commonest words first (warm).
WARM_POSTINGS = 8_000_000  # ~16 bytes each: up to ~130 MB
# Between two questions to keep_going: words listed (~1 ms), posting lists decoded (~1 ms).
WARM_STEP_WORDS = 256
WARM_STEP_LISTS = 16

SCHEMA_VERSION = "w12"  # w12: a dated memory's day in words in `body` (documents.event_words)

# Two text fields, each its own BM25 component of the sum: `head` (title, aliases, tags and
# front-matter prose, combined BM25F-style with the weights in analysis.HEAD_WEIGHTS) and
# `body`. Two fields instead of five make a query about twice as fast at 10k notes, and
# scored as well or better on both corpora of tools/evalkit (Cranfield nDCG@10 0.384
# against 0.383; Obsidian tune MRR@10 0.651 against 0.645). A word in both head and body
# scores in both, so the head weighs 1.4 body-only matches: that is the title boost.
# The weights apply at query time, so they can change without reindexing. 0.4 was chosen
# with the fusion on the tune splits of tools/evalkit (issue 11; tools/evalkit/fusion_tune.py):
# 0.7 ranked best for BM25 alone on Cranfield and Obsidian Help, but a title word is weak
# evidence when titles are names (tldr: "cs-install" for a question about installing),
# and with the passage coverage of search/passages.py beside it 0.4 ranked best overall.
FIELD_BOOSTS = {"head": 0.4, "body": 1.0}
# A writer sorts its segment's postings in memory up to its limit (limitmb) and beyond it
# spills sorted runs to disk through pickle and merges them back: a 50k-note build (100 MB
# of text, 7.6M postings) spilled and ran a third slower per note than a 10k one (issue 14).
# A large build commits a segment every SEGMENT_CHARS characters of text instead (~3M
# postings, well under the limit): the rate stays flat with size and so does the memory.
WRITER_LIMIT_MB = 1024
SEGMENT_CHARS = 40_000_000
BM25_B = 0.75
BM25_K1 = 1.5


def _schema() -> Any:
    from whoosh import fields

    from vaultmem.index.analysis import FastText, WeightedText

    return fields.Schema(
        path=fields.ID(stored=True, unique=True),
        id=fields.ID(stored=True),
        head=WeightedText(),
        tagset=fields.KEYWORD(lowercase=True, commas=True),
        body=FastText(),
        type=fields.ID,
        scope=fields.ID,
        owner=fields.ID,
        project=fields.ID,
        reader=fields.ID,
        # Coarse numeric tries (shift_step 16): range filters over a few thousand terms
        # are cheap, and each value indexes 4 terms instead of 16.
        created=fields.NUMERIC(bits=64, signed=True, shift_step=16),
        updated=fields.NUMERIC(bits=64, signed=True, shift_step=16),
        expires=fields.NUMERIC(bits=64, signed=True, shift_step=16),
        trust=fields.NUMERIC(float, shift_step=16),
        confidence=fields.NUMERIC(float, shift_step=16),
        importance=fields.NUMERIC(float, shift_step=16),
    )


# What a damaged index raises while it is opened: a garbled TOC unpickles into nonsense
# (TypeError, ValueError, whoosh's "created on different architecture" IndexError), a
# truncated one ends early (EOFError, UnpicklingError), an empty or cut segment fails to
# unpack (struct.error) or to map (OSError), a file replaced by a folder is an OSError.
_DAMAGE: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    struct.error,
    pickle.UnpicklingError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
)


def _open_existing(directory: Path, clear_old: bool) -> Any:
    """The index at `directory`, opened and probed; None when there is none (or, with
    `clear_old`, one in an old layout, which is deleted). `Damaged` when it cannot be read."""
    from whoosh import index

    if not os.path.lexists(directory):
        return None
    if directory.is_symlink() or not directory.is_dir():
        raise Damaged("lexical index", directory, "not a directory")
    marker = directory / WHOOSH_SCHEMA
    damage: tuple[type[BaseException], ...] = (*_DAMAGE, index.IndexError)
    try:
        if not marker.exists() or marker.read_text() != SCHEMA_VERSION:
            if clear_old:
                shutil.rmtree(directory)  # derived state in an old layout: rebuild
            return None
        if not index.exists_in(str(directory)):
            return None
        ix = index.open_dir(str(directory))
        _probe(ix)
        return ix
    except damage as exc:
        raise Damaged("lexical index", directory, f"{type(exc).__name__}: {str(exc)[:100]}") from None


def problem(directory: Path) -> str | None:
    """Why the index at `directory` cannot be read, changing nothing (for `status`)."""
    try:
        ix = _open_existing(directory, clear_old=False)
    except Damaged as exc:
        return exc.reason
    if ix is not None:
        ix.close()
    return None


def _probe(ix: Any) -> None:
    """Open every segment the TOC names and read a stored document of each: a missing,
    empty, cut or garbled segment fails here, at open, not in the middle of a search."""
    reader = ix.reader()
    try:
        for sub, _ in reader.leaf_readers():
            if sub.doc_count_all():
                sub.stored_fields(0)
    finally:
        reader.close()


@dataclass(frozen=True, slots=True)
class LexicalHit:
    path: str
    rank: int  # 1-based
    score: float


@dataclass(slots=True)
class _Warming:
    """A warm-up under way (FullTextIndex.warm) for one searcher: its cold segments, largest
    first, and of the one being decoded, its words (gathered a step at a time) and the
    lists decoded so far."""

    searcher: Any
    segments: list[Any]  # readers still to warm, the one under way first
    gather: Iterator[tuple[str, str, int]] | None = None  # its words, while they are listed
    words: list[tuple[str, str]] = dataclass_field(default_factory=list)  # its (field, term)s
    gathered: bool = False
    size: int = 0  # its postings
    fill: Any = None  # bm25.SegmentFill of its lists decoded so far
    done: int = 0  # how many

    def next_segment(self) -> None:
        self.segments.pop(0)
        self.gather, self.words, self.gathered, self.size, self.fill, self.done = None, [], False, 0, None, 0


class FullTextIndex:
    """One Whoosh index under .vaultmem/whoosh. Open it once per process."""

    def __init__(self, directory: Path) -> None:
        from whoosh import index

        self.directory = directory
        self._searcher: Any = None
        self._filters: dict[Filters, Any] = {}  # filter → numpy mask over docnums
        self._segment_masks: dict[tuple[str, Filters], Any] = {}  # (segment, timeless filter) → its mask
        self._segments: Any = None  # bm25.SegmentCache, made on first search
        self._warm_segments: set[str] = set()  # segments whose postings warm() decoded
        self._warming: _Warming | None = None  # a warm-up under way
        marker = directory / WHOOSH_SCHEMA
        ix = _open_existing(directory, clear_old=True)
        if ix is not None:
            self.ix = ix
            self.created = False
            return
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.ix = index.create_in(str(directory), _schema())
        marker.write_text(SCHEMA_VERSION)
        self.created = True

    # --- writing ------------------------------------------------------------------------

    def apply(self, upserts: Iterable[IndexDoc], deletes: Iterable[str], fresh: bool = False, workers: int = 1) -> None:
        """Upsert and delete in one commit (one per SEGMENT_CHARS of text in a large build).
        `fresh`: the index is known empty (faster adds). `workers` > 1 (workers.py): a
        fresh build in that many processes; if it fails or loses a note, the index is
        cleared and ParallelBuildFailed raised, for the caller to build it in one process:
        a worker's failure costs time, never notes."""
        deletes = list(deletes)
        if workers <= 1 or not fresh or deletes:
            self._write(upserts, deletes, fresh, 1)
            return
        counted = Counted(upserts)
        try:
            self._write(counted, [], True, workers)
            written = self.ix.doc_count()
            problem = "" if written == counted.count else f"{written} of {counted.count} notes written"
        except Exception as exc:  # a worker's failure surfaces as whoosh's or pickle's own error
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            self.clear()
            raise ParallelBuildFailed(problem)

    def _writer(self, workers: int) -> Any:
        # A large pool keeps a build in memory; smaller pools spill sorted runs to disk
        # through pickle, which costs more than the indexing itself.
        if workers > 1:
            from vaultmem.index.workers import parallel_writer

            return parallel_writer(self.ix, workers, WRITER_LIMIT_MB // workers)
        return self.ix.writer(limitmb=WRITER_LIMIT_MB)

    def _write(self, upserts: Iterable[IndexDoc], deletes: list[str], fresh: bool, workers: int) -> None:
        writer = self._writer(workers)
        text = 0
        try:
            for path in deletes:
                writer.delete_by_term("path", path)
            for doc in upserts:
                text += len(doc.body) + len(doc.prose) + len(doc.title)
                if text > SEGMENT_CHARS:
                    # A segment of its own, left unmerged (merging would sort it all again).
                    writer.commit(merge=False)
                    writer = self._writer(workers)
                    text = len(doc.body) + len(doc.prose) + len(doc.title)
                add = writer.add_document if fresh else writer.update_document
                add(**whoosh_fields(doc))
        except BaseException:
            stop_workers(writer)
            writer.cancel()
            raise
        try:
            writer.commit()
        except BaseException:
            stop_workers(writer)
            raise

    def clear(self) -> None:
        from whoosh import index

        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
        self._filters.clear()
        self._segment_masks.clear()
        self.ix.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.ix = index.create_in(str(self.directory), _schema())
        (self.directory / WHOOSH_SCHEMA).write_text(SCHEMA_VERSION)

    def paths(self) -> set[str]:
        with self.ix.searcher() as searcher:
            return {fields["path"] for fields in searcher.all_stored_fields()}

    def doc_count(self) -> int:
        return int(self.ix.doc_count())

    # --- searching ----------------------------------------------------------------------

    def terms(self, text: str) -> list[str]:
        """The analyzed terms of a query: stemmed, lower-cased, stop words removed."""
        from vaultmem.index.analysis import analyze

        return list(dict.fromkeys(analyze(text)))

    def term_map(self, words: Iterable[str]) -> dict[str, str]:
        """Each lower-cased token the analyzer keeps -> its term (snippets match passages
        against a query's terms)."""
        from vaultmem.index.analysis import term_map

        return term_map(words)

    def _current_searcher(self) -> Any:
        """One searcher per index generation: reopening a searcher, and recomputing the
        filter document sets, costs tens of milliseconds at 10k notes, so a long-lived
        process (the watcher) keeps both until a commit makes them stale."""
        from whoosh import scoring

        from vaultmem.index.bm25 import SegmentCache

        if self._searcher is None:
            self._searcher = self.ix.searcher(weighting=scoring.BM25F(B=BM25_B, K1=BM25_K1))
        elif not self._searcher.up_to_date():
            # A new searcher, not `refresh()`: whoosh3's refresh reuses the reader of an
            # unchanged segment together with its old deletion set, so a deleted or
            # re-indexed note would live on in search (tests/integration/test_bm25_scoring).
            self._searcher.close()
            self._searcher = self.ix.searcher(weighting=scoring.BM25F(B=BM25_B, K1=BM25_K1))
            self._filters.clear()
            if self._segments is not None:
                self._segments.keep_only(self._searcher)
            live = {SegmentCache.segment_key(sub.reader()) for sub, _ in self._searcher.leaf_searchers()}
            self._segment_masks = {k: v for k, v in self._segment_masks.items() if k[0] in live}
        return self._searcher

    def _filter_docs(self, searcher: Any, f: Filters) -> Any:
        """The documents the filters allow, as a boolean mask over docnums."""
        import numpy as np

        # `now` to the minute: a note expiring within the current minute may show for up
        # to 60 s more, and in exchange the filter is computed once a minute, not per query.
        key = replace(f, now=f.now - f.now % 60)
        mask = self._filters.get(key)
        if mask is None:
            if len(self._filters) > 64:
                self._filters.clear()
            parts = [self._segment_mask(sub, key) for sub, _ in searcher.leaf_searchers()]
            mask = np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
            self._filters[key] = mask
        return mask

    def _segment_mask(self, sub: Any, f: Filters) -> Any:
        """One segment's part of a filter mask. A segment never changes once written, so
        what the filter's timeless rules match in it is kept for as long as it exists;
        its deletions and the notes expired by now are taken out on every new searcher:
        after an edit only the new small segment is matched again (whole-index masks took
        ~0.6 s each at 50k notes after every edit)."""
        import numpy as np
        from whoosh import query as q

        from vaultmem.index.bm25 import SegmentCache

        reader = sub.reader()
        timeless = replace(f, now=0, include_expired=True)
        key = (SegmentCache.segment_key(reader), timeless)
        raw = self._segment_masks.get(key)
        if raw is None:
            if len(self._segment_masks) > 256:
                self._segment_masks.clear()
            raw = _docs_mask(sub.docs_for_query(whoosh_query(timeless)), reader.doc_count_all())
            self._segment_masks[key] = raw
        mask = raw.copy()
        if reader.has_deletions():
            deleted = getattr(reader, "deleted_docs_set", None)  # whoosh3's SegmentReader
            if deleted is None:
                deleted = [i for i in range(len(mask)) if reader.is_deleted(i)]
            mask[np.fromiter(deleted, dtype=np.int64)] = False
        if not f.include_expired:
            # expires <= now: few notes, so matching them is cheap (FAR_FUTURE when none)
            expired = sub.docs_for_query(q.NumericRange("expires", None, f.now))
            mask[np.fromiter(expired, dtype=np.int64)] = False
        return mask

    def _visible_docs(self, searcher: Any, f: Filters) -> Any:
        """The documents of every note the caller may see, whatever else the search
        filters: the set the statistics are counted over (SPEC §3)."""
        return self._filter_docs(searcher, Filters(readers=f.readers, now=f.now, include_expired=True))

    def search(self, text: str, filters: Filters, limit: int) -> list[LexicalHit]:
        """BM25F (Whoosh's formula, scored in bm25.py) over the allowed notes, with the
        statistics of the notes the caller may see."""
        from vaultmem.index import bm25

        terms = self.terms(text)
        if not terms:
            return []
        searcher = self._current_searcher()
        allowed = self._filter_docs(searcher, filters)
        if not allowed.any():
            return []
        if self._segments is None:
            self._segments = bm25.SegmentCache()
        visible = self._visible_docs(searcher, filters)
        scores = bm25.score(searcher, terms, FIELD_BOOSTS, BM25_B, BM25_K1, self._segments, visible)
        ranked = bm25.top(scores, allowed, limit)
        # Equal scores in the order of the notes' paths: the same whatever else the index holds.
        hits = sorted(((searcher.stored_fields(d)["path"], v) for d, v in ranked), key=lambda h: (-h[1], h[0]))
        return [LexicalHit(path, i + 1, value) for i, (path, value) in enumerate(hits[:limit])]

    def term_weights(self, text: str, filters: Filters) -> dict[str, float]:
        """Each analyzed term of `text` -> its idf among the notes the caller may see,
        log(1 + (N − df + 0.5) / (df + 0.5)) with df counted over head and body; a term no
        visible note holds gets the highest weight (search/passages.py)."""
        import math

        from vaultmem.index import bm25

        terms = self.terms(text)
        if not terms:
            return {}
        searcher = self._current_searcher()
        if self._segments is None:
            self._segments = bm25.SegmentCache()
        visible = self._visible_docs(searcher, filters)
        n = int(visible.sum())
        leaves = self._segments.leaves_of(searcher)
        df = bm25.document_frequencies(leaves, tuple(FIELD_BOOSTS), terms, self._segments, visible)
        return {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}

    def warm(self, postings: int = WARM_POSTINGS, keep_going: Callable[[], bool] | None = None) -> bool:
        """Open the searcher and decode every segment's field lengths and posting lists now,
        the largest segments first, as long as the postings held stay within `postings`, so
        that a search in a long-lived process (the watcher) reads none: at 50k notes the
        ~6M postings of the index take ~2 s and ~110 MB, and a first query decoding its own
        spent ~9 ms of ~50 on it. A segment is warmed once (they never change): after an
        edit only the new one is read; one that does not fit is read on demand.

        `keep_going` is asked every few milliseconds of work: the watcher stops warming when
        a request comes and the next call goes on where this one stopped (a warm-up that
        started over each time would never end while requests keep coming). Returns whether
        every segment is done."""
        from vaultmem.index import bm25

        searcher = self._current_searcher()
        if self._segments is None:
            self._segments = bm25.SegmentCache()
        cache = self._segments
        going = keep_going or (lambda: True)
        state = self._warming
        if state is None or state.searcher is not searcher:
            readers = [sub.reader() for sub, _ in searcher.leaf_searchers()]
            cold = [r for r in readers if cache.segment_key(r) not in self._warm_segments]
            cold.sort(key=lambda r: -r.doc_count_all())
            state = self._warming = _Warming(searcher, cold)
        while state.segments:
            reader = state.segments[0]
            if state.gather is None:
                state.gather = self._words_of(reader)
            while not state.gathered:
                step = list(itertools.islice(state.gather, WARM_STEP_WORDS))
                state.words.extend((field, term) for field, term, _ in step)
                state.size += sum(df for _, _, df in step)
                if len(step) < WARM_STEP_WORDS:
                    state.gathered = True
                elif not going():
                    return False
            if cache.held + state.size <= postings:  # else its lists are read on demand
                if state.fill is None:
                    state.fill = bm25.SegmentFill(state.size)
                while state.done < len(state.words):
                    if state.done % WARM_STEP_LISTS == 0 and state.done and not going():
                        return False
                    field, term = state.words[state.done]
                    state.fill.add(field, term, *bm25.postings(reader, field, term))
                    state.done += 1
                cache.add_segment(reader, state.fill.done())
            self._warm_segments.add(cache.segment_key(reader))
            state.next_segment()
        live = {cache.segment_key(sub.reader()) for sub, _ in searcher.leaf_searchers()}
        self._warm_segments &= live
        self._warming = None
        return True

    def _words_of(self, reader: Any) -> Iterator[tuple[str, str, int]]:
        """(field, word, document frequency) of every word of a segment; its field lengths
        are decoded on the way."""
        assert self._segments is not None
        for field in FIELD_BOOSTS:
            self._segments.lengths(reader, field)
            for text, info in reader.iter_field(field):
                term = text.decode("utf-8") if isinstance(text, bytes) else str(text)
                yield field, term, int(info.doc_frequency())

    @property
    def postings_held(self) -> int:
        """Postings decoded and kept in memory now (warm, and what searches read)."""
        return int(self._segments.held) if self._segments is not None else 0

    def count(self, filters: Filters) -> int:
        return int(self._filter_docs(self._current_searcher(), filters).sum())

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
        self.ix.close()


def _docs_mask(docs: Iterable[int], n: int) -> Any:
    import numpy as np

    mask = np.zeros(n, dtype=bool)
    mask[np.fromiter(docs, dtype=np.int64)] = True
    return mask
