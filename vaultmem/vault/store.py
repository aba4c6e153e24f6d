"""Reading and writing note files safely: path checks, atomic writes, conflict detection.

The one reader of note files (read_note_bytes, load_note, read_entry, read_file), and so
where reads meet the size limit (layout.MAX_NOTE_BYTES); the architecture test keeps reads
of notes out of other packages.

Every path vaultmem writes is checked to lie inside the vault after resolving symlinks.
Writes go to a temp file in the same folder, are fsynced and renamed into place, keep the
file's mode, and fail with Conflict (changing nothing) when the file moved under us.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from vaultmem import clock
from vaultmem.errors import ChangedOnDisk, Conflict, InvalidInput, NotFound
from vaultmem.models import Problem
from vaultmem.paths import TRASH_RELPATH
from vaultmem.vault.exchange import exchange
from vaultmem.vault.layout import (
    MAX_NOTE_BYTES,
    WRITE_TEMP_RE,
    FileEntry,
    inside_vault,
    symlink_refusal,
    write_temp_name,
)
from vaultmem.vault.note import ParsedNote, Unreadable, parse_note
from vaultmem.vault.writers import swap_turn, writing

MAX_NAME_BYTES = 100


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What a file was when we read it; a write proceeds only if it still is."""

    size: int
    mtime_ns: int
    sha256: str


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def check_relpath(relpath: str) -> str:
    """Normalize a vault-relative path; refuse anything that could escape the vault."""
    if "\x00" in relpath or "\\" in relpath:
        raise InvalidInput(f"invalid path {relpath!r}")
    parts = [p for p in relpath.strip().split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts) or relpath.startswith("/"):
        raise InvalidInput(f"invalid path {relpath!r}: must be relative and inside the vault")
    return "/".join(parts)


def resolve_inside(root: Path, relpath: str) -> Path:
    path = root / check_relpath(relpath)
    if not inside_vault(root, path if path.exists() or path.is_symlink() else path.parent):
        raise InvalidInput(f"refused: {relpath} resolves outside the vault")
    return path


def disk_path(root: Path, relpath: str) -> str | None:
    """The vault-relative path of the entry `relpath` names, spelled as the disk spells it;
    None when there is none. On a case-sensitive disk that is `relpath`; on a case-
    insensitive one (macOS, Windows) `Private/Alice/x.md` names `private/alice/x.md` — and
    scope follows the folder the file is in, never the spelling (SPEC §3)."""
    parts = check_relpath(relpath).split("/")
    real = _disk_parts(root, parts)
    return "/".join(real) if len(real) == len(parts) else None


def disk_prefix(root: Path, relpath: str) -> str:
    """`relpath` with the folders and file that exist spelled as the disk spells them, and
    the rest (a new file, new folders) as given: where a write to it lands."""
    parts = check_relpath(relpath).split("/")
    real = _disk_parts(root, parts)
    return "/".join(real + parts[len(real) :])


def _disk_parts(root: Path, parts: list[str]) -> list[str]:
    """The leading `parts` that exist, each as the disk spells it."""
    import unicodedata

    def folded(name: str) -> str:
        return unicodedata.normalize("NFC", name).casefold()

    out: list[str] = []
    here = root
    for part in parts:
        try:
            names = os.listdir(here)
        except OSError:
            break
        if part not in names:
            if not os.path.lexists(here / part):
                break  # not there in any spelling this disk accepts
            # The disk accepts another spelling: it folds letter case (and, on macOS, Unicode
            # normalization), so one entry of the folder answers to it.
            same = [n for n in names if folded(n) == folded(part)]
            if len(same) != 1:
                break
            part = same[0]
        out.append(part)
        here = here / part
    return out


class TooLarge(OSError):
    """A note file over MAX_NOTE_BYTES, which is never read whole. An OSError, so a reader
    that skips files it cannot read skips this one too."""

    def __init__(self, size: int) -> None:
        super().__init__(f"file is {size} bytes; notes are at most {MAX_NOTE_BYTES}")
        self.size = size


def _read_limited(path: str | os.PathLike[str]) -> tuple[bytes, os.stat_result]:
    # os.open and os.read: the system calls a file object makes, without building one per
    # note (`query` reads every note of the vault; this is a quarter of its reading time).
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if st.st_size > MAX_NOTE_BYTES:
            raise TooLarge(st.st_size)
        # One byte more than the size tells a file that grew since the fstat; a read of
        # exactly what is there is ~4x faster than asking for the limit.
        data = os.read(fd, st.st_size + 1)
        if len(data) > st.st_size:
            data += os.read(fd, MAX_NOTE_BYTES + 1 - len(data))
            if len(data) > MAX_NOTE_BYTES:
                raise TooLarge(os.fstat(fd).st_size)
    finally:
        os.close(fd)
    return data, st


def read_note_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a note file: the one reader of note files, and the one place the size
    limit is kept. TooLarge for a file over the limit; other OSErrors as open/read raise."""
    return _read_limited(path)[0]


def load_note(path: str | os.PathLike[str], relpath: str) -> ParsedNote | Unreadable:
    """Read and parse one note file. A file over the size limit is Unreadable (too_large);
    OSError when it cannot be read."""
    try:
        data = read_note_bytes(path)
    except TooLarge as exc:
        mib = MAX_NOTE_BYTES // (1024 * 1024)
        message = f"file is {exc.size} bytes; notes are at most {mib} MiB"
        return Unreadable(relpath, Problem(relpath, "error", "too_large", message))
    return parse_note(relpath, data)


def read_entry(root: Path, entry: FileEntry) -> ParsedNote | Unreadable:
    """Read and parse one file of the vault walk; symlinks leaving the vault are reported,
    never followed, and a file that cannot be read is Unreadable."""
    refusal = symlink_refusal(root, entry.relpath) if entry.symlink else None
    if refusal is not None:
        return Unreadable(entry.relpath, Problem(entry.relpath, "error", *refusal))
    if entry.size < 0:
        return Unreadable(entry.relpath, Problem(entry.relpath, "error", "unreadable", "broken symlink"))
    try:
        return load_note(root / entry.relpath, entry.relpath)
    except OSError as exc:
        return Unreadable(entry.relpath, Problem(entry.relpath, "error", "unreadable", f"cannot read: {exc.strerror}"))


def read_file(root: Path, relpath: str) -> tuple[bytes, FileStamp]:
    """Bytes and stamp of a note file. A missing file or a symlink leaving the vault is
    NotFound, so neither can be told apart from the other."""
    path = root / check_relpath(relpath)
    if path.is_symlink() and symlink_refusal(root, check_relpath(relpath)) is not None:
        raise NotFound(f"no note {relpath!r}")
    try:
        data, st = _read_limited(path)
    except TooLarge:
        raise InvalidInput(f"{relpath}: file is larger than {MAX_NOTE_BYTES} bytes") from None
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise NotFound(f"no note {relpath!r}") from None
    return data, FileStamp(st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest())


def current_stamp(path: Path) -> FileStamp | None:
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except FileNotFoundError:
        return None
    return FileStamp(st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest())


def _write_temp(folder: Path, name: str, data: bytes, mode: int) -> Path:
    # A hidden name: editors, the watcher and the vault walk all skip it.
    tmp = folder / write_temp_name(name, secrets.token_hex(4))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def write_whole(path: Path, data: bytes, mode: int = 0o600) -> None:
    """`path` holds `data` whole or keeps what it held: written beside it, on disk, then
    renamed over it (a file of vaultmem's own, outside the notes: no vault lock)."""
    tmp = _write_temp(path.parent, path.name, data, mode)
    try:
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # left only when the rename did not happen
    _fsync_dir(path.parent)


def check_size(relpath: str, data: bytes) -> None:
    """Refuse, before anything is written, a note the reader would refuse: over the limit,
    or holding a NUL character (the reader takes that file for binary data, and the note
    would be written and then never found)."""
    if len(data) > MAX_NOTE_BYTES:
        mib = MAX_NOTE_BYTES // (1024 * 1024)
        raise InvalidInput(
            f"{relpath}: the note would be {len(data)} bytes; notes are at most {mib} MiB "
            f"({MAX_NOTE_BYTES} bytes); nothing written"
        )
    if b"\x00" in data:
        raise InvalidInput(
            f"{relpath}: the text holds a NUL character (U+0000), which no note may hold; nothing written"
        )


def make_folders(root: Path, rel_folder: str, *, no_links: bool = False) -> Path:
    """Create a vault-relative folder one level at a time, never through a symlink that
    leaves the vault: nothing, not even an empty folder, is made outside it. `no_links`:
    refuse any symlinked folder on the way, even one pointing inside the vault."""
    path = root
    for part in check_relpath(rel_folder).split("/"):
        path = path / part
        if no_links and path.is_symlink():
            raise InvalidInput(
                f"refused: {path.relative_to(root).as_posix()} is a symlink; vaultmem will not follow it"
            )
        if path.is_symlink() or path.exists():
            if not inside_vault(root, path):
                raise InvalidInput(f"refused: {rel_folder} resolves outside the vault")
            if not path.is_dir():
                raise InvalidInput(f"refused: {path.relative_to(root)} is not a folder")
            continue
        try:
            path.mkdir()
        except FileExistsError:  # made meanwhile: checked like any existing one
            if not inside_vault(root, path) or not path.is_dir():
                raise InvalidInput(f"refused: {rel_folder} resolves outside the vault") from None
    return path


STALE_TEMP_S = 60.0  # a write finishes in far less; an older temp file is a killed write's


def remove_stale_temps(root: Path, relpaths: list[str], older_than_s: float = STALE_TEMP_S) -> list[str]:
    """Remove the write temp files (`.NAME.vaultmem-XXXXXXXX.tmp`) at `relpaths` that are
    older than `older_than_s`: copies of note bodies a killed write left behind. Only
    regular files of exactly that name pattern, inside the vault; returns the removed."""
    removed = []
    now = time.time()  # file times are real times, whatever the clock module is set to
    for relpath in relpaths:
        path = root / check_relpath(relpath)
        if not WRITE_TEMP_RE.match(path.name) or not inside_vault(root, path.parent):
            continue
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < older_than_s:
                continue
            path.unlink()
        except OSError:
            continue
        removed.append(relpath)
    return removed


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@writing
def create_file(root: Path, relpath: str, data: bytes) -> None:
    """Atomically create a new file; FileExistsError if the path is taken (never overwrites)."""
    check_size(relpath, data)
    path = resolve_inside(root, relpath)
    if "/" in check_relpath(relpath):
        make_folders(root, check_relpath(relpath).rsplit("/", 1)[0])
    if not inside_vault(root, path.parent):
        raise InvalidInput(f"refused: {relpath} resolves outside the vault")
    tmp = _write_temp(path.parent, path.name, data, 0o666 & ~_umask())
    try:
        os.link(tmp, path)  # fails if the name exists: exclusive and atomic
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(path.parent)


@writing
def replace_file(root: Path, relpath: str, data: bytes, expected: FileStamp) -> None:
    """Atomically replace a file that must still be exactly what we read."""
    check_size(relpath, data)
    path = resolve_inside(root, relpath)
    target = path.resolve() if path.is_symlink() else path
    if not inside_vault(root, target):
        raise InvalidInput(f"refused: {relpath} resolves outside the vault")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        raise Conflict(f"{relpath} was deleted on disk since it was read; nothing written") from None
    tmp = _write_temp(target.parent, target.name, data, st.st_mode & 0o7777)
    changed = ChangedOnDisk(f"{relpath} changed on disk since it was read; nothing written")
    try:
        with swap_turn(root):
            now = current_stamp(target)
            if now is None or now.sha256 != expected.sha256:
                raise changed
            swapped = _swap_if_unchanged(tmp, target, expected.sha256)
        if swapped is None:
            # A person saved during the swap and saved again before theirs could be put
            # back: that save is kept beside the note, never deleted with the temp file.
            kept = target.with_name(f"{target.stem} (conflicted copy {os.getpid()}-{time.time_ns()}){target.suffix}")
            os.rename(tmp, kept)
            _fsync_dir(target.parent)
            raise Conflict(
                f"{relpath} was saved and written by others during this write; nothing of this write is there, "
                f"and the save it met is kept as {kept.name}"
            )
        if not swapped:
            raise changed
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(target.parent)


def _swap_if_unchanged(tmp: Path, target: Path, expected_sha: str) -> bool | None:
    """Put `tmp` in place of `target` only if what it displaces is still `expected_sha`.

    A person's editor may save between our last check and the rename. With an atomic
    exchange the displaced file lands at `tmp`, where it is checked: a save we did not see
    is put back, never overwritten (False). Without renameat2 (not Linux), a plain replace,
    whose window is the few microseconds since the check. None: the save could not be put
    back (another write replaced ours meanwhile); it is at `tmp`."""
    ours = os.stat(tmp).st_ino
    if not exchange(tmp, target):
        os.replace(tmp, target)
        return True
    displaced = current_stamp(tmp)
    if displaced is not None and displaced.sha256 == expected_sha:
        return True
    # Someone saved in between: give their file its name back.
    if os.stat(target).st_ino == ours and exchange(tmp, target):
        if os.stat(tmp).st_ino != ours:
            os.replace(tmp, target)  # they saved yet again meanwhile: that newest save wins
        return False
    return None


# Characters Obsidian refuses in file names (`* " \\ / < > : | ?`) or that break its links
# (`# ^ [ ]`); bidi overrides could disguise a name in a listing.
_FORBIDDEN = frozenset('*"\\/<>:|?#^[]')
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_SUFFIX_ROOM = 4  # " 999": room for the uniqueness number


def name_for_title(title: str) -> str:
    """The file stem Obsidian would give a note titled `title` (SPEC §2).

    The title as typed, case and spaces kept, so that `[[Title]]` resolves to the same file
    by file name (Obsidian's rule) and by title (vaultmem's); only what Obsidian or a file
    system forbids becomes a space: the characters above, control characters, leading
    dots. At most MAX_NAME_BYTES with `.md` and a uniqueness number."""
    text = unicodedata.normalize("NFC", title)
    text = "".join(
        " " if ch in _FORBIDDEN or ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cs", "Co", "Zl", "Zp") else ch
        for ch in text
    )
    # Trailing dots and spaces: Windows drops them, which would rename the file there.
    stem = " ".join(text.split()).lstrip(". ").rstrip(". ")
    limit = MAX_NAME_BYTES - len(".md") - _SUFFIX_ROOM
    stem = stem.encode("utf-8")[:limit].decode("utf-8", errors="ignore").rstrip(". ")
    return stem or "Untitled"


def candidate_names(stem: str) -> Iterator[str]:
    """`stem.md`, then `stem 1.md`, `stem 2.md`, … as Obsidian numbers duplicates."""
    yield f"{stem}.md"
    for n in range(1, 1000):
        yield f"{stem} {n}.md"


def create_unique(root: Path, folder: str, stem: str, data: bytes) -> str:
    """Create `folder/stem.md`, or `stem 1.md`, … whichever is free first. Race-safe.

    Free means no name in the folder equal in any letter case: Obsidian resolves links
    case-insensitively, and macOS and Windows file systems would collide anyway."""
    try:
        taken = {name.lower() for name in os.listdir(root / folder)}
    except OSError:
        taken = set()
    for name in candidate_names(stem):
        if name.lower() in taken:
            continue
        relpath = f"{folder}/{name}" if folder else name
        try:
            create_file(root, relpath, data)
        except FileExistsError:
            continue
        return relpath
    raise Conflict(f"no free file name for {stem!r} in {folder}")


@writing
def move_file(root: Path, relpath: str, new_relpath: str) -> None:
    """Move a note to a new vault path; never overwrites (Conflict if the name is taken)."""
    source = resolve_inside(root, relpath)
    dest = resolve_inside(root, new_relpath)
    if "/" in check_relpath(new_relpath):
        make_folders(root, check_relpath(new_relpath).rsplit("/", 1)[0])
    if not inside_vault(root, dest.parent):
        raise InvalidInput(f"refused: {new_relpath} resolves outside the vault")
    try:
        os.link(source, dest, follow_symlinks=False)  # fails if the name exists: no overwrite
    except FileExistsError:
        # Only a change of letter case on a file system that folds case (macOS, Windows)
        # finds the note itself there; anything else is another file, never replaced.
        if not (dest.exists() and os.path.samefile(source, dest)):
            raise Conflict(f"{new_relpath} already exists; nothing moved") from None
        os.rename(source, dest)
    except FileNotFoundError:
        raise NotFound(f"no note {relpath!r}") from None
    else:
        os.unlink(source)
    _fsync_dir(source.parent)
    _fsync_dir(dest.parent)


@writing
def trash_file(root: Path, relpath: str, expected: FileStamp | None = None) -> str:
    """Move a note into .trash/<UTC time>/<path>; returns the vault-relative target.

    With `expected`, only if the file is still what was read (else Conflict, nothing moved)."""
    source = resolve_inside(root, relpath)
    if expected is not None:
        now = current_stamp(source)
        if now is None or now.sha256 != expected.sha256:
            raise Conflict(f"{relpath} changed on disk since it was read; nothing deleted")
    stamp = datetime.fromtimestamp(clock.epoch(), UTC).strftime("%Y%m%dT%H%M%S%fZ")
    dest_rel = f"{TRASH_RELPATH}/{stamp}/{check_relpath(relpath)}"
    dest = root / dest_rel
    # A symlinked .trash/ must not carry the note (maybe a private one) out of
    # the vault, nor into a folder with other readers.
    make_folders(root, dest_rel.rsplit("/", 1)[0], no_links=True)
    if not inside_vault(root, dest.parent):
        raise InvalidInput(f"refused: {TRASH_RELPATH} resolves outside the vault; nothing deleted")
    try:
        os.replace(source, dest)
    except FileNotFoundError:
        raise NotFound(f"no note {relpath!r}") from None
    _fsync_dir(source.parent)
    return dest_rel
