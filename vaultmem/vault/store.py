"""Reading and writing note files safely: path checks, atomic writes, conflict detection.

Every path vaultmem writes is checked to lie inside the vault after resolving symlinks.
Writes go to a temp file in the same folder, are fsynced and renamed into place, keep the
file's mode, and fail with Conflict (changing nothing) when the file moved under us.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from vaultmem.config import STATE_DIR
from vaultmem.errors import Conflict, InvalidInput, NotFound
from vaultmem.vault.layout import MAX_NOTE_BYTES, inside_vault, symlink_refusal

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


def read_file(root: Path, relpath: str) -> tuple[bytes, FileStamp]:
    """Bytes and stamp of a note file. A missing file or a symlink leaving the vault is
    NotFound, so neither can be told apart from the other."""
    path = root / check_relpath(relpath)
    if path.is_symlink() and symlink_refusal(root, check_relpath(relpath)) is not None:
        raise NotFound(f"no note {relpath!r}")
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_size > MAX_NOTE_BYTES:
                raise InvalidInput(f"{relpath}: file is larger than {MAX_NOTE_BYTES} bytes")
            data = fh.read()
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
    tmp = folder / f".{name}.vaultmem-{secrets.token_hex(4)}.tmp"
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


def create_file(root: Path, relpath: str, data: bytes) -> None:
    """Atomically create a new file; FileExistsError if the path is taken (never overwrites)."""
    path = resolve_inside(root, relpath)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not inside_vault(root, path.parent):
        raise InvalidInput(f"refused: {relpath} resolves outside the vault")
    tmp = _write_temp(path.parent, path.name, data, 0o666 & ~_umask())
    try:
        os.link(tmp, path)  # fails if the name exists: exclusive and atomic
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(path.parent)


def replace_file(root: Path, relpath: str, data: bytes, expected: FileStamp) -> None:
    """Atomically replace a file that must still be exactly what we read."""
    path = resolve_inside(root, relpath)
    target = path.resolve() if path.is_symlink() else path
    if not inside_vault(root, target):
        raise InvalidInput(f"refused: {relpath} resolves outside the vault")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        raise Conflict(f"{relpath} was deleted on disk since it was read; nothing written") from None
    tmp = _write_temp(target.parent, target.name, data, st.st_mode & 0o7777)
    try:
        now = current_stamp(target)
        if now is None or now.sha256 != expected.sha256:
            raise Conflict(f"{relpath} changed on disk since it was read; nothing written")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(target.parent)


_UNSAFE_RE = re.compile(r"[^\w\-]+", re.UNICODE)


def slugify(title: str) -> str:
    """A file name stem from a title: no separators, dots-first, control characters or
    traversal; lower-case words joined by hyphens; at most MAX_NAME_BYTES with `.md`."""
    text = unicodedata.normalize("NFKC", title)
    # Control, format and surrogate characters separate words ("a\tb" -> "a-b") and never
    # reach the file system.
    text = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)
    slug = _UNSAFE_RE.sub("-", text.lower()).strip("-_.")
    slug = re.sub(r"-{2,}", "-", slug) or "note"
    limit = MAX_NAME_BYTES - len(".md") - 4  # room for a "-NNN" uniqueness suffix
    encoded = slug.encode("utf-8")[:limit]
    return encoded.decode("utf-8", errors="ignore").rstrip("-_.") or "note"


def candidate_names(slug: str) -> list[str]:
    return [f"{slug}.md"] + [f"{slug}-{n}.md" for n in range(2, 1000)]


def create_unique(root: Path, folder: str, slug: str, data: bytes) -> str:
    """Create `folder/slug.md`, or `slug-2.md`, … whichever is free first. Race-safe."""
    for name in candidate_names(slug):
        relpath = f"{folder}/{name}" if folder else name
        try:
            create_file(root, relpath, data)
        except FileExistsError:
            continue
        return relpath
    raise Conflict(f"no free file name for {slug!r} in {folder}")


def trash_file(root: Path, relpath: str) -> str:
    """Move a note into .vaultmem/trash/<UTC time>/<path>; returns the vault-relative target."""
    source = resolve_inside(root, relpath)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    dest_rel = f"{STATE_DIR}/trash/{stamp}/{check_relpath(relpath)}"
    dest = root / dest_rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(source, dest)
    except FileNotFoundError:
        raise NotFound(f"no note {relpath!r}") from None
    _fsync_dir(source.parent)
    return dest_rel


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
