"""The lexical index: Whoosh (whoosh3) BM25F over title, aliases, tags and body.

Queries never go through Whoosh's query parser: the text is run through the same
analyzer as the documents and becomes an OR of terms across fields, so hyphens, colons,
quotes, paths, dates and operators are plain words and nothing a user types can raise.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.index.documents import Filters, IndexDoc

SCHEMA_VERSION = "w8"

# Field weights of the BM25F sum; tuned on the tune split of scripts/eval.py.
# Applied at query time (a weighted sum of per-field BM25 scores), so they can change
# without reindexing. Tuned on the tune split of scripts/eval.py.
# A title match already counts twice when the body repeats the word (two fields), and
# boosting titles further hurt both corpora: Cranfield nDCG@10 0.381 at 1.0 against 0.362
# at 2.5. Front-matter prose helps vectors more than BM25, hence its lower weight.
FIELD_BOOSTS = {"title": 1.0, "aliases": 1.0, "tags": 1.0, "prose": 0.5, "body": 1.0}
BM25_B = 0.75
BM25_K1 = 1.5


def _schema() -> Any:
    from whoosh import fields

    from vaultmem.index.analysis import FastText

    return fields.Schema(
        path=fields.ID(stored=True, unique=True),
        id=fields.ID(stored=True),
        title=FastText(),
        aliases=FastText(),
        tags=FastText(),
        tagset=fields.KEYWORD(lowercase=True, commas=True),
        prose=FastText(),
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


@dataclass(frozen=True, slots=True)
class LexicalHit:
    path: str
    rank: int  # 1-based
    score: float


class FullTextIndex:
    """One Whoosh index under .vaultmem/whoosh. Open it once per process."""

    def __init__(self, directory: Path) -> None:
        from whoosh import index

        self.directory = directory
        marker = directory / "VAULTMEM_SCHEMA"
        if directory.exists() and (not marker.exists() or marker.read_text() != SCHEMA_VERSION):
            shutil.rmtree(directory)  # derived state in an old layout: rebuild
        if directory.exists() and index.exists_in(str(directory)):
            self.ix = index.open_dir(str(directory))
            self.created = False
        else:
            directory.mkdir(parents=True, exist_ok=True)
            self.ix = index.create_in(str(directory), _schema())
            marker.write_text(SCHEMA_VERSION)
            self.created = True

    # --- writing ------------------------------------------------------------------------

    def apply(self, upserts: Iterable[IndexDoc], deletes: Iterable[str], fresh: bool = False) -> None:
        """Upsert and delete in one commit. `fresh`: the index is known empty (faster adds)."""
        deletes = list(deletes)
        # A large pool keeps a full build in memory; smaller pools spill sorted runs to
        # disk through pickle, which costs more than the indexing itself.
        writer = self.ix.writer(limitmb=1024)
        try:
            for path in deletes:
                writer.delete_by_term("path", path)
            add = writer.add_document if fresh else writer.update_document
            for doc in upserts:
                add(
                    path=doc.path,
                    id=doc.id,
                    title=doc.title,
                    aliases=" ".join(doc.aliases),
                    tags=" ".join(t.replace("/", " ").replace("-", " ") for t in doc.tags),
                    tagset=",".join(doc.tags),
                    prose=doc.prose,
                    body=doc.body,
                    type=doc.type,
                    scope=doc.scope,
                    owner=doc.owner,
                    project=doc.project,
                    reader=doc.reader,
                    created=doc.created,
                    updated=doc.updated,
                    expires=doc.expires,
                    trust=doc.trust,
                    confidence=doc.confidence,
                    importance=doc.importance,
                )
        except BaseException:
            writer.cancel()
            raise
        writer.commit()

    def clear(self) -> None:
        from whoosh import index

        self.ix.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.ix = index.create_in(str(self.directory), _schema())
        (self.directory / "VAULTMEM_SCHEMA").write_text(SCHEMA_VERSION)

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

    def _filter_query(self, f: Filters) -> Any:
        from whoosh import query as q

        parts: list[Any] = [q.Or([q.Term("reader", r) for r in f.readers])]
        if f.scopes:
            parts.append(q.Or([q.Term("scope", s) for s in f.scopes]))
        if f.types:
            parts.append(q.Or([q.Term("type", t) for t in f.types]))
        for tag in f.tags:
            parts.append(q.Term("tagset", tag.lower()))
        if f.project:
            parts.append(q.Term("project", f.project))
        if f.since is not None or f.until is not None:
            parts.append(q.NumericRange("created", f.since, f.until))
        if f.min_trust is not None:
            parts.append(q.NumericRange("trust", f.min_trust, None))
        if f.min_confidence is not None:
            parts.append(q.NumericRange("confidence", f.min_confidence, None))
        if f.min_importance is not None:
            parts.append(q.NumericRange("importance", f.min_importance, None))
        if not f.include_expired:
            parts.append(q.NumericRange("expires", f.now, None, startexcl=True))
        if f.paths is not None:
            parts.append(q.Or([q.Term("path", p) for p in f.paths]) if f.paths else q.NullQuery)
        return q.And(parts)

    def search(self, text: str, filters: Filters, limit: int) -> list[LexicalHit]:
        from whoosh import query as q
        from whoosh import scoring

        terms = self.terms(text)
        if not terms:
            return []
        clauses = [q.Term(field, term, boost=boost) for term in terms for field, boost in FIELD_BOOSTS.items()]
        weighting = scoring.BM25F(B=BM25_B, K1=BM25_K1)
        with self.ix.searcher(weighting=weighting) as searcher:
            results = searcher.search(q.Or(clauses), limit=limit, filter=self._filter_query(filters))
            return [LexicalHit(hit["path"], i + 1, float(hit.score)) for i, hit in enumerate(results)]

    def count(self, filters: Filters) -> int:
        with self.ix.searcher() as searcher:
            return len(searcher.search(self._filter_query(filters), limit=None))

    def close(self) -> None:
        self.ix.close()
