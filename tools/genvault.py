#!/usr/bin/env python3
"""Generate a synthetic vaultmem vault: deterministic for a seed, realistic enough to benchmark.

    genvault.py OUT --notes N [--seed S] [--ghosts alice,bob,carol] [--projects 3]
                [--embedding none|auto] [--corpus PATH]

Text comes from topical bigram chains trained at generation time on the Cranfield abstracts
(`../shared/corpora/cranfield/cran.all.1400`, or `--corpus`), so BM25 and embeddings see
real English with topical signal and no large data file is committed. Without the corpus a
small built-in vocabulary is used (the project's tests must not depend on corpora/).

What a note looks like, and why:
- lengths are log-normal (median ~150 words, a tail to ~3k words): agent memories are
  mostly short, a few are long reference pages; the tail is what stresses chunking;
- headings, paragraphs, lists, the odd code block and quote: the chunker's input shapes;
- wikilinks in every form Obsidian knows (`|label`, `#heading`, `![[embed]]`, aliases, ids,
  relative markdown links) plus ~6% dangling targets: the graph and the resolver's work;
- scopes spread like an agent vault (~50% shared, 20% private, 10% project, 15% diary,
  5% inbox), with front matter exactly as vaultmem writes it (canonical key order,
  `hash: sha256:<hex of body>`).

A manifest `.genvault.json` at the vault root (not a note: not `.md`) records the seed,
counts, topics and a sample of notes for the benchmark to pick references from.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "cranfield" / "cran.all.1400"
TEMPLATE_TOML = REPO / "vaultmem" / "vault_template" / "vaultmem.toml"
MANIFEST = ".genvault.json"

SCOPE_WEIGHTS = {"shared": 50, "private": 20, "project": 10, "diary": 15, "inbox": 5}
TYPES_BY_SCOPE: dict[str, dict[str, int]] = {
    "shared": {
        "note": 34,
        "fact": 20,
        "skill": 10,
        "pattern": 10,
        "reference": 12,
        "decision": 5,
        "observation": 7,
        "preference": 2,
    },
    "private": {"preference": 25, "fact": 25, "note": 20, "skill": 10, "observation": 10, "decision": 10},
    "project": {"decision": 30, "note": 25, "pattern": 15, "fact": 15, "observation": 10, "skill": 5},
    "diary": {"episode": 70, "observation": 20, "conversation": 10},
    "inbox": {"capture": 100},
}
PROJECT_NAMES = ("apollo", "borealis", "cirrus", "dynamo", "ember", "fjord", "gannet", "harbor", "ion", "juniper")
GENERIC_TAGS = ("todo", "idea", "howto", "review", "meeting", "research", "open-question", "summary", "lesson", "area/aero", "area/ops", "status/draft", "status/final")  # fmt: skip
SOURCES = (
    "tool:web_search",
    "tool:read_file",
    "conversation",
    "https://example.org/reports/{n}",
    "capture:{n}",
    "manual",
)
START = datetime(2024, 1, 1, tzinfo=UTC)
END = datetime(2026, 11, 1, tzinfo=UTC)
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "may",
        "me",
        "might",
        "more",
        "most",
        "must",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "shall",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "thus",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "yet",
        "you",
        "your",
        "one",
        "two",
        "three",
        "given",
        "obtained",
        "using",
        "used",
        "found",
        "shown",
        "show",
        "results",
        "result",
        "case",
        "cases",
        "method",
        "methods",
        "present",
        "paper",
        "made",
        "make",
        "may",
        "also",
        "both",
    ]
)

# Used only when the Cranfield corpus is absent: small topical clusters about an agent's work.
FALLBACK_CLUSTERS: dict[str, str] = {
    "deployment": "deployment rollout release canary cluster kubernetes container image registry helm staging production rollback pipeline artifact version manifest node",
    "database": "database postgres index query schema migration table column transaction replica backup vacuum latency connection pool lock",
    "testing": "test fixture assertion coverage regression flaky mock integration unit suite runner snapshot failure harness benchmark",
    "search": "search ranking retrieval embedding vector lexical query relevance recall precision fusion rerank chunk tokenizer stemming",
    "security": "security token secret credential permission access audit encryption certificate vulnerability patch firewall policy",
    "frontend": "frontend component layout render browser stylesheet accessibility button modal form route state hook bundle",
    "writing": "writing draft outline paragraph review editor summary argument citation chapter revision audience style",
    "meetings": "meeting agenda decision action owner deadline follow-up stakeholder roadmap priority milestone retrospective",
    "memory": "memory note vault link graph tag scope ghost diary inbox capture curation trust validation recall",
    "networking": "network socket packet latency bandwidth proxy dns routing gateway timeout retry throughput handshake",
}
FALLBACK_GLUE = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "for",
    "on",
    "with",
    "that",
    "by",
    "as",
    "at",
    "from",
    "this",
    "it",
    "be",
    "are",
    "was",
    "an",
    "or",
    "which",
    "can",
]


# --- text model -------------------------------------------------------------------------


@dataclass(slots=True)
class Topic:
    """A topical bigram chain plus the words that name the topic (titles, headings, tags)."""

    anchor: str
    chain: dict[str, list[str]]
    starts: list[str]
    words: list[str]


_TOKEN_RE = re.compile(r"[a-z][a-z'\-]*[a-z]|[a-z]|[.,;]")


def read_cranfield(path: Path) -> list[list[str]]:
    """Token lists of the abstracts (`.W` fields) of the Cranfield collection."""
    text = path.read_text(encoding="utf-8", errors="replace")
    docs: list[list[str]] = []
    for record in text.split("\n.I ")[0:]:
        _, sep, body = record.partition("\n.W\n")
        if sep:
            docs.append(_TOKEN_RE.findall(body.lower()))
    return docs


def fallback_docs(rng: random.Random) -> tuple[list[list[str]], list[str]]:
    """Synthetic documents from the built-in clusters: one cluster's words mixed with glue."""
    docs: list[list[str]] = []
    anchors: list[str] = []
    for anchor, words_text in FALLBACK_CLUSTERS.items():
        words = words_text.split()
        anchors.append(anchor)
        for _ in range(8):
            doc: list[str] = []
            for _ in range(40):
                for _ in range(rng.randint(6, 14)):
                    doc.append(rng.choice(words) if rng.random() < 0.6 else rng.choice(FALLBACK_GLUE))
                doc.append(".")
            docs.append(doc)
    return docs, anchors


def _is_content(word: str) -> bool:
    return len(word) >= 4 and word not in STOPWORDS and word[0].isalpha() and "'" not in word


def choose_anchors(docs: list[list[str]], n_topics: int) -> tuple[list[str], dict[str, list[int]]]:
    """Mid-frequency words whose documents overlap little: each becomes one topic."""
    postings: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        for word in sorted(set(doc)):
            if _is_content(word) and len(word) >= 5:
                postings.setdefault(word, []).append(i)
    counts: Counter[str] = Counter()
    for doc in docs:
        counts.update(doc)
    # Burstiness (occurrences per document holding the word) separates subject words such as
    # "flutter" or "buckling" from spread-out words such as "along" or "applied".
    candidates = sorted(
        (w for w, p in postings.items() if 20 <= len(p) <= 160),
        key=lambda w: (-counts[w] / len(postings[w]), w),
    )
    anchors: list[str] = []
    taken: list[set[int]] = []
    for word in candidates:
        docs_w = set(postings[word])
        if all(len(docs_w & t) < 0.35 * len(docs_w) for t in taken):
            anchors.append(word)
            taken.append(docs_w)
            if len(anchors) == n_topics:
                break
    return anchors, postings


def build_topic(anchor: str, doc_ids: list[int], docs: list[list[str]], global_counts: Counter[str]) -> Topic:
    chain: dict[str, list[str]] = {}
    starts: list[str] = []
    counts: Counter[str] = Counter()
    for i in doc_ids:
        doc = docs[i]
        counts.update(doc)
        prev = "."
        for tok in doc:
            if prev == "." and tok not in ".,;":
                starts.append(tok)
            chain.setdefault(prev, []).append(tok)
            prev = tok
    scored = sorted(
        (w for w, c in counts.items() if c >= 3 and _is_content(w)),
        key=lambda w: (-counts[w] / global_counts[w] ** 0.7, w),
    )
    words = [anchor, *[w for w in scored[:80] if w != anchor]]
    return Topic(anchor, chain, starts or words, words)


def build_topics(corpus: Path | None, n_topics: int, rng: random.Random) -> list[Topic]:
    if corpus is not None and corpus.is_file():
        docs = read_cranfield(corpus)
        anchors, postings = choose_anchors(docs, n_topics)
    else:
        docs, anchors = fallback_docs(rng)
        postings = {a: list(range(k * 8, k * 8 + 8)) for k, a in enumerate(anchors)}
    global_counts: Counter[str] = Counter()
    for doc in docs:
        global_counts.update(doc)
    topics = []
    for anchor in anchors:
        # Cap documents per topic so each chain stays focused on its anchor's subject.
        ids = sorted(postings[anchor], key=lambda i: (-docs[i].count(anchor), i))[:80]
        topics.append(build_topic(anchor, sorted(ids), docs, global_counts))
    return topics


class TextGen:
    """Sentences and phrases from a topic's chain; counts words as it goes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def sentence(self, topic: Topic, max_len: int) -> list[str]:
        rng = self.rng
        word = rng.choice(topic.starts)
        out = [word]
        chain = topic.chain
        while len(out) < max_len:
            nxt = chain.get(word)
            if not nxt:
                break
            word = rng.choice(nxt)
            if word == ".":
                break
            out.append(word)
        while (out and out[-1] in ",;") or (len(out) > 1 and out[-1] in STOPWORDS):
            out.pop()
        return out or [topic.anchor]

    def phrase(self, topic: Topic, lo: int, hi: int) -> str:
        """A title-like run: starts at one of the topic's subject words, follows the chain."""
        rng = self.rng
        for _ in range(8):
            word = rng.choice(topic.words[:40])
            words = [word]
            target = rng.randint(lo, hi)
            while len(words) < target:
                nxt = topic.chain.get(word)
                if not nxt:
                    break
                word = rng.choice(nxt)
                if word in ".,;":
                    break
                words.append(word)
            while words and (words[-1] in STOPWORDS or len(words[-1]) < 3):
                words.pop()
            if len(words) >= lo:
                return " ".join(words)
        return " ".join(rng.sample(topic.words[:30], k=min(max(lo, 1), len(topic.words[:30]))))


def join_tokens(tokens: list[str]) -> str:
    text = " ".join(tokens).replace(" ,", ",").replace(" ;", ";")
    return text[:1].upper() + text[1:]


# --- note plans -------------------------------------------------------------------------


@dataclass(slots=True)
class Plan:
    index: int
    id: str
    title: str
    type: str
    scope: str
    relpath: str
    topic: int
    words: int
    owner: str | None = None
    project: str | None = None
    headings: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    parent: str | None = None
    source: str | None = None
    trust: float | None = None
    confidence: float | None = None
    importance: float | None = None
    created: datetime = START
    updated: datetime = START
    expires: datetime | None = None
    version: int = 1

    @property
    def group(self) -> str:
        """Who can see this note besides everyone: link targets stay inside what a reader sees."""
        if self.scope == "project":
            return f"project:{self.project}"
        if self.owner:
            return f"ghost:{self.owner}"
        return "shared"


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(ms: int, rand: int) -> str:
    value = (ms << 80) | rand
    return "".join(_CROCKFORD[(value >> (5 * i)) & 31] for i in range(25, -1, -1))


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:80].rstrip("-") or "note"


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def note_length(rng: random.Random, scope: str) -> int:
    """Words in a body: log-normal, median ~150 (captures shorter), tail to ~3k."""
    median = 45 if scope == "inbox" else 150
    return max(12, min(3200, int(rng.lognormvariate(math.log(median), 0.95))))


def unique(text: str, seen: set[str]) -> str:
    """`text`, or `text N` when taken (case-insensitive, as title resolution is)."""
    candidate, n = text, 2
    while candidate.lower() in seen:
        candidate, n = f"{text} {n}", n + 1
    seen.add(candidate.lower())
    return candidate


def weighted(rng: random.Random, table: dict[str, int]) -> str:
    return rng.choices(list(table), weights=list(table.values()))[0]


class Planner:
    """Decides everything about every note before any body is written, so bodies can link to
    any other note's title, alias or heading."""

    def __init__(self, rng: random.Random, topics: list[Topic], ghosts: list[str], projects: list[str]) -> None:
        self.rng = rng
        self.topics = topics
        self.ghosts = ghosts
        self.projects = projects
        self.text = TextGen(rng)
        self.titles: set[str] = set()
        self.paths: set[str] = set()
        self.alias_seen: set[str] = set()
        self.tag_vocab = [t.anchor for t in topics] + list(GENERIC_TAGS)
        # Topic popularity is skewed (a few subjects dominate a real vault).
        self.topic_weights = [1.0 / (k + 3) for k in range(len(topics))]

    def plan(self, n: int) -> list[Plan]:
        plans = [self.one(i) for i in range(n)]
        self.assign_parents(plans)
        return plans

    def one(self, i: int) -> Plan:
        rng = self.rng
        scope = weighted(rng, SCOPE_WEIGHTS)
        if not self.ghosts and scope in ("private", "diary"):
            scope = "shared"
        if not self.projects and scope == "project":
            scope = "shared"
        topic_ix = rng.choices(range(len(self.topics)), weights=self.topic_weights)[0]
        topic = self.topics[topic_ix]
        created = START + timedelta(seconds=rng.uniform(0, (END - START).total_seconds()))
        created = created.replace(microsecond=0)
        ms = int(created.timestamp() * 1000) + rng.randrange(1000)
        plan = Plan(
            index=i,
            id=ulid(ms, rng.getrandbits(80)),
            title="",
            type=weighted(rng, TYPES_BY_SCOPE[scope]),
            scope=scope,
            relpath="",
            topic=topic_ix,
            words=note_length(rng, scope),
            created=created,
        )
        self.place(plan, topic)
        self.decorate(plan, topic)
        return plan

    def place(self, plan: Plan, topic: Topic) -> None:
        """Owner, project, title and path; folders decide the scope (SPEC §1)."""
        rng = self.rng
        phrase = self.text.phrase(topic, 2, 6)
        day = plan.created.strftime("%Y-%m-%d")
        if plan.scope == "diary":
            plan.owner = rng.choice(self.ghosts)
            title = f"{day} {phrase}"
            folder = f"diary/{plan.owner}/{plan.created.year}"
        elif plan.scope == "inbox":
            if self.ghosts and rng.random() < 0.6:
                plan.owner = rng.choice(self.ghosts)
            title = f"Capture {plan.created.strftime('%Y-%m-%d %H%M')} {phrase}"
            folder = f"inbox/{plan.owner or 'shared'}"
        elif plan.scope == "private":
            plan.owner = rng.choice(self.ghosts)
            title = phrase[:1].upper() + phrase[1:]
            folder = f"private/{plan.owner}"
        elif plan.scope == "project":
            plan.project = rng.choice(self.projects)
            title = phrase[:1].upper() + phrase[1:]
            folder = f"project/{plan.project}" + ("/decisions" if plan.type == "decision" else "")
        else:
            title = phrase[:1].upper() + phrase[1:]
            # Part of shared/ sits in topic subfolders, as people organise a real vault.
            folder = f"shared/{topic.anchor}" if rng.random() < 0.4 else "shared"
        plan.title = unique(title, self.titles)
        stem = slugify(plan.title)
        relpath, n = f"{folder}/{stem}.md", 2
        while relpath in self.paths:
            relpath, n = f"{folder}/{stem}-{n}.md", n + 1
        self.paths.add(relpath)
        plan.relpath = relpath

    def decorate(self, plan: Plan, topic: Topic) -> None:
        """Headings, tags, aliases, scores and dates."""
        rng = self.rng
        if plan.words > 220:
            n_sections = max(2, min(14, plan.words // rng.randint(120, 260)))
            seen: set[str] = set()
            for _ in range(n_sections):
                head = self.text.phrase(topic, 2, 4)
                plan.headings.append(unique(head[:1].upper() + head[1:], seen))
        n_tags = rng.choices((0, 1, 2, 3, 4), weights=(15, 30, 30, 15, 10))[0]
        tags = [topic.anchor] if n_tags else []
        while len(tags) < n_tags:
            tag = rng.choice(self.tag_vocab) if rng.random() < 0.5 else rng.choice(topic.words[:25])
            if tag not in tags:
                tags.append(tag)
        plan.tags = tags
        if plan.scope not in ("diary", "inbox") and rng.random() < 0.15:
            plan.aliases = self.aliases_for(plan.title, topic)
        plan.source = self.source(plan)
        if rng.random() < 0.85:
            plan.trust = round(min(1.0, max(0.05, rng.betavariate(5, 2))), 2)
        if rng.random() < 0.3:
            plan.confidence = round(rng.uniform(0.3, 1.0), 2)
        if rng.random() < 0.3:
            plan.importance = round(rng.uniform(0.0, 1.0), 2)
        plan.version = 1 + min(12, int(rng.expovariate(0.8)))
        age = (NOW - plan.created).total_seconds()
        plan.updated = (
            plan.created if plan.version == 1 else plan.created + timedelta(seconds=int(age * rng.random() ** 3))
        )
        if rng.random() < 0.03:
            plan.expires = plan.created + timedelta(days=rng.choice((7, 30, 90, 365)))

    def aliases_for(self, title: str, topic: Topic) -> list[str]:
        words = title.split()
        options = [
            "".join(w[0] for w in words if w[0].isalpha()).upper(),
            " ".join(reversed(words[-2:])) if len(words) > 1 else "",
            self.text.phrase(topic, 2, 3).title(),
        ]
        out: list[str] = []
        for alias in options[: self.rng.randint(1, 2)]:
            # Aliases must not collide with titles or other aliases: links through them
            # would become ambiguous and the "links mostly resolve" check meaningless.
            if len(alias) >= 3 and alias.lower() not in self.titles and alias.lower() not in self.alias_seen:
                self.alias_seen.add(alias.lower())
                out.append(alias)
        return out

    def source(self, plan: Plan) -> str | None:
        if plan.scope != "inbox" and self.rng.random() > 0.1:
            return None
        template = self.rng.choice(SOURCES)
        return template.format(n=self.rng.randrange(10_000))

    def assign_parents(self, plans: list[Plan]) -> None:
        """~12% of notes name an earlier note the same reader can see as parent (no cycles)."""
        rng = self.rng
        by_group: dict[str, list[Plan]] = {}
        for plan in plans:
            if plan.scope not in ("diary", "inbox") and plan.index > 0 and rng.random() < 0.12:
                pool = (
                    by_group.get(plan.group, []) + by_group.get("shared", [])
                    if plan.group != "shared"
                    else by_group.get("shared", [])
                )
                if pool:
                    parent = rng.choice(pool[-400:])
                    plan.parent = parent.id if rng.random() < 0.8 else parent.title
            by_group.setdefault(plan.group, []).append(plan)


# --- bodies -----------------------------------------------------------------------------


@dataclass(slots=True)
class LinkStats:
    total: int = 0
    dangling: int = 0
    by_form: Counter[str] = field(default_factory=Counter)


class BodyWriter:
    """Renders a planned note's body: sections, paragraphs, lists, code, links and tags."""

    def __init__(self, rng: random.Random, topics: list[Topic], plans: list[Plan]) -> None:
        self.rng = rng
        self.topics = topics
        self.plans = plans
        self.text = TextGen(rng)
        self.stats = LinkStats()
        self.shared_by_topic: dict[int, list[int]] = {}
        self.by_group: dict[str, list[int]] = {}
        for p in plans:
            if p.scope == "shared":
                self.shared_by_topic.setdefault(p.topic, []).append(p.index)
            self.by_group.setdefault(p.group, []).append(p.index)
        self.shared = self.by_group.get("shared", [])

    def body(self, plan: Plan) -> str:
        rng = self.rng
        topic = self.topics[plan.topic]
        # Roughly one link per 70 words; a fifth of notes link to nothing.
        self.link_rate = 0.0 if rng.random() < 0.2 else 1 / rng.uniform(40, 110)
        blocks: list[str] = []
        budget = plan.words
        sections = plan.headings or [""]
        per_section = max(12, budget // len(sections))
        code_at = rng.randrange(len(sections)) if rng.random() < 0.06 else -1
        for k, heading in enumerate(sections):
            if heading:
                blocks.append(f"## {heading}")
            blocks.extend(self.section(plan, topic, per_section))
            if k == code_at:
                blocks.append(self.code_block(topic))
        if rng.random() < 0.3:
            tags = rng.sample(plan.tags or [topic.anchor], k=min(2, len(plan.tags or [topic.anchor])))
            extra = rng.choice([t.anchor for t in self.topics])
            blocks.append(" ".join(f"#{t}" for t in dict.fromkeys([*tags, extra])))
        return "\n\n".join(blocks) + "\n"

    def section(self, plan: Plan, topic: Topic, words: int) -> list[str]:
        rng = self.rng
        blocks: list[str] = []
        left = words
        while left > 0:
            roll = rng.random()
            list_bias = 0.35 if plan.scope == "diary" else 0.15
            if roll < list_bias:
                block, used = self.bullets(plan, topic, numbered=rng.random() < 0.25)
            elif roll < list_bias + 0.03:
                block, used = self.quote(plan, topic)
            else:
                block, used = self.paragraph(plan, topic, min(left, rng.randint(30, 120)))
            blocks.append(block)
            left -= used
        return blocks

    def sentence(self, plan: Plan, topic: Topic, lo: int = 6, hi: int = 24) -> tuple[str, int]:
        tokens = self.text.sentence(topic, self.rng.randint(lo, hi))
        n = len(tokens)
        if self.link_rate and self.rng.random() < self.link_rate * n:
            tokens.insert(self.rng.randint(1, len(tokens)), self.link(plan))
        return join_tokens(tokens) + ".", n

    def paragraph(self, plan: Plan, topic: Topic, words: int) -> tuple[str, int]:
        out: list[str] = []
        used = 0
        while used < words:
            text, n = self.sentence(plan, topic)
            out.append(text)
            used += n
        return " ".join(out), used

    def bullets(self, plan: Plan, topic: Topic, numbered: bool) -> tuple[str, int]:
        lines: list[str] = []
        used = 0
        for k in range(self.rng.randint(2, 7)):
            text, n = self.sentence(plan, topic, 3, 14)
            marker = f"{k + 1}." if numbered else "-"
            if plan.scope == "diary" and not numbered:
                text = f"{self.rng.randint(7, 22):02d}:{self.rng.randint(0, 59):02d} {text}"
            lines.append(f"{marker} {text}")
            used += n
        return "\n".join(lines), used

    def quote(self, plan: Plan, topic: Topic) -> tuple[str, int]:
        text, n = self.sentence(plan, topic)
        return f"> {text}", n

    def code_block(self, topic: Topic) -> str:
        """A fenced block; its words, links and #tags must not count (strip_code's job)."""
        words = [
            w.replace("-", "_").replace("'", "")
            for w in self.rng.sample(topic.words[:20], k=min(4, len(topic.words[:20])))
        ]
        lang = self.rng.choice(("python", "bash", "json"))
        if lang == "python":
            code = f"def {words[0]}({', '.join(words[1:3])}):\n    # see [[not a link]] #not-a-tag\n    return {words[1]} * {len(words)}"
        elif lang == "bash":
            code = f"vaultmem search '{' '.join(words[:2])}' --json --limit 5\n# #not-a-tag"
        else:
            code = json.dumps({w: i for i, w in enumerate(words)}, indent=2)
        return f"```{lang}\n{code}\n```"

    def link(self, src: Plan) -> str:
        """One link to a note the source's reader can see, in one of Obsidian's forms."""
        rng = self.rng
        self.stats.total += 1
        if rng.random() < 0.06:
            self.stats.dangling += 1
            self.stats.by_form["dangling"] += 1
            return f"[[{self.text.phrase(self.topics[src.topic], 2, 4).title()}]]"
        target = self.plans[self.pick_target(src)]
        form = rng.choices(
            ("plain", "label", "heading", "heading_label", "embed", "alias", "id", "markdown"),
            weights=(55, 14, 8, 3, 4, 5, 3, 4),
        )[0]
        if form in ("heading", "heading_label") and not target.headings:
            form = "plain"
        if form == "alias" and not target.aliases:
            form = "plain"
        self.stats.by_form[form] += 1
        label = self.text.phrase(self.topics[target.topic], 1, 3)
        if form == "label":
            return f"[[{target.title}|{label}]]"
        if form == "heading":
            return f"[[{target.title}#{rng.choice(target.headings)}]]"
        if form == "heading_label":
            return f"[[{target.title}#{rng.choice(target.headings)}|{label}]]"
        if form == "embed":
            return f"![[{target.title}]]"
        if form == "alias":
            return f"[[{rng.choice(target.aliases)}]]"
        if form == "id":
            return f"[[{target.id}]]"
        if form == "markdown":
            rel = os.path.relpath(target.relpath, os.path.dirname(src.relpath) or ".")
            return f"[{label}]({rel})"
        return f"[[{target.title}]]"

    def pick_target(self, src: Plan) -> int:
        rng = self.rng
        roll = rng.random()
        same_topic = self.shared_by_topic.get(src.topic)
        own = self.by_group.get(src.group) if src.group != "shared" else None
        if roll < 0.55 and same_topic:
            pool = same_topic
        elif roll < 0.8 and own:
            pool = own
        else:
            pool = self.shared or own or same_topic or [src.index]
        return rng.choice(pool)


# --- front matter and files -------------------------------------------------------------

_PLAIN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 _.,()'/+-]*[A-Za-z0-9.)]$")
_YAML_SPECIAL = frozenset(["y", "yes", "n", "no", "true", "false", "on", "off", "null"])


def scalar(value: str) -> str:
    """A YAML scalar: plain when unambiguous, else a double-quoted (JSON-compatible) string."""
    if _PLAIN_RE.match(value) and value.lower() not in _YAML_SPECIAL and " #" not in value:
        return value
    return json.dumps(value, ensure_ascii=False)


def front_matter(plan: Plan, body: str) -> str:
    """Keys in vaultmem's canonical order (SPEC §2), formatted as vaultmem writes them."""
    lines = [f"id: {plan.id}", f"title: {scalar(plan.title)}", f"type: {plan.type}", f"scope: {plan.scope}"]
    if plan.owner:
        lines.append(f"owner: {plan.owner}")
    if plan.project:
        lines.append(f"project: {plan.project}")
    if plan.parent:
        lines.append(f"parent: {scalar(plan.parent)}")
    for key, values in (("tags", plan.tags), ("aliases", plan.aliases)):
        if values:
            lines.append(f"{key}:")
            lines.extend(f"  - {scalar(v)}" for v in values)
    if plan.source:
        lines.append(f"source: {scalar(plan.source)}")
    for key, num in (("trust_score", plan.trust), ("confidence", plan.confidence), ("importance", plan.importance)):
        if num is not None:
            lines.append(f"{key}: {num}")
    lines += [f"created: {iso(plan.created)}", f"updated: {iso(plan.updated)}"]
    if plan.expires:
        lines.append(f"expires: {iso(plan.expires)}")
    lines.append(f"version: {plan.version}")
    lines.append("hash: sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest())
    return "---\n" + "\n".join(lines) + "\n---\n"


def config_text(ghosts: list[str], projects: list[str], embedding: str) -> str:
    """vaultmem.toml from the packaged template, with our ghosts, projects and backend."""
    try:
        text = TEMPLATE_TOML.read_text(encoding="utf-8")
    except OSError:
        text = (
            '[vault]\nghosts = []\n\n[projects.example]\n\n[embedding]\nbackend = "auto"\nmodel = "all-MiniLM-L6-v2"\n'
        )
    text = re.sub(r"(?m)^ghosts = \[.*\]$", "ghosts = " + json.dumps(ghosts), text, count=1)
    sections = []
    for k, name in enumerate(projects):
        # Every third project has a member list, so access filtering has work to do.
        members = ghosts[: max(1, len(ghosts) - 1)] if k % 3 == 1 and ghosts else None
        sections.append(f"[projects.{name}]" + (f"\nmembers = {json.dumps(members)}" if members else ""))
    text = re.sub(r"(?m)^\[projects\.example\]\n(#[^\n]*\n)?", "\n".join(sections) + "\n", text, count=1)
    return re.sub(r'(?m)^backend = "[^"]*"', f'backend = "{embedding}"', text, count=1)


@dataclass(slots=True)
class Summary:
    out: Path
    notes: int
    seconds: float
    words: int
    bytes: int
    scopes: dict[str, int]
    links: int
    dangling: int
    corpus: str


def generate(
    out: Path,
    notes: int,
    seed: int = 42,
    ghosts: list[str] | None = None,
    projects: int = 3,
    embedding: str = "auto",
    corpus: Path | None = DEFAULT_CORPUS,
    topics: int = 40,
) -> Summary:
    """Write a vault of `notes` notes into `out` (which must be absent or empty)."""
    started = time.perf_counter()
    ghosts = list(ghosts if ghosts is not None else ["alice", "bob", "carol"])
    project_names = list(PROJECT_NAMES[:projects]) + [f"project-{k}" for k in range(len(PROJECT_NAMES), projects)]
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"genvault: {out} is not empty")
    rng = random.Random(seed)
    topic_list = build_topics(corpus, topics, rng)
    plans = Planner(rng, topic_list, ghosts, project_names).plan(notes)
    writer = BodyWriter(rng, topic_list, plans)
    out.mkdir(parents=True, exist_ok=True)
    (out / "vaultmem.toml").write_text(config_text(ghosts, project_names, embedding), encoding="utf-8")
    (out / ".gitignore").write_text(".vaultmem/\n*.swp\n*~\n", encoding="utf-8")
    made: set[str] = set()
    words = size = 0
    scopes: Counter[str] = Counter()
    for plan in plans:
        body = writer.body(plan)
        data = (front_matter(plan, body) + body).encode("utf-8")
        folder = plan.relpath.rsplit("/", 1)[0]
        if folder not in made:
            (out / folder).mkdir(parents=True, exist_ok=True)
            made.add(folder)
        (out / plan.relpath).write_bytes(data)
        words += len(body.split())
        size += len(data)
        scopes[plan.scope] += 1
    corpus_name = corpus.name if corpus is not None and corpus.is_file() else "built-in vocabulary"
    summary = Summary(
        out,
        notes,
        time.perf_counter() - started,
        words,
        size,
        dict(sorted(scopes.items())),
        writer.stats.total,
        writer.stats.dangling,
        corpus_name,
    )
    write_manifest(out, seed, summary, plans, topic_list, ghosts, project_names, embedding)
    return summary


def write_manifest(
    out: Path,
    seed: int,
    summary: Summary,
    plans: list[Plan],
    topics: list[Topic],
    ghosts: list[str],
    projects: list[str],
    embedding: str,
) -> None:
    sample = [p for p in plans if p.scope == "shared"][:40] + [p for p in plans if p.scope != "shared"][:20]
    manifest: dict[str, Any] = {
        "generator": "tools/genvault.py",
        "seed": seed,
        "notes": summary.notes,
        "seconds": round(summary.seconds, 2),
        "words": summary.words,
        "bytes": summary.bytes,
        "scopes": summary.scopes,
        "links": summary.links,
        "dangling_links": summary.dangling,
        "corpus": summary.corpus,
        "ghosts": ghosts,
        "projects": projects,
        "embedding": embedding,
        "topics": [{"anchor": t.anchor, "words": t.words[:12]} for t in topics],
        "sample": [
            {
                "id": p.id,
                "title": p.title,
                "path": p.relpath,
                "scope": p.scope,
                "owner": p.owner,
                "project": p.project,
                "topic": topics[p.topic].anchor,
            }
            for p in sample
        ],
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate a deterministic synthetic vaultmem vault.")
    parser.add_argument("out", type=Path, help="output folder (absent or empty)")
    parser.add_argument("--notes", type=int, required=True, help="number of notes")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--ghosts", default="alice,bob,carol", help="comma-separated ghost names")
    parser.add_argument("--projects", type=int, default=3, help="number of projects")
    parser.add_argument(
        "--embedding", choices=("none", "auto"), default="auto", help="[embedding] backend in vaultmem.toml"
    )
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help="Cranfield cran.all.1400 for the vocabulary"
    )
    parser.add_argument("--topics", type=int, default=40)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    ghosts = [g.strip() for g in args.ghosts.split(",") if g.strip()]
    s = generate(args.out, args.notes, args.seed, ghosts, args.projects, args.embedding, args.corpus, args.topics)
    info = {
        "out": str(s.out),
        "notes": s.notes,
        "seconds": round(s.seconds, 3),
        "words": s.words,
        "bytes": s.bytes,
        "scopes": s.scopes,
        "links": s.links,
        "dangling": s.dangling,
        "corpus": s.corpus,
    }
    if args.json:
        print(json.dumps(info))
    else:
        print(
            f"genvault: {s.notes} notes, {s.words} words, {s.bytes / 1e6:.1f} MB, {s.links} links ({s.dangling} dangling) in {s.seconds:.2f} s from {s.corpus} -> {s.out}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
