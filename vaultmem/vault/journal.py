"""The write journal: who made each vaultmem write, and why (issue 25, item 1).

Every note file vaultmem writes, moves or removes gets one line in
`.vaultmem-journal/<writer>/<YYYY-MM>.jsonl`: when, which ghost (`by`; null for a person at
the terminal), the model and reason the caller gave, the vault-relative path and the sha256
of the file's bytes as written (null once it is gone). The journal is part of the vault and
is committed with it: `review`, `commit`, `history` and `revert` read it to tell who changed
a note and whether a person edited it afterwards (its bytes no longer hash to what the
journal says vaultmem wrote).

Why a journal and not the note's own `updated_by`: a property would change on every write
and show in every diff (and conflict between clones); a line in a file of its own keeps
`git diff` of a note to the lines its write changed. Why not commit trailers alone: changes
are reviewed before they are committed, and a person commits when they like. One folder
per writer and one file per month keep each ghost's commit to its own journal file, and the
files append-only: `.gitattributes` merges them as a union (`merge=union`), so two clones
that both wrote never conflict on the journal.

A hidden folder: never a note, never indexed, not shown by Obsidian.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

JOURNAL_DIR = ".vaultmem-journal"
PERSON = "_person"  # the folder of writes made without a ghost: a person at the terminal
ATTRIBUTES = f"{JOURNAL_DIR}/**/*.jsonl merge=union"
# The reason of a write vaultmem made to keep a note hidden from the caller consistent (App.wrote)
UPKEEP_REASON = "links kept: a note it links to was moved"


def stamp(seconds: float) -> str:
    """`2026-11-26T12:28:41.123Z` (seconds since the epoch, to the millisecond), so that the
    lines of one second keep their order."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class Entry:
    at: str  # ISO-8601 UTC, to the millisecond
    by: str | None  # the ghost; None: a person, through vaultmem
    path: str  # vault-relative
    hash: str | None  # sha256 hex of the file as written; None: the write removed it
    model: str | None = None
    reason: str | None = None
    person: str | None = None  # which of the vault's people, when `by` is null ([vault] people)
    was: str | None = None  # sha256 of the file the write changed, where the writer read it

    def line(self) -> str:
        data = {k: v for k, v in asdict(self).items() if v is not None or k in ("by", "hash")}
        return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def journal_file(root: Path, by: str | None, at: str) -> Path:
    return root / JOURNAL_DIR / (by or PERSON) / f"{at[:7]}.jsonl"


def append(root: Path, entries: Iterable[Entry]) -> None:
    """Append entries, each to its writer's file of its month (made on first use)."""
    grouped: dict[Path, list[str]] = {}
    for entry in entries:
        grouped.setdefault(journal_file(root, entry.by, entry.at), []).append(entry.line())
    for path, lines in grouped.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("".join(f"{line}\n" for line in lines))
            fh.flush()
            os.fsync(fh.fileno())


def record(
    root: Path,
    paths: Iterable[str],
    at: str,
    by: str | None,
    model: str | None,
    reason: str | None,
    person: str | None = None,
    was: Mapping[str, str] | None = None,
) -> None:
    """Journal a write of `paths`: each file's sha256 as it now is (None: gone), and as the
    write found it where the writer says (`was`)."""
    entries = []
    for path in dict.fromkeys(paths):
        try:
            digest: str | None = hashlib.sha256((root / path).read_bytes()).hexdigest()
        except FileNotFoundError:
            digest = None  # moved away, deleted, promoted
        except OSError:
            continue
        before = (was or {}).get(path)
        entries.append(Entry(at, by, path, digest, model, reason, person if by is None else None, before))
    if entries:
        append(root, entries)


def parse_lines(text: str) -> Iterator[Entry]:
    """Entries of a journal file's text; a line that is not one (hand-edited, cut off by a
    crash) is skipped."""
    # Lines end at "\n" only: json.dumps leaves U+2028, U+0085 and the like unescaped in a
    # reason or model, and splitlines() would cut an entry there (and lose its writer).
    for line in text.split("\n"):
        try:
            data = json.loads(line)
            yield Entry(
                at=str(data["at"]),
                by=data.get("by"),
                path=str(data["path"]),
                hash=data.get("hash"),
                model=data.get("model"),
                reason=data.get("reason"),
                person=data.get("person"),
                was=data.get("was") if isinstance(data.get("was"), str) else None,
            )
        except (ValueError, KeyError, TypeError):
            continue


def read_all(root: Path) -> list[Entry]:
    """Every entry in the vault's journal files, oldest first."""
    out: list[Entry] = []
    folder = root / JOURNAL_DIR
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*/*.jsonl")):
        try:
            out.extend(parse_lines(path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    out.sort(key=lambda e: e.at)
    return out


def last_written(root: Path) -> dict[str, str]:
    """path -> sha256 of the file as vaultmem last wrote it there, for every path whose last
    journaled write left a file (not one that moved or removed it)."""
    last: dict[str, str | None] = {}
    for entry in read_all(root):
        last[entry.path] = entry.hash
    return {path: digest for path, digest in last.items() if digest}
