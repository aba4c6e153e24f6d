"""Where a note lives decides what it is: scope, owner and project come from its folder.

Also the rules for which files are notes at all, the access rules of SPEC §3, and the
vault walk every reconcile and `query` starts from.
"""

from __future__ import annotations

import errno
import os
import re
import stat as stat_mod
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vaultmem.config import STATE_DIR, VaultConfig
from vaultmem.paths import CONFIG_NAME, LEGACY_TRASH_RELPATH, TRASH_RELPATH

SCOPES = ("shared", "private", "project", "diary", "inbox")
MAX_NOTE_BYTES = 2 * 1024 * 1024

_IGNORED_DIRS = {STATE_DIR, ".git", ".obsidian", ".trash", "node_modules", "__pycache__"}


@dataclass(frozen=True, slots=True)
class Location:
    scope: str
    owner: str | None = None
    project: str | None = None
    # False for a file sitting directly in private/, diary/, inbox/ or project/: it belongs
    # to no ghost or project, so nobody may read it (lint reports it).
    placed: bool = True


# ASCII letters only: ghost names and scope folders are ASCII (config.GHOST_RE), and a
# Unicode fold would hand `private/\u212alara/` (KELVIN SIGN) to the ghost `klara`.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# A delete's folder (vault/store.py trash_file): anything else in .trash/ is Obsidian's own.
DELETE_BATCH = re.compile(r"^\d{8}T\d{6}\d*Z\Z")


# a folder named like a delete's, in any case: not a place a note was deleted from
_LIKE_BATCH = re.compile(r"\d{8}t\d{6}\d*z\Z", re.IGNORECASE)


def in_trash(relpath: str) -> str | None:
    """The place a note in the trash was deleted from, "" where the trash does not say, None
    for a path not in the trash. vaultmem's delete keeps it: `.trash/<UTC time>/<path>` (and
    the older `.vaultmem/trash/`). Obsidian's keeps a name only (`.trash/Plan.md`, or
    `.trash/bob/Plan.md` for a deleted folder `private/bob/`), which may have been anyone's."""
    for trash in (TRASH_RELPATH, LEGACY_TRASH_RELPATH):
        depth = trash.count("/") + 1
        parts = relpath.split("/")
        if len(parts) > depth and "/".join(parts[:depth]).translate(_ASCII_LOWER) == trash:
            rest = parts[depth:]
            if len(rest) < 2 or not DELETE_BATCH.match(rest[0]) or _LIKE_BATCH.match(rest[1]):
                return ""
            return "/".join(rest[1:])
    return None


def classify(relpath: str) -> Location:
    """Scope, owner and project of a vault-relative POSIX path.

    Scope folders and ghost names are matched without regard to ASCII case. On macOS and
    Windows `Private/` *is* `private/`: the folder a person made in Finder is where the
    ghost's writes land, so `Private/alice/x.md` must be alice's, not a shared note; on a
    case-sensitive disk the same reading keeps a person's `Private/Alice/` private rather
    than open to every ghost.

    A note in the trash keeps the place it was deleted from: another ghost's private note
    is still his there, in git's history of it and in a revert of it; one whose place the
    trash does not say (Obsidian's) is nobody's, as a file loose in private/ is."""
    held = in_trash(relpath)
    if held is not None:
        return classify(held) if held else Location("shared", placed=False)
    parts = relpath.split("/")
    top = parts[0].translate(_ASCII_LOWER)
    if len(parts) == 1 or top not in SCOPES:
        return Location("shared")
    if top == "shared":
        return Location("shared")
    if len(parts) < 3:
        # e.g. private/notes.md: inside a scope folder but outside any ghost's folder
        return Location(top, placed=False)
    name = parts[1]
    if top == "project":
        return Location("project", project=name)
    owner = name.translate(_ASCII_LOWER)
    if top == "inbox" and owner == "shared":
        return Location("inbox")
    return Location(top, owner=owner)


# The temp file of an atomic write (vault/store.py), beside the note it replaces:
# `.NAME.md.vaultmem-1a2b3c4d.tmp`. A killed write leaves one behind; the indexer removes
# those older than a minute (index/engine.py). Never a note.
WRITE_TEMP_RE = re.compile(r"^\..+\.vaultmem-[0-9a-f]{8}\.tmp\Z")


TEMP_NAME_ROOM = 200  # bytes of the note's name a temp name keeps: file names stop at 255


def write_temp_name(name: str, token: str) -> str:
    """`.NAME.vaultmem-TOKEN.tmp`, NAME cut to TEMP_NAME_ROOM bytes: a note a person named
    with 250 bytes must still be writable (the token keeps temp names apart)."""
    kept = name.encode("utf-8")[:TEMP_NAME_ROOM].decode("utf-8", errors="ignore")
    return f".{kept}.vaultmem-{token}.tmp"


def is_temp_name(name: str) -> bool:
    """Editor temp and swap files (vim, emacs, generic), never notes."""
    return name.startswith((".", "~$")) or name.endswith(("~", ".swp", ".swx", ".swo", ".tmp")) or name == "4913"


def is_note_name(name: str) -> bool:
    return name.endswith(".md") and not is_temp_name(name) and utf8_name(name)


def utf8_name(name: str) -> bool:
    """Whether a file name is UTF-8, as every note's must be: Python hands the bytes of one
    that is not (`Bad\\xff.md`, from another system or a teammate's commit) over as lone
    surrogates, which no id, database row or JSON answer can hold."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """A name that is not UTF-8 as it can be shown: each byte that is not as U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def is_ignored_dir(name: str) -> bool:
    return name.startswith(".") or name in _IGNORED_DIRS


def is_note_path(relpath: str) -> bool:
    parts = relpath.split("/")
    return is_note_name(parts[-1]) and not any(is_ignored_dir(p) or not utf8_name(p) for p in parts[:-1])


@dataclass(frozen=True, slots=True)
class FileEntry:
    relpath: str
    size: int
    mtime_ns: int
    symlink: bool = False


def kept(where: Location) -> bool:
    """Whether a place is kept to one ghost or project (or to nobody: unplaced)."""
    return where.owner is not None or where.project is not None or not where.placed


def vault_of_its_own(relpath: str, path: str) -> bool:
    """A folder holding a vaultmem.toml, where this vault leaves everyone the notes: a vault
    of its own, not read as this one's (its private notes would read as shared ones here).
    One in a folder this vault keeps to a ghost or project stays that one's notes (and is
    not opened as a vault: vault/nesting.py)."""
    return os.path.isfile(os.path.join(path, CONFIG_NAME)) and not kept(classify(f"{relpath}/a/b/note.md"))


def walk_notes(
    root: Path, strays: list[str] | None = None, unnamed: list[str] | None = None, shut: list[str] | None = None
) -> Iterator[FileEntry]:
    """Every candidate note file: a stat walk that never descends into ignored folders and
    never follows a symlinked folder. Symlinked files are yielded with `symlink=True`; the
    caller decides (they must resolve inside the vault). `strays`, when given, collects the
    vault-relative paths of write temp files (WRITE_TEMP_RE) met on the way; `unnamed` the
    notes and folders whose names are not UTF-8 (utf8_name), as shown_name shows them;
    `shut` the folders that could not be listed (no permission), whose notes are not met."""
    stack = [("", str(root))]
    while stack:
        prefix, path = stack.pop()
        try:
            it = os.scandir(path)
        except OSError:
            if shut is not None and prefix:
                shut.append(prefix.rstrip("/"))
            continue
        with it:
            for entry in it:
                name = entry.name
                if not utf8_name(name):
                    if unnamed is not None and (name.endswith(".md") or entry.is_dir(follow_symlinks=False)):
                        unnamed.append(prefix + shown_name(name))
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if not is_ignored_dir(name) and not vault_of_its_own(prefix + name, entry.path):
                            stack.append((prefix + name + "/", entry.path))
                        continue
                    if not is_note_name(name):
                        if strays is not None and name.endswith(".tmp") and WRITE_TEMP_RE.match(name):
                            strays.append(prefix + name)
                        continue
                    if entry.is_symlink():
                        if symlink_refusal(root, prefix + name) is not None:
                            # Never followed: its own stat, so that a change to what it points
                            # at (another ghost's private note) shows nowhere (SPEC §3).
                            st = entry.stat(follow_symlinks=False)
                            yield FileEntry(prefix + name, st.st_size, st.st_mtime_ns, symlink=True)
                            continue
                        try:
                            st = os.stat(entry.path)
                        except OSError:
                            yield FileEntry(prefix + name, -1, 0, symlink=True)
                            continue
                        if stat_mod.S_ISREG(st.st_mode):
                            yield FileEntry(prefix + name, st.st_size, st.st_mtime_ns, symlink=True)
                        continue
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield FileEntry(prefix + name, st.st_size, st.st_mtime_ns)


def inside_vault(root: Path, path: Path) -> bool:
    """True when `path`, after resolving symlinks, lies inside the vault."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return False
    root_resolved = root.resolve()
    return resolved == root_resolved or root_resolved in resolved.parents


def _loops(path: Path) -> bool:
    """True when following `path` goes round a loop of symlinks (`a.md -> b.md -> a.md`):
    the system's own answer (ELOOP), which `Path.resolve` stopped raising in Python 3.13."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def symlink_refusal(root: Path, relpath: str) -> tuple[str, str] | None:
    """(problem code, message) when the symlinked note at `relpath` must not be followed.

    Access follows the folder a note is *in*, so a link may only point at a note with the
    same readers: `shared/peek.md -> private/alice/x.md` would otherwise hand alice's note
    to everyone, and a link into `.vaultmem/trash/` would revive deleted private notes."""
    path = root / relpath
    if _loops(path):
        return ("symlink_loop", "symlink loop: it leads back to itself; not followed")
    if not inside_vault(root, path):
        return ("symlink_outside", "symlink points outside the vault; not followed")
    try:
        target = path.resolve().relative_to(root.resolve()).as_posix()
    except (OSError, RuntimeError, ValueError):
        return ("symlink_outside", "symlink cannot be resolved inside the vault; not followed")
    if not is_note_path(target) or classify(target) != classify(relpath):
        return ("symlink_crosses_scope", "symlink points at a file with other readers; not followed")
    return None


# --- access (SPEC §3) -------------------------------------------------------------------


def can_read(location: Location, ghost: str | None, config: VaultConfig) -> bool:
    """Who may see a note. Invisible notes must be indistinguishable from absent ones."""
    if not location.placed:
        return False
    if location.scope == "shared":
        return True
    if location.scope == "inbox" and location.owner is None:
        return True
    if location.scope == "project":
        if ghost is None:
            return False
        members = project_members(config, location.project or "")
        return members is None or ghost in members
    return ghost is not None and location.owner == ghost


def can_write(location: Location, ghost: str | None, config: VaultConfig) -> bool:
    return can_read(location, ghost, config)


def project_members(config: VaultConfig, project: str) -> tuple[str, ...] | None:
    """The ghosts a project's folder is open to; None for every ghost. Names are matched as
    the most folding disk matches them and then some (folded): on macOS and Windows
    `project/Closed/` and `project/ÄRZTE/` are the folders `[projects.closed]` and
    `[projects."ärzte"]` close. A miss would open the folder to every ghost, so the match
    errs wide; where entries fold to one name, only the ghosts all of them list may read."""
    key = folded(project)
    closed = [set(m) for name, m in config.projects.items() if folded(name) == key and m is not None]
    return None if not closed else tuple(sorted(set.intersection(*closed)))


def folded(name: str) -> str:
    """A name as the most folding disk matches it, and then some: Unicode case folded
    (APFS, NTFS; upper first, as NTFS's upcase table makes ı `I`), compatibility forms
    joined (APFS ignores normalization; U+212A KELVIN SIGN is `k` there), format
    characters dropped (HFS+ ignored zero-width marks). For matches that must err wide."""
    text = unicodedata.normalize("NFKC", name).upper().casefold()
    return unicodedata.normalize("NFKC", "".join(c for c in text if unicodedata.category(c) != "Cf"))


EVERYONE = "everyone"  # readers of a note every caller sees, a person at the terminal included
GHOSTS = "ghosts"  # every ghost (an open project): not a caller without one


def readers(location: Location, config: VaultConfig) -> str | frozenset[str]:
    """Who may read a note there (can_read): EVERYONE, GHOSTS, or those ghosts (none for a
    file in no ghost's or project's folder). A person sees every placed note."""
    if not location.placed:
        return frozenset()
    token = reader_token(location)
    if token == "public":
        return EVERYONE
    if location.scope == "project":
        members = project_members(config, location.project or "")
        return GHOSTS if members is None else frozenset(members)
    return frozenset([location.owner or ""])


def seen_by_readers_of(source: Location, target: Location, config: VaultConfig) -> bool:
    """Whether everyone who may read a note at `source` may read one at `target`. Only then
    may vaultmem write `target`'s path or name into `source` (a link it rewrites or makes
    resolvable): alice's `[[<id>]]` in a shared note must not become the path of her
    private note, which every reader of the shared note would then see."""
    if not target.placed:
        return False
    wide, narrow = readers(target, config), readers(source, config)
    if wide == EVERYONE:
        return True
    if narrow == EVERYONE:
        return False
    if wide == GHOSTS:
        return True
    return narrow != GHOSTS and isinstance(wide, frozenset) and isinstance(narrow, frozenset) and narrow <= wide


def reader_token(location: Location) -> str:
    """The access class of a note, stored in every index so filters apply inside them."""
    if not location.placed:
        return "nobody"
    if location.scope == "shared" or (location.scope == "inbox" and location.owner is None):
        return "public"
    if location.scope == "project":
        return f"project:{location.project}"
    return f"ghost:{location.owner}"


def reader_tokens(
    ghost: str | None, config: VaultConfig, projects: Iterable[str], owners: Iterable[str] | None = None
) -> list[str]:
    """Every access class `ghost` may read, given the projects present in the vault.
    `owners` (the owners present): a person's view, every class there is."""
    tokens = ["public"]
    if owners is not None:
        return [*tokens, *(f"ghost:{o}" for o in sorted(set(owners))), *(f"project:{p}" for p in sorted(set(projects)))]
    if ghost is None:
        return tokens
    tokens.append(f"ghost:{ghost}")
    for project in sorted(set(projects)):
        if can_read(Location("project", project=project), ghost, config):
            tokens.append(f"project:{project}")
    return tokens
