"""The evaluation sets as tasks: each corpus as documents, queries and judgments (peers index
the documents' texts), and as the files of a vault (vaultmem indexes those). Questions, splits
and off-topic sets are in data/ (data/README.md: all written before any tuning)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tools.corpora import Cranfield, Question

DATA = Path(__file__).resolve().parent / "data"
QUESTIONS = DATA / "obsidian_questions.json"
CRANFIELD_SPLIT = DATA / "cranfield_split.json"
TLDR_QUERIES = DATA / "tldr_queries.json"
TLDR_ARCHIVE = "tldr-pages.tar.gz"


def log(message: str) -> None:
    print(f"[eval] {message}", file=sys.stderr, flush=True)


@dataclass
class Task:
    """One corpus ready to search: peers index `texts`; every ranking is a list of doc ids."""

    name: str
    doc_ids: list[str]
    texts: list[str]
    queries: list[str]
    query_ids: list[str]
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> gain
    splits: dict[str, str] = field(default_factory=dict)  # query id -> "tune" | "test"
    measure: str = "answer"  # a key of MEASURES
    offtopic: list[str] = field(default_factory=list)  # questions the corpus does not answer
    tokens: bool = False  # also measure the size of `search --json --limit 5` over `queries`
    # query id -> the group whose documents alone it is searched among (LoCoMo: one
    # conversation); empty: every query over every document
    groups: dict[str, str] = field(default_factory=dict)
    # named subsets of the queries reported on their own (LoCoMo's categories; the
    # paraphrase subset, paraphrase.py)
    subsets: dict[str, set[str]] = field(default_factory=dict)

    def group_of_doc(self, doc: str) -> str:
        """The group of a document of a grouped task: its id up to the first `/`."""
        return doc.split("/", 1)[0]


def load_offtopic(name: str) -> list[str]:
    return [
        q["question"] for q in json.loads((DATA / f"offtopic_{name}.json").read_text(encoding="utf-8"))["questions"]
    ]


def cranfield_task(data: Cranfield, split_path: Path = CRANFIELD_SPLIT) -> Task:
    doc_ids = sorted(data.docs, key=int)
    split = json.loads(split_path.read_text(encoding="utf-8"))["split"]
    splits = {qid: name for name in ("tune", "test") for qid in split[name]}
    unsplit = [query.id for query in data.queries if query.id not in splits]
    if unsplit:
        raise SystemExit(f"eval: Cranfield queries in no split of {split_path.name}: {unsplit[:10]}")
    # Peers see title + abstract, as in the corpora README's reference figures.
    texts = [f"{data.docs[d].title}\n{data.docs[d].text}".strip() for d in doc_ids]
    return Task(
        name="cranfield",
        doc_ids=doc_ids,
        texts=texts,
        queries=[query.text for query in data.queries],
        query_ids=[query.id for query in data.queries],
        qrels=data.qrels,
        splits=splits,
        measure="graded",
        offtopic=load_offtopic("cranfield"),
    )


def note_stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def obsidian_task(notes: Mapping[str, str], questions: Sequence[Question]) -> Task:
    doc_ids = sorted(notes)
    missing = sorted({q.answer for q in questions} - set(doc_ids))
    if missing:
        raise SystemExit(f"eval: answers not in the vault: {missing}")
    # Peers see the file name (Obsidian's title) and the whole file, front matter included, so
    # aliases and descriptions count for them as they do for vaultmem.
    texts = [f"{note_stem(path)}\n{notes[path]}" for path in doc_ids]
    return Task(
        name="obsidian",
        doc_ids=doc_ids,
        texts=texts,
        queries=[q.question for q in questions],
        query_ids=[q.id for q in questions],
        qrels={q.id: {q.answer: 1} for q in questions},
        splits={q.id: q.split for q in questions},
        measure="answer",
        offtopic=load_offtopic("obsidian"),
        tokens=True,
    )


def tldr_vault_files(corpora: Path) -> dict[str, str]:
    """The English tldr pages in the vault layout of tldr_queries.json's header (vault-relative
    path -> text unchanged): one builder for tuning (fusion_tune.py) and eval, so both see one
    vault."""
    import tarfile

    spec = json.loads(TLDR_QUERIES.read_text())["vault"]
    out: dict[str, str] = {}
    with tarfile.open(corpora / TLDR_ARCHIVE) as tar:
        for member in tar:
            parts = member.name.split("/")
            if member.isfile() and len(parts) == 4 and parts[:2] == ["tldr", "pages"] and parts[3].endswith(".md"):
                fh = tar.extractfile(member)
                if fh is not None:
                    out[spec["vault_path"].format(platform=parts[2], name=parts[3][:-3])] = fh.read().decode("utf-8")
    return out


def tldr_task(files: Mapping[str, str], queries_path: Path = TLDR_QUERIES) -> Task:
    """Known-item queries over the pages; peers index each page's text as it is in the vault."""
    data = json.loads(queries_path.read_text(encoding="utf-8"))
    expected = data["vault"].get("pages")
    if expected is not None and expected != len(files):
        log(f"tldr: {len(files)} English pages in the archive, {queries_path.name} was built on {expected}")
    doc_ids = sorted(shared_doc_id(path) or path for path in files)
    texts = [files[f"shared/{doc}"] for doc in doc_ids]
    questions = data["questions"]
    qrels = {q["id"]: {shared_doc_id(path) or path: 1 for path in q["relevant"]} for q in questions}
    missing = sorted({doc for judged in qrels.values() for doc in judged} - set(doc_ids))
    if missing:
        raise SystemExit(f"eval: tldr pages judged relevant but not in the vault: {missing[:10]}")
    return Task(
        name="tldr",
        doc_ids=doc_ids,
        texts=texts,
        queries=[q["query"] for q in questions],
        query_ids=[q["id"] for q in questions],
        qrels=qrels,
        splits={q["id"]: q["split"] for q in questions},
        measure="known-item",
        offtopic=load_offtopic("tldr"),
    )


def cranfield_note(title: str, body: str) -> str:
    # json.dumps gives a valid YAML double-quoted scalar for any title (colons, quotes, ...).
    front = f"title: {json.dumps(title)}\n" if title else ""
    return f"---\n{front}---\n{body.strip()}\n"


def cranfield_vault_files(data: Cranfield) -> dict[str, str]:
    return {f"shared/cran-{int(doc.id):04d}.md": cranfield_note(doc.title, doc.text) for doc in data.docs.values()}


def obsidian_vault_files(notes: Mapping[str, str]) -> dict[str, str]:
    return {f"shared/{rel}": text for rel, text in notes.items()}


def cranfield_doc_id(note_path: str) -> str | None:
    match = re.search(r"(?:^|/)cran-(\d+)\.md$", note_path)
    return str(int(match.group(1))) if match else None


def shared_doc_id(note_path: str) -> str | None:
    """Doc id of a note copied under `shared/` (Obsidian Help, tldr): its path below `shared/`."""
    return note_path.removeprefix("shared/") if note_path.startswith("shared/") else None


obsidian_doc_id = shared_doc_id
