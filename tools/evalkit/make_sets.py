#!/usr/bin/env python3
"""Build the seeded evaluation sets of issue 11 from ../shared/corpora (no search is run).

Subcommands:

  tldr       A known-item query set over the English tldr pages. For randomly chosen pages, one
             query from the page's first description line (`> ...`) or from one example
             description (`- ...`), with the command's own name removed, lower-cased and
             punctuation trimmed; queries under 3 words are skipped. Every English page whose
             description or example text gives the identical query is relevant. Written with the
             vault layout eval.py must use when it copies the pages into a vault.
  cranfield  A seeded split of the 225 Cranfield query ids into tune and test.

Usage:
  python -m tools.evalkit.make_sets tldr --corpora ../shared/corpora --out tools/evalkit/data/tldr_queries.json
                                 [--seed 11] [--n 400] [--tune-fraction 0.5] [--max-relevant 5]
  python -m tools.evalkit.make_sets cranfield --corpora ../shared/corpora --out tools/evalkit/data/cranfield_split.json
                                 [--seed 11]

The same arguments give the same file (only "created" is today's date unless --created is given).
Only the standard library: the unit tests import this without the corpora.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import string
import tarfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tools.corpora import load_cran_queries

TLDR_ARCHIVE = "tldr-pages.tar.gz"
# English pages only: tldr/pages/<platform>/<name>.md (translations live in tldr/pages.<lang>/).
ENGLISH_MEMBER = re.compile(r"^tldr/pages/([^/]+)/([^/]+)\.md$")
MEMBER_LAYOUT = "tldr/pages/{platform}/{name}.md"
VAULT_LAYOUT = "shared/tldr/{platform}/{name}.md"

DEFAULT_SEED = 11  # the number
DEFAULT_N = 400
DEFAULT_TUNE_FRACTION = 0.5
DEFAULT_MAX_RELEVANT = 5
MIN_WORDS = 3
# Chance that a page's query comes from its description line rather than one of its examples
# (when both qualify); pages have ~8 examples and one description.
DESCRIPTION_SHARE = 0.3

# Description lines that are page furniture, not a description of what the command does.
_FURNITURE = re.compile(
    r"^(more information|see also|this command is an alias of|this command is deprecated|"
    r"this command has been superseded|"
    r"for (?:the )?(?:original|more|related|equivalent)|some subcommands such as|note:)",
    re.IGNORECASE,
)
# Example descriptions that are no query on their own: lines leaning on the line before them
# ("Same as above, customize host and port") and pointers to other pages ("View documentation
# for the original command").
_NOT_A_SOURCE = re.compile(
    r"^(?:as above|(?:the )?same as (?:the )?above|(?:similar to|like) (?:the )?above|view documentation for)\b",
    re.IGNORECASE,
)
# Parts of a hyphenated name that are too common to count as "the command's name" on their own.
# fmt: off
_PART_STOPWORDS = frozenset((
    "a", "all", "an", "and", "any", "as", "at", "be", "by", "do", "for", "from", "if", "in", "into", "is",
    "it", "its", "me", "my", "no", "not", "of", "off", "on", "onto", "or", "our", "out", "over", "per", "so",
    "than", "that", "the", "this", "to", "up", "us", "via", "we", "with", "you", "your",
))
# fmt: on
# Brackets, quotes and clause punctuation separate words; '.', '-', '/', "'" may sit inside one
# ("i.e", "real-time", "local/remote", "project's") and are only trimmed from its ends.
_SEPARATORS = re.compile(r"[()\[\]{}<>\"“”«»,;:!?*|]")
_PUNCT = string.punctuation + "“”‘’«»…–—"
_PUNCT_END = _PUNCT.replace("+", "").replace("#", "")  # "C++" and "C#" keep their ends


# --- parsing and normalisation (pure functions; see tests/unit/test_make_eval_sets.py) -----


@dataclass
class Page:
    title: str  # the `# ` line, e.g. "git commit"
    descriptions: list[str] = field(default_factory=list)  # the `> ` lines, in order
    examples: list[str] = field(default_factory=list)  # the `- ` lines, in order
    commands: list[str] = field(default_factory=list)  # the backticked example commands


def parse_page(text: str) -> Page:
    page = Page(title="")
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("# ") and not page.title:
            page.title = line[2:].strip()
        elif line.startswith(">"):
            page.descriptions.append(line[1:].strip())
        elif line.startswith("- "):
            page.examples.append(line[2:].strip())
        elif line.startswith("`") and line.endswith("`") and len(line) > 1:
            page.commands.append(line.strip("`").strip())
    return page


def is_furniture(description: str) -> bool:
    return bool(_FURNITURE.match(description))


def binary_name(page: Page) -> str | None:
    """The program the examples run: the most common first word of the commands (after sudo)."""
    firsts: Counter[str] = Counter()
    for command in page.commands:
        words = command.split()
        if words and words[0] == "sudo":
            words = words[1:]
        if words and "{{" not in words[0]:
            firsts[words[0]] += 1
    return firsts.most_common(1)[0][0] if firsts else None


def name_variants(stem: str, page: Page) -> list[str]:
    """Ways the page's own command is written in its text, longest first.

    The file name ("git-commit"), the title ("git commit"), the binary the examples run (when it
    starts like the name), each
    with '-' as a space too, the name without a trailing version number ("python3" -> "python"),
    and the parts split on '-' and spaces (two characters or more, common English words left).
    """
    wholes = {stem, page.title}
    binary = binary_name(page)
    # Only a binary that looks like the page's name ("gst-launch-1.0" on gst-launch): alias pages
    # run `tldr`, and pipelines start with `echo` or `cat`, which are other commands.
    if binary and binary.lower()[:3] in (stem.lower()[:3], page.title.lower()[:3]):
        wholes.add(binary)
    for whole in list(wholes):
        wholes.add(whole.replace("-", " "))
        stripped = re.sub(r"(?<=[a-z])[\d.]+$", "", whole)
        if len(stripped) >= 2:
            wholes.add(stripped)
    variants = {whole.strip().lower() for whole in wholes if whole.strip()}
    for whole in list(variants):
        for part in re.split(r"[-\s]+", whole):
            if len(part) >= 2 and part not in _PART_STOPWORDS:
                variants.add(part)
    return sorted(variants, key=lambda v: (-len(v), v))


def _strip_markup(text: str) -> str:
    text = re.sub(r"^\[[A-Za-z]{2,}\]\s+", "", text)  # a leading tag: "[Interactive] Search ..."
    text = re.sub(r"<https?://[^>]*>", " ", text)  # links
    text = text.replace("{{", "").replace("}}", "")  # placeholders
    text = re.sub(r"(?<=\w)\(s\)", "", text)  # "file(s)" -> "file"
    return re.sub(r"\[([^\[\]\s|]+)\]", r"\1", text)  # mnemonic letters: "[c]reate" -> "create"


def remove_names(text: str, variants: Sequence[str]) -> str:
    """`text` with every occurrence of the command's names taken out (backticked or bare)."""
    lowered = {variant.lower() for variant in variants}

    def backticked(match: re.Match[str]) -> str:
        inner = match.group(1).strip()
        return " " if inner.lower() in lowered else f" {inner}{match.group(2) or ''} "

    text = re.sub(r"`([^`]*)`('s|’s)?", backticked, text)
    for variant in variants:  # longest first, so "apt-get" goes before "apt"
        # A name is a whole word: no letter, digit, '_' or '-' right before or after it.
        pattern = rf"(?<![\w-]){re.escape(variant)}(?:'s|’s)?(?![\w-])"
        text = re.sub(pattern, " ", text, flags=re.IGNORECASE)
    return text


def normalise(text: str, variants: Sequence[str]) -> str:
    """Markup stripped, names removed, lower-cased, punctuation trimmed from every word."""
    text = _SEPARATORS.sub(" ", remove_names(_strip_markup(text), variants).lower())
    words = (word.lstrip(_PUNCT).rstrip(_PUNCT_END) for word in text.split())
    return " ".join(word for word in words if word)


def make_query(text: str, variants: Sequence[str], min_words: int = MIN_WORDS) -> str | None:
    """The query `text` gives, or None when fewer than `min_words` words are left."""
    query = normalise(text, variants)
    return query if len(query.split()) >= min_words else None


def page_queries(stem: str, text: str) -> tuple[list[tuple[str, str, str]], set[str]]:
    """(sources, answered) of one page.

    sources: (kind, original line, query) for the first description line (unless furniture)
    and every example description that stands on its own, each with at least MIN_WORDS words.
    answered: every query the page's text gives (all non-furniture `> ` lines and all examples),
    which decides relevance.
    """
    page = parse_page(text)
    variants = name_variants(stem, page)
    sources: list[tuple[str, str, str]] = []
    answered: set[str] = set()
    descriptions = [d for d in page.descriptions if not is_furniture(d)]
    for index, line in enumerate(descriptions):
        query = make_query(line, variants)
        if query is None:
            continue
        answered.add(query)
        if index == 0 and page.descriptions and line == page.descriptions[0]:
            sources.append(("description", line, query))
    for line in page.examples:
        query = make_query(line.rstrip(":"), variants)
        if query is None:
            continue
        answered.add(query)
        if not _NOT_A_SOURCE.match(line):
            sources.append(("example", line, query))
    return sources, answered


# --- tldr -------------------------------------------------------------------------------------


def load_tldr_english(archive: Path) -> dict[tuple[str, str], str]:
    """{(platform, name): page text} for every English page, read straight from the archive."""
    pages: dict[tuple[str, str], str] = {}
    with tarfile.open(archive) as tar:
        for member in tar:
            match = ENGLISH_MEMBER.match(member.name)
            if not match or not member.isfile():
                continue
            handle = tar.extractfile(member)
            if handle is not None:
                pages[match.group(1), match.group(2)] = handle.read().decode("utf-8", errors="replace")
    return pages


def vault_path(platform: str, name: str) -> str:
    return VAULT_LAYOUT.format(platform=platform, name=name)


def split_ids(ids: Sequence[str], seed: int, tune_fraction: float) -> dict[str, list[str]]:
    """A seeded shuffle of `ids`; the first round(len * tune_fraction) are tune, the rest test."""
    shuffled = list(ids)
    random.Random(f"{seed}:split").shuffle(shuffled)
    cut = round(len(shuffled) * tune_fraction)
    order = {item: index for index, item in enumerate(ids)}
    return {
        "tune": sorted(shuffled[:cut], key=order.__getitem__),
        "test": sorted(shuffled[cut:], key=order.__getitem__),
    }


def build_tldr(
    pages: Mapping[tuple[str, str], str],
    seed: int,
    n: int,
    tune_fraction: float = DEFAULT_TUNE_FRACTION,
    max_relevant: int = DEFAULT_MAX_RELEVANT,
) -> tuple[list[dict[str, object]], dict[str, int]]:
    """The query records (id, query, relevant, source, split) and counts of what was skipped."""
    answers: dict[str, set[str]] = {}
    sources: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for (platform, name), text in sorted(pages.items()):
        page_sources, answered = page_queries(name, text)
        sources[platform, name] = page_sources
        for query in answered:
            answers.setdefault(query, set()).add(vault_path(platform, name))

    rng = random.Random(seed)
    order = sorted(pages)
    rng.shuffle(order)
    records: list[dict[str, object]] = []
    used: set[str] = set()
    skipped = Counter[str]()
    for platform, name in order:
        if len(records) >= n:
            break
        fit = [s for s in sources[platform, name] if s[2] not in used and len(answers[s[2]]) <= max_relevant]
        if not fit:
            skipped["pages without a usable query"] += 1
            continue
        described = [s for s in fit if s[0] == "description"]
        examples = [s for s in fit if s[0] == "example"]
        pick_description = described and (not examples or rng.random() < DESCRIPTION_SHARE)
        kind, line, query = described[0] if pick_description else rng.choice(examples)
        used.add(query)
        path = vault_path(platform, name)
        records.append(
            {
                "id": f"t{len(records) + 1:03d}",
                "query": query,
                "relevant": [path, *sorted(answers[query] - {path})],
                "source": {"page": path, "kind": kind, "line": line},
            }
        )
    if len(records) < n:
        raise SystemExit(f"make_eval_sets: only {len(records)} queries could be built, {n} asked")
    split = split_ids([str(r["id"]) for r in records], seed, tune_fraction)
    tune = set(split["tune"])
    for record in records:
        record["split"] = "tune" if record["id"] in tune else "test"
    return records, dict(skipped)


def tldr_document(
    records: Sequence[Mapping[str, object]],
    pages: Mapping[tuple[str, str], str],
    seed: int,
    created: str,
    tune_fraction: float,
    max_relevant: int,
) -> dict[str, object]:
    tune = sum(1 for r in records if r["split"] == "tune")
    sizes = Counter(len(r["relevant"]) for r in records)  # type: ignore[arg-type]
    return {
        "description": (
            "Known-item queries over the English tldr pages (../shared/corpora/tldr-pages.tar.gz, "
            "commit 08e345f4). Built by tools/evalkit/make_sets.py tldr: pages picked at random (seeded); "
            "one query per page, from its first description line (`> `, unless it is furniture such as "
            "'This command is an alias of') or from one example description (`- `, not 'Same as above...' "
            "or 'View documentation for...'), with the command's own name removed (file name, title and "
            "the binary its examples run, each also with '-' as a space and without a trailing version "
            "number, plus their parts split on '-' and spaces, 2+ characters, common English words kept; "
            "bare or in backticks), tldr markup stripped ('[c]reate' -> 'create', {{placeholders}}, links), "
            "lower-cased, punctuation trimmed from each word. Skipped: queries under "
            f"{MIN_WORDS} words, queries that more than {max_relevant} pages give (generic lines), "
            "repeats. relevant: the source page first, then every other English page whose description "
            "or example text gives the identical query after its own name removal. Paths are "
            "vault-relative, in the layout below. Tune defaults on the tune split only."
        ),
        "created": created,
        "seed": seed,
        "vault": {
            "archive_member": MEMBER_LAYOUT,
            "vault_path": VAULT_LAYOUT,
            "pages": len(pages),
            "how": "copy every English page (archive member tldr/pages/<platform>/<name>.md, text unchanged) "
            "to <vault>/shared/tldr/<platform>/<name>.md; translations (tldr/pages.<lang>/) are left out",
        },
        "split": {
            "method": f"seeded shuffle of the query ids (random.Random('{seed}:split')), "
            f"first {tune_fraction:.0%} tune, the rest test",
            "tune": tune,
            "test": len(records) - tune,
        },
        "relevant_per_query": {str(size): count for size, count in sorted(sizes.items())},
        "questions": list(records),
    }


# --- cranfield --------------------------------------------------------------------------------


def cranfield_query_ids(folder: Path) -> list[str]:
    return [query.id for query in load_cran_queries(folder / "cran.qry")]


def cranfield_document(query_ids: Sequence[str], seed: int, created: str) -> dict[str, object]:
    split = split_ids(sorted(query_ids, key=int), seed, 0.5)
    return {
        "description": (
            "A split of the Cranfield queries (../shared/corpora/cranfield/cran.qry; ids are positions "
            "1-225, as in cranqrel and tools/corpora.py) into tune and test, made by "
            "tools/evalkit/make_sets.py cranfield before any tuning: a seeded shuffle "
            f"(random.Random('{seed}:split')), first half tune. Tune defaults on the tune split only."
        ),
        "created": created,
        "seed": seed,
        "split": split,
    }


# --- driver -----------------------------------------------------------------------------------


def write_json(path: Path, document: Mapping[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="set", required=True)
    for name in ("tldr", "cranfield"):
        command = sub.add_parser(name)
        command.add_argument("--corpora", type=Path, required=True, help="folder holding the corpora")
        command.add_argument("--out", type=Path, required=True)
        command.add_argument("--seed", type=int, default=DEFAULT_SEED)
        command.add_argument("--created", default=dt.datetime.now(dt.UTC).date().isoformat())
        if name == "tldr":
            command.add_argument("--n", type=int, default=DEFAULT_N)
            command.add_argument("--tune-fraction", type=float, default=DEFAULT_TUNE_FRACTION)
            command.add_argument("--max-relevant", type=int, default=DEFAULT_MAX_RELEVANT)
    return parser.parse_args(None if argv is None else list(argv))


def main(argv: Iterable[str] | None = None) -> int:
    args = parse_args(argv)
    if args.set == "tldr":
        pages = load_tldr_english(args.corpora / TLDR_ARCHIVE)
        records, skipped = build_tldr(pages, args.seed, args.n, args.tune_fraction, args.max_relevant)
        document = tldr_document(records, pages, args.seed, args.created, args.tune_fraction, args.max_relevant)
        write_json(args.out, document)
        print(
            f"tldr: {len(records)} queries over {len(pages)} English pages, split {document['split']}, "
            f"relevant per query {document['relevant_per_query']}, skipped {skipped} -> {args.out}"
        )
    else:
        query_ids = cranfield_query_ids(args.corpora / "cranfield")
        document = cranfield_document(query_ids, args.seed, args.created)
        split = document["split"]
        assert isinstance(split, dict)
        write_json(args.out, document)
        print(
            f"cranfield: {len(query_ids)} queries, {len(split['tune'])} tune, {len(split['test'])} test -> {args.out}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
