"""Heading- and paragraph-aware chunks that fit the embedding model's window. Pure.

all-MiniLM-L6-v2 reads at most 256 word pieces; anything longer is silently cut off. A
chunk is one section's paragraphs packed up to a budget below that, each prefixed with the
note title and heading path so a paragraph deep in a note still says what it is about.
Paragraphs too long on their own are split at sentences, then at words.

A note the model can read whole is one chunk, whatever the budget: the budget is an
estimate kept below the window, and splitting a 230-piece abstract in two gives each half
an embedding of half its meaning. Only the model's own tokenizer can say what fits (code
and rare words run to several pieces a word), so the indexer passes `fits` when it has one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from vaultmem.vault.markdown import HEADING_RE, code_lines

# c4: fences close as CommonMark says (a `~~~` in a ``` block is code); c5: a note that fits
# the model's window whole is one chunk; c6: a text a note already embeds is stored once
# (distinct_chunks)
CHUNKER_VERSION = "c6"
MAX_TOKENS = 256  # the model's window in word pieces
BUDGET = 200  # estimated tokens per chunk body, leaving room for the title prefix
MAX_CHUNKS_PER_NOTE = 256  # bounds embedding work on huge notes; BM25 still covers all

_TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")


def estimate_tokens(text: str) -> int:
    """Word-piece estimate: words and punctuation, long words counted as several pieces."""
    total = 0
    for tok in _TOKEN_RE.findall(text):
        total += 1 + len(tok) // 8
    return total


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    heading: str  # "H1 > H2" path, empty before the first heading
    text: str  # the chunk body as written in the note

    def embed_text(self, title: str) -> str:
        head = f"{title} > {self.heading}" if self.heading else title
        return f"{head}\n{self.text}"


def _sections(body: str) -> list[tuple[str, str]]:
    """(heading path, section text) in order; code fences never start a section."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    path: list[tuple[int, str]] = []
    for line, code in code_lines(body.split("\n")):
        m = None if code else HEADING_RE.match(line)
        if m:
            level = len(m.group(1))
            path = [(lvl, txt) for lvl, txt in path if lvl < level] + [(level, m.group(2).strip())]
            sections.append((" > ".join(t for _, t in path), []))
        else:
            sections[-1][1].append(line)
    return [(h, "\n".join(lines).strip()) for h, lines in sections if "\n".join(lines).strip()]


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n[ \t]*\n", text) if p.strip()]


def _split_long(paragraph: str, budget: int) -> list[str]:
    if estimate_tokens(paragraph) <= budget:
        return [paragraph]
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in _SENTENCE_RE.split(paragraph):
        cost = estimate_tokens(sentence)
        if cost > budget:
            words = sentence.split()
            step = max(1, budget // 2)
            parts = [" ".join(words[i : i + step]) for i in range(0, len(words), step)]
        else:
            parts = [sentence]
        for part in parts:
            part_cost = estimate_tokens(part)
            if current and size + part_cost > budget:
                pieces.append(" ".join(current))
                current, size = [], 0
            current.append(part)
            size += part_cost
    if current:
        pieces.append(" ".join(current))
    return pieces


def _pack(heading: str, text: str, budget: int, chunks: list[Chunk]) -> None:
    current: list[str] = []
    size = 0
    for para in _paragraphs(text):
        for piece in _split_long(para, budget):
            cost = estimate_tokens(piece)
            if current and size + cost > budget:
                chunks.append(Chunk(len(chunks), heading, "\n\n".join(current)))
                current, size = [], 0
            current.append(piece)
            size += cost
    if current:
        chunks.append(Chunk(len(chunks), heading, "\n\n".join(current)))


def chunk_note(body: str, budget: int = BUDGET) -> list[Chunk]:
    """Split a markdown body into chunks of at most ~`budget` estimated tokens."""
    chunks: list[Chunk] = []
    for heading, text in _sections(body):
        _pack(heading, text, budget, chunks)
        if len(chunks) >= MAX_CHUNKS_PER_NOTE:
            return chunks[:MAX_CHUNKS_PER_NOTE]
    return chunks


def chunk_plain(text: str, budget: int = BUDGET) -> list[Chunk]:
    """Chunks of a file that is not markdown (source code, text): blank-line blocks only,
    since a `#` line there is a comment, not a heading."""
    chunks: list[Chunk] = []
    _pack("", text.strip(), budget, chunks)
    return chunks[:MAX_CHUNKS_PER_NOTE]


def note_chunks(body: str, prose: str = "", title: str = "", fits: Callable[[str], bool] | None = None) -> list[Chunk]:
    """The chunks embedded for a note: its front-matter prose (a `description` is often
    the best summary there is) as chunk 0 when present, then the body's chunks: one, the
    whole body, when `fits` says the model reads it whole under `title` (search's snippets
    chunk without it: a note embedded whole shows its first chunk's). A note with neither
    still gets one (title-only) chunk, so it can be found by meaning."""
    chunks = chunk_note(body)
    if len(chunks) > 1 and fits is not None and estimate_tokens(body) <= 2 * MAX_TOKENS:
        whole = Chunk(0, "", body.strip())
        if fits(whole.embed_text(title)):
            chunks = [whole]
    if prose:
        return [Chunk(0, "", prose), *(Chunk(c.index + 1, c.heading, c.text) for c in chunks)]
    return chunks or [Chunk(0, "", "")]


def distinct_chunks(chunks: list[Chunk], title: str) -> list[tuple[Chunk, str]]:
    """Each chunk with the text its vector embeds, a text the note already embeds left out
    (its index kept, so snippets still find it). A note of one line repeated (a log, a
    paste gone wrong) otherwise stores up to MAX_CHUNKS_PER_NOTE equal vectors, and equal
    vectors cut Chroma's HNSW graph apart: a search could then find that note and nothing
    else, every other note out of reach."""
    seen: set[str] = set()
    out: list[tuple[Chunk, str]] = []
    for chunk in chunks:
        text = chunk.embed_text(title)
        if text not in seen:
            seen.add(text)
            out.append((chunk, text))
    return out
