"""Reconcile: the catalog stage, then each derived index catches up on its own.

Order matters for crash safety. The state db commits what the files are first; each index
then applies its pending work and only afterwards records, per row, the content it holds.
Killed at any instant, the next run sees the same pending work (or a tombstone to drop)
and converges to what a fresh full index gives. A state db created from nothing means the
indexes cannot be trusted, so they are cleared too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from vaultmem.config import VaultConfig
from vaultmem.index.catalog import NamesCache, catch_up
from vaultmem.index.chunking import Chunk, distinct_chunks, note_chunks
from vaultmem.index.documents import IndexDoc, doc_for
from vaultmem.index.embedder import Embedder
from vaultmem.index.fulltext import FullTextIndex
from vaultmem.index.passage_terms import passage_analysis, passage_terms
from vaultmem.index.statedb import NoteRecord, StateDB
from vaultmem.index.vectors import VectorIndex, text_key
from vaultmem.index.workers import ParallelBuildFailed
from vaultmem.models import IndexReport
from vaultmem.vault.note import ParsedNote
from vaultmem.vault.store import load_note, remove_stale_temps

log = logging.getLogger("vaultmem.index")

Progress = Callable[[str, int, int], None]
# Chunks are embedded in groups, each sorted by length so that a batch of the model pads
# its texts little: the larger the group, the less padding (tokens run through the model
# beyond the real ones: 3% on Obsidian Help and 9% on Cranfield in groups of 64 notes, the
# old grouping; 1% and 1.4% in groups of 1,024 chunks; 0.9% and 0.7% sorting all at once).
# A group is one Chroma write and one commit of markers; progress is told every slice.
EMBED_GROUP_CHUNKS = 1024  # a group closes once it holds this many chunks...
EMBED_GROUP_NOTES = 1024  # ...or this many notes
EMBED_SLICE = 128  # texts per call of the embedder within a group (progress between calls)


def load_body(root: Path, rec: NoteRecord, bodies: dict[str, str]) -> str | None:
    """The body of a pending note; None if the file changed since the catalog read it."""
    if rec.path in bodies:
        return bodies[rec.path]
    try:
        parsed = load_note(root / rec.path, rec.path)
    except OSError:
        return None
    if not isinstance(parsed, ParsedNote) or parsed.content_hash != rec.hash:
        return None
    return parsed.body


def error_list(db: StateDB) -> list[dict[str, str]]:
    """Files the indexer skipped or degraded, with the reason: paths, never contents."""
    out = []
    for path, problems in db.error_problems():
        for p in problems:
            if p.get("severity") == "error":
                out.append({"path": path, "code": p.get("code", ""), "message": p.get("message", "")})
    return out


class Indexer:
    def __init__(
        self,
        root: Path,
        db: StateDB,
        config: VaultConfig,
        fulltext: Callable[[], FullTextIndex],
        vectors: Callable[[str], VectorIndex] | None,
        embedder: Callable[[], Embedder | None] | None,
        progress: Progress | None = None,
        vector_identity: Callable[[], tuple[str, str, bool] | None] | None = None,
        names: NamesCache | None = None,
        dense: Callable[[], bool] | None = None,
    ) -> None:
        self.root = root
        self.names = names or NamesCache()
        self.db = db
        self.config = config
        self._fulltext = fulltext
        self._vectors = vectors
        self._embedder = embedder
        # () -> (fingerprint, collection name, store present) without loading the model
        # when that can be known; None when embeddings are off.
        self._vector_identity = vector_identity
        # Whether the vault embeds its notes: passage terms serve hybrid search only (its
        # passage coverage), so a vault without vectors is indexed without them (~15% of
        # a lexical build) and gets them when it turns embeddings on (_fill_passage_terms).
        self._dense = dense or (lambda: True)
        self.progress = progress

    def _tick(self, label: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(label, done, total)

    def reset(self, catalog: bool = True) -> None:
        """Forget what is derived so the stages rebuild it from the files.

        `catalog=False` keeps the state db's rows (what the files are, carried ids) and only
        distrusts the indexes: that is the case of a state db that never recorded what the
        indexes hold (created by `get` or `query`, or made anew next to old index files)."""
        with self.db.transaction():
            if catalog:
                self.db.clear_catalog()
            else:
                self.db.distrust_indexes()
        self._fulltext().clear()
        self.db.set_meta("indexes_cleared", "1")

    def run(self, full: bool = False, with_vectors: bool = True) -> IndexReport:
        """Reconcile every stage. A changed model or chunker re-embeds even when no file
        changed: the vector identity is checked on every run (without loading the model)."""
        start = time.perf_counter()
        report = IndexReport()
        if full:
            self.reset(catalog=True)
        elif self.db.created or self.db.get_meta("indexes_cleared") != "1":
            self.reset(catalog=False)
        self.db.created = False
        bodies: dict[str, str] = {}
        strays: list[str] = []
        tick = lambda d, t: self._tick("reading notes", d, t)  # noqa: E731
        cat = catch_up(self.root, self.db, self.config, tick, bodies, strays, self.names)
        # Temp files of writes killed midway hold copies of note bodies: never notes, gone.
        remove_stale_temps(self.root, strays)
        report.added, report.updated, report.deleted = cat.added, cat.updated, cat.deleted
        report.moved, report.unchanged = cat.moved, cat.unchanged
        report.changes = cat.changes
        report.fulltext_docs = self.sync_fulltext(bodies)
        if with_vectors and self._vectors is not None and self._embedder is not None and self._vector_identity:
            notes, chunks, embedded, label = self.sync_vectors(bodies)
            report.embedded_notes, report.embedded_chunks, report.vectors = notes, embedded, label
            report.kept_chunks = chunks - embedded
        self.db.purge_tombstones(self.db.get_meta("vector_fingerprint") is not None)
        report.errors = error_list(self.db)
        report.seconds = time.perf_counter() - start
        return report

    # --- stages -------------------------------------------------------------------------

    def sync_fulltext(self, bodies: dict[str, str]) -> int:
        # Open the index before asking what is pending: an index found missing or in an old
        # layout is created empty and its markers are reset, so this very run refills it.
        ft = self._fulltext()
        dense = self._dense()
        if self.db.unwritable is not None:
            pass  # a state db that cannot be written (a full disk): searches scan the files
        elif dense:
            self._fill_passage_terms(bodies)
        elif self.db.get_meta("passage_terms") is not None:
            self.db.passage_terms_incomplete()  # rows from now on are not made: redo them all then
        todo, drop = self.db.pending("ft_hash")
        if not todo and not drop:
            return 0
        from vaultmem.index.analysis import term_map
        from vaultmem.index.workers import build_workers

        indexed: list[tuple[str, str]] = []
        terms: list[tuple[str, str, str]] = []

        def docs() -> Iterator[IndexDoc]:
            for i, rec in enumerate(todo, 1):
                body = load_body(self.root, rec, bodies)
                if body is not None:
                    indexed.append((rec.path, rec.hash))
                    if not dense:
                        yield doc_for(rec, body)
                        continue
                    counts, found = passage_analysis(body, term_map)
                    terms.append((rec.path, rec.hash, found))
                    yield doc_for(rec, body, counts)
                if i % 250 == 0 or i == len(todo):
                    self._tick("lexical index", i, len(todo))

        # One writer, one commit (a large build commits a segment per SEGMENT_CHARS of text,
        # fulltext.py): batching commits otherwise would only add merge work. The markers
        # are set after the last commit: a crash before it leaves every marker unset and the
        # next run redoes it all (as updates, so a committed segment holds no duplicate).
        fresh = ft.doc_count() == 0
        try:
            ft.apply(docs(), drop, fresh=fresh, workers=build_workers(len(todo)) if fresh else 1)
        except ParallelBuildFailed as exc:
            # The notes are made again rather than kept through the parallel attempt: with
            # vectors each holds its body's term counts, a large build's worth of memory.
            log.warning("parallel lexical build failed (%s); building it again in one process", exc)
            indexed.clear()
            terms.clear()
            ft.apply(docs(), drop, fresh=True)
        with self.db.transaction():
            self.db.mark_dropped("ft_hash", drop)
            self.db.mark_indexed("ft_hash", indexed)
            self.db.drop_passage_terms(drop)
            self.db.record_passage_terms(terms)
        return len(indexed)

    def _fill_passage_terms(self, bodies: dict[str, str]) -> None:
        """Make the passage terms of every note the lexical index holds when the table
        is not known complete (a vault indexed before it: once, ~1 ms a note)."""
        stale = self.db.passage_terms_stale()
        if stale is None:
            return
        from vaultmem.index.analysis import term_map

        rows = []
        for i, rec in enumerate(stale, 1):
            body = load_body(self.root, rec, bodies)
            if body is not None:
                rows.append((rec.path, rec.hash, passage_terms(body, term_map)))
            if i % 250 == 0 or i == len(stale):
                self._tick("passage terms", i, len(stale))
        with self.db.transaction():
            self.db.record_passage_terms(rows)
            self.db.passage_terms_complete()

    def sync_vectors(self, bodies: dict[str, str]) -> tuple[int, int, int, str]:
        assert self._vectors is not None and self._embedder is not None and self._vector_identity is not None
        todo, drop = self.db.pending("vec_hash")
        expected = self._vector_identity()
        if expected is None:
            return 0, 0, 0, "none"
        fp, collection, present = expected
        # The markers describe one collection: a new model or chunker, a vault moved to
        # another path (http mode names collections by path) or a vector store that lost
        # its files all mean the markers describe vectors that are not there.
        stale = (
            self.db.get_meta("vector_fingerprint") != fp
            or self.db.get_meta("vector_collection") != collection
            or not present
        )
        if not todo and not drop and not stale:
            if not self.db.centroids_current():  # from the stored vectors: no model needed
                self._fill_centroids(self._vectors(fp))
            return 0, 0, 0, fp
        embedder = self._embedder()
        if embedder is None:
            return 0, 0, 0, "none"
        vectors = self._vectors(fp)
        empty = vectors.count() == 0
        if stale or (empty and self.db.has_vectors()):
            self._start_collection(vectors, fp, collection)
            todo, drop = self.db.pending("vec_hash")
            empty = True
        elif not self.db.centroids_current():
            self._fill_centroids(vectors)
        if not empty and todo and drop:
            carried = self._carry_moved(vectors, todo)
            todo = [r for r in todo if r.path not in carried]
        if drop:
            if not empty:
                vectors.delete_paths(drop)
            with self.db.transaction():
                self.db.drop_centroids(drop)
                self.db.mark_dropped("vec_hash", drop)
        window = getattr(embedder, "fits_window", None)  # a note the model reads whole is one chunk
        fits = window() if window is not None else None
        notes = chunks = embedded = 0
        items: list[tuple[IndexDoc, Chunk, str]] = []
        docs: list[IndexDoc] = []
        for done, rec in enumerate(todo, 1):
            body = load_body(self.root, rec, bodies)
            if body is not None:
                doc = doc_for(rec, body)
                docs.append(doc)
                parts = distinct_chunks(note_chunks(doc.body, doc.prose, doc.title, fits), doc.title)
                items.extend((doc, chunk, text) for chunk, text in parts)
            if len(items) >= EMBED_GROUP_CHUNKS or len(docs) >= EMBED_GROUP_NOTES or done == len(todo):
                before = done - len(docs)

                def tick(share: float, before: int = before, size: int = len(docs)) -> None:
                    self._tick("embedding", before + round(share * size), len(todo))

                embedded += self._embed_group(embedder, vectors, docs, items, reuse=not empty, tick=tick)
                notes += len(docs)
                chunks += len(items)
                items, docs = [], []
                self._tick("embedding", done, len(todo))
        return notes, chunks, embedded, fp

    def _start_collection(self, vectors: VectorIndex, fp: str, collection: str) -> None:
        """Re-embed everything, in a collection of its own, and drop this vault's
        collections of other fingerprints so vectors never mix."""
        vectors.drop_other_fingerprints()
        vectors.reset()
        with self.db.transaction():
            self.db.reset_index("vec_hash")
            self.db.reset_centroids(complete=True)
            self.db.set_meta("vector_fingerprint", fp)
            self.db.set_meta("vector_collection", collection)

    def _embed_group(
        self,
        embedder: Embedder,
        vectors: VectorIndex,
        docs: list[IndexDoc],
        items: list[tuple[IndexDoc, Chunk, str]],
        reuse: bool,
        tick: Callable[[float], None],
    ) -> int:
        """Store the chunks of `docs` (`items`: note, chunk, text to embed) and mark the
        notes indexed; returns how many texts went through the model. With `reuse` (a store that may hold these notes already), a chunk
        whose text is unchanged keeps its stored vector: the collection is one fingerprint's,
        and a text key names the exact text embedded (title and heading included), so an
        edit of one paragraph embeds one chunk."""
        if not docs:
            return 0
        keys = [text_key(text) for _, _, text in items]
        known = vectors.vectors_by_key([d.path for d in docs]) if reuse else {}
        todo: dict[str, str] = {}
        for key, (_, _, text) in zip(keys, items, strict=True):
            if key not in known:
                todo.setdefault(key, text)  # a text repeated in the group is embedded once
        # Longest first, in slices: each slice holds texts of similar length, as if the whole
        # group were sorted at once. By the model's own token counts when the embedder tells
        # them (tokenizing twice costs ~0.3% of embedding); sorted by characters, the
        # padding was 3.5-7% instead of 1.4-1.8%.
        texts = list(todo.values())
        counter = getattr(embedder, "token_counts", None)
        sizes = counter(texts) if counter is not None else None
        if sizes is None:
            sizes = [len(t) for t in texts]
        pending = [item for _, item in sorted(zip(sizes, todo.items(), strict=True), key=lambda si: -si[0])]
        for start in range(0, len(pending), EMBED_SLICE):
            part = pending[start : start + EMBED_SLICE]
            known.update(zip((k for k, _ in part), embedder.embed([t for _, t in part]), strict=True))
            tick((start + len(part)) / len(pending))
        if reuse:
            # Old chunks may exist even when no marker says so (a crash after an add):
            # drop them first so a note that shrank leaves no stale chunk behind.
            vectors.delete_paths([d.path for d in docs])
        vectors.add([(doc, chunk, known[key]) for (doc, chunk, _), key in zip(items, keys, strict=True)], keys)
        by_note: dict[str, list[list[float]]] = {d.path: [] for d in docs}
        for (doc, _, _), key in zip(items, keys, strict=True):
            by_note[doc.path].append(known[key])
        with self.db.transaction():
            self.db.record_centroids(by_note)
            self.db.mark_indexed("vec_hash", [(d.path, d.hash) for d in docs])
        return len(pending)

    def _carry_moved(self, vectors: VectorIndex, todo: list[NoteRecord]) -> set[str]:
        """Give moved notes (a renamed folder) the vectors they had at their old path
        instead of embedding them again: the same content and title embed to the same
        vectors, and embedding is most of a reconcile's time. Only the metadata (path,
        scope, owner, ...) is new. Returns the paths carried."""
        gone = {h: (path, title) for path, h, title in self.db.embedded_tombstones()}
        plans: list[tuple[NoteRecord, list[tuple[int, str, list[float], str]]]] = []
        for rec in todo:
            old = gone.pop(rec.hash, None)
            if old is None or old[1] != rec.title:
                continue
            kept = vectors.chunks_of(old[0])
            if kept:
                plans.append((rec, kept))
        # What a path held before a note moved over it goes first (in batches, not a call each).
        vectors.delete_paths([rec.path for rec, _ in plans])
        for rec, kept in plans:
            doc = doc_for(rec, "")
            vectors.add(
                [(doc, Chunk(index, heading, ""), vec) for index, heading, vec, _ in kept], [key for *_, key in kept]
            )
        carried = [(rec.path, rec.hash) for rec, _ in plans]
        moved = {rec.path: [vec for _, _, vec, _ in kept] for rec, kept in plans}
        with self.db.transaction():
            self.db.record_centroids(moved)
            self.db.mark_indexed("vec_hash", carried)
        return {path for path, _ in carried}

    def _fill_centroids(self, vectors: VectorIndex) -> None:
        """Make the centroid rows of every note the vector store holds, from its stored
        vectors, when the table is not known complete (a vault indexed before it: once,
        ~1 s per 10k chunks, no embedding)."""
        sums = vectors.chunk_sums()  # outside the transaction: the scan takes ~1 s per 10k chunks
        with self.db.transaction():
            self.db.reset_centroids(complete=False)
            self.db.record_centroid_sums(sums)
            self.db.centroids_complete()
