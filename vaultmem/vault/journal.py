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

Only real files in real folders of the vault are journal files: a symlink anywhere between
the vault and the file is never written through, nor read (a teammate's push could make
`.vaultmem-journal/bob` a link out of the vault, and every line of bob's, which names his
private notes, would be appended there). Such a journal file is refused (`Refused`): the
write it journals is not undone, and with no line it reads as a person's edit.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from vaultmem.errors import InvalidInput
from vaultmem.vault.store import make_folders

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


def is_journal_path(relpath: str) -> bool:
    """Whether a vault-relative path names a journal file as vaultmem writes them,
    `.vaultmem-journal/<writer>/<name>.jsonl`, spelled plainly: relative, no `.` or `..`,
    no empty part, no NUL or backslash. Paths read from elsewhere (the lines set aside in
    the git dir, vault/journal_aside.py) are written to only if they are."""
    parts = relpath.split("/")
    return (
        len(parts) == 3
        and parts[0] == JOURNAL_DIR
        and all(part not in ("", ".", "..") and "\x00" not in part and "\\" not in part for part in parts)
        and parts[2].endswith(".jsonl")
    )


class Refused(InvalidInput):
    """A journal file vaultmem will not touch: a symlink, or something not a folder or
    not a regular file, between the vault and it."""


@contextmanager
def opened(root: Path, relpath: str, write: bool = False) -> Iterator[int]:
    """A descriptor of the journal file `relpath` (made when `write`), only if it is a
    regular file reached through real folders of the vault (made where missing): Refused
    when it is not; FileNotFoundError when it is not there and not `write`."""
    folder, name = relpath.rsplit("/", 1)
    try:
        # One level at a time, refusing a symlinked folder on the way (even one into the
        # vault). A reader names a file it found, or git lists: its folders are there.
        where = make_folders(root, folder, no_links=True)
    except InvalidInput:
        raise Refused(
            f"refused: a symlink, or no folder, on the way to {folder}/; vaultmem follows none to a journal"
        ) from None
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # O_NONBLOCK: a FIFO never blocks
    flags |= (os.O_RDWR | os.O_APPEND | os.O_CREAT) if write else os.O_RDONLY
    refused = Refused(f"refused: {relpath} is a symlink or not a file; vaultmem follows none to a journal")
    try:
        fd = os.open(where / name, flags, 0o666)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):  # a symlink (O_NOFOLLOW), a FIFO no one reads
            raise refused from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise refused
        yield fd
    finally:
        os.close(fd)


def read_whole(fd: int) -> bytes:
    data = bytearray()
    while chunk := os.pread(fd, 1 << 20, len(data)):
        data += chunk
    return bytes(data)


def append_bytes(fd: int, data: bytes) -> None:
    """Appends `data` to an opened journal file, on disk before it returns."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def append(root: Path, entries: Iterable[Entry]) -> list[str]:
    """Append entries, each to its writer's file of its month (made on first use); returns
    the journal files refused (`opened`), whose entries were not written."""
    grouped: dict[str, list[str]] = {}
    for entry in entries:
        grouped.setdefault(journal_file(Path(), entry.by, entry.at).as_posix(), []).append(entry.line())
    refused = []
    for relpath, lines in grouped.items():
        try:
            with opened(root, relpath, write=True) as fd:
                append_bytes(fd, "".join(f"{line}\n" for line in lines).encode("utf-8"))
        except Refused:
            refused.append(relpath)
    return refused


def record(
    root: Path,
    paths: Iterable[str],
    at: str,
    by: str | None,
    model: str | None,
    reason: str | None,
    person: str | None = None,
    was: Mapping[str, str] | None = None,
) -> list[str]:
    """Journal a write of `paths`: each file's sha256 as it now is (None: gone), and as the
    write found it where the writer says (`was`). Returns the journal files refused
    (`append`)."""
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
    return append(root, entries) if entries else []


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
    """Every entry in the vault's journal files, oldest first. A symlink on the way is not
    followed: a journal file is a real file in real folders of the vault (`opened`)."""
    out: list[Entry] = []
    folder = root / JOURNAL_DIR
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*/*.jsonl")):
        try:
            with opened(root, path.relative_to(root).as_posix()) as fd:
                out.extend(parse_lines(read_whole(fd).decode("utf-8", errors="replace")))
        except (OSError, Refused):
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
