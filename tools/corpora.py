"""Loaders for the evaluation corpora in ../shared/corpora (shared by tools/evalkit and benchmarks).

Only the standard library: benchmarks import this without pulling in numpy or torch.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

# A field marker in the SMART format: a line that is exactly ".T", ".A", ".B", ".W", or ".I <n>".
_FIELD = re.compile(r"^\.([TABW])\s*$")
_ID = re.compile(r"^\.I\s+(\d+)\s*$")


@dataclass(frozen=True)
class CranDoc:
    id: str  # the .I number without leading zeros, e.g. "1"
    title: str
    author: str
    biblio: str
    text: str  # the .W abstract (its first sentence usually repeats the title)


@dataclass(frozen=True)
class Query:
    id: str
    text: str


@dataclass
class Cranfield:
    docs: dict[str, CranDoc]
    queries: list[Query]
    # query id -> doc id -> gain (5 - code; codes outside 1-4 are left out)
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str  # vault-relative path of the one note that answers it
    split: str  # "tune" or "test"


def _read_lines(path: Path) -> list[str]:
    # The files ship with CRLF line ends; splitlines() handles both.
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _parse_smart(path: Path) -> list[tuple[str, dict[str, str]]]:
    """Records of a SMART-format file as (.I number, {field letter: text}).

    Cranfield has stray marker lines inside some abstracts (doc 240 has ".A" and ".B" in its
    body, docs 576 and 578 a second ".W"). Once a record's .W has started, any later marker
    is treated as a line break inside the body, so no text is lost or misfiled.
    """
    records: list[tuple[str, dict[str, list[str]]]] = []
    current: str | None = None
    for line in _read_lines(path):
        id_match = _ID.match(line)
        if id_match:
            records.append((id_match.group(1), {}))
            current = None
            continue
        if not records:
            continue  # text before the first .I
        fields = records[-1][1]
        field_match = _FIELD.match(line)
        if field_match and "W" not in fields:
            current = field_match.group(1)
            fields.setdefault(current, [])
            continue
        if field_match:
            continue  # a stray marker inside the abstract
        if current is not None:
            fields[current].append(line)
    return [(number, {key: "\n".join(lines).strip() for key, lines in fields.items()}) for number, fields in records]


def load_cran_docs(path: Path) -> dict[str, CranDoc]:
    docs: dict[str, CranDoc] = {}
    for number, fields in _parse_smart(path):
        doc_id = str(int(number))
        docs[doc_id] = CranDoc(
            id=doc_id,
            title=_one_line(fields.get("T", "")),
            author=_one_line(fields.get("A", "")),
            biblio=_one_line(fields.get("B", "")),
            text=fields.get("W", ""),
        )
    return docs


def load_cran_queries(path: Path) -> list[Query]:
    # The qrels number queries by position (1-225), not by the .I numbers, which skip values.
    return [
        Query(id=str(position), text=_one_line(fields.get("W", "")))
        for position, (_, fields) in enumerate(_parse_smart(path), start=1)
    ]


def load_cran_qrels(
    path: Path, doc_ids: set[str] | None = None, query_ids: set[str] | None = None
) -> dict[str, dict[str, int]]:
    """Graded judgments: gain = 5 - code for codes 1-4.

    The file has CRLF ends, trailing blanks, a double space (line 316) and one code -1 per
    query ("no interest"): those and any unparsable line, unknown doc or unknown query are
    skipped. A doc judged twice keeps its best (highest) gain.
    """
    qrels: dict[str, dict[str, int]] = {}
    for line in _read_lines(path):
        parts = line.split()
        if len(parts) < 3:
            continue
        try:
            query, doc, code = (int(part) for part in parts[:3])
        except ValueError:
            continue
        if not 1 <= code <= 4:
            continue
        query_id, doc_id = str(query), str(doc)
        if (doc_ids is not None and doc_id not in doc_ids) or (query_ids is not None and query_id not in query_ids):
            continue
        judged = qrels.setdefault(query_id, {})
        judged[doc_id] = max(judged.get(doc_id, 0), 5 - code)
    return qrels


def load_cranfield(folder: Path) -> Cranfield:
    docs = load_cran_docs(folder / "cran.all.1400")
    queries = load_cran_queries(folder / "cran.qry")
    qrels = load_cran_qrels(folder / "cranqrel", set(docs), {query.id for query in queries})
    return Cranfield(docs=docs, queries=queries, qrels=qrels)


def load_vault_notes(folder: Path) -> dict[str, str]:
    """Every markdown note of a vault as {vault-relative POSIX path: text}, hidden folders skipped."""
    notes: dict[str, str] = {}
    for path in sorted(folder.rglob("*.md")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue
        notes[rel.as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return notes


def load_questions(path: Path) -> list[Question]:
    return [
        Question(id=str(item["id"]), question=item["question"], answer=item["answer"], split=item["split"])
        for item in json.loads(path.read_text(encoding="utf-8"))
    ]
