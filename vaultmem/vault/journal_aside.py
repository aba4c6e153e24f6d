"""Journal lines not yet committed, set aside while `sync` has git merge.

A ghost's sync commits that ghost's own files only (services/sync.py), so another ghost's
journal file (`.vaultmem-journal/bob/2026-11.jsonl`) may hold lines bob has not committed.
git refuses to merge into a file with uncommitted changes: when the upstream had appended
to the same file, alice's sync stopped ("git refused") until bob synced. The journal is
append-only (vault/journal.py), so what is not committed is the lines after the committed
text. Those lines are cut off before the merge and appended after it: the file is then the
merged journal followed by the lines still bob's to commit. A merge that fails, or is
undone, leaves the committed text, and the same lines follow it: the file as it was.

No line is ever lost: the lines are written to a file in the git dir (fsynced) before a
journal file is cut back, and that file is removed only once every line is back. A sync
killed in between leaves it for the next sync to put back (`put_back`, which appends only
what is not already at the end of a file). Nothing of the lines is reported: they may tell
of another ghost's private notes (SPEC §3).

A journal file whose text is not its committed text plus lines (edited by hand), or that a
person staged, is left as it is: the merge then stops as it did before, naming nothing.
Both functions run while sync holds the writers' lock alone (vault/writers.py), so no
journal line is appended meanwhile (App.wrote takes it shared to journal).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

from vaultmem.errors import Conflict
from vaultmem.paths import GIT_JOURNAL_ASIDE
from vaultmem.vault.git import Git, GitError
from vaultmem.vault.journal import JOURNAL_DIR, Refused, append_bytes, is_journal_path, opened, read_whole
from vaultmem.vault.store import write_whole


def set_aside(git: Git, upstream: str) -> dict[str, bytes]:
    """Cuts back each journal file the merge of `upstream` may write whose uncommitted text
    is lines appended to its committed text; returns repository path -> those lines, kept
    in the git dir first. The caller has put back what an earlier sync left aside
    (`put_back`, at the start of every sync)."""
    if not git.has_head():
        return {}
    theirs = set(_names(git, "diff", "--name-only", "--no-renames", "HEAD", upstream, "--", JOURNAL_DIR))
    dirty = {path: tracked for path, tracked in _uncommitted(git).items() if path in theirs}
    if not dirty:
        return {}
    bases = git.contents("HEAD", [_vault_path(git, p) for p, tracked in dirty.items() if tracked])
    aside: dict[str, tuple[int, bytes]] = {}  # path -> (committed length, the lines after it)
    for path, tracked in dirty.items():
        base = (bases.get(_vault_path(git, path)) or b"") if tracked else b""
        try:
            with opened(git.root, _vault_path(git, path)) as fd:
                now = read_whole(fd)
        except (OSError, Refused):
            continue
        if len(now) > len(base) and now.startswith(base):
            aside[path] = (len(base), now[len(base) :])
    if not aside:
        return {}
    _cut_back(git, aside)
    return {path: lines for path, (_, lines) in aside.items()}


def put_back(git: Git) -> int:
    """Appends the lines set aside (by this sync or one killed mid-way) to their files, each
    block only where the file does not already end with it, then forgets them. Returns how
    many entries were dropped for naming no journal file of this vault (`_entries`)."""
    kept = _kept_file(git)
    try:
        lines, dropped = _entries(git, json.loads(kept.read_bytes()))
    except FileNotFoundError:
        return 0
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise Conflict(
            f"journal lines set aside during a merge cannot be read back from {kept} ({exc}): nothing was "
            "merged or pushed. A person reads that file, appends its lines to their journal files, and removes it"
        ) from None
    try:
        for path, block in lines.items():
            with opened(git.root, path, write=True) as fd:
                if not read_whole(fd).endswith(block):
                    append_bytes(fd, block)
        kept.unlink()
    except Refused:  # kept, never written through a symlink, and never lost
        raise Conflict(
            f"journal lines set aside during the merge belong in a journal folder that is a symlink (or not a "
            f"folder), and vaultmem writes no journal through one; they are kept in {kept}. A person makes "
            f"{JOURNAL_DIR}/ and the folders in it real folders again, then `vaultmem sync` puts them back"
        ) from None
    except OSError as exc:  # the file's name is not said: it may be another ghost's journal
        raise Conflict(
            f"journal lines set aside during the merge could not be put back ({exc.strerror}); they are kept "
            f"in {kept}, and the next `vaultmem sync` puts them back"
        ) from None
    return dropped


def _entries(git: Git, record: Any) -> tuple[dict[str, bytes], int]:
    """The record's blocks of lines by vault-relative journal file, and how many entries
    named none: a path that is absolute, outside this vault or its `.vaultmem-journal/`,
    or spelled with `..` or a NUL (sync never keeps such a path, `_uncommitted`; the record
    is a file anyone with the clone can write)."""
    files = record["files"].items()
    lines = {}
    for path, data in files:
        where = _journal_file(git, path)
        if where is not None:
            lines[where] = base64.b64decode(data)
    return lines, len(files) - len(lines)


def _cut_back(git: Git, aside: dict[str, tuple[int, bytes]]) -> None:
    """Each file back to its committed text, once the lines are kept; a failure puts back
    what was cut, and nothing is merged."""
    try:
        _keep(git, {path: lines for path, (_, lines) in aside.items()})
    except OSError as exc:
        raise Conflict(
            f"journal lines not yet committed could not be kept aside for the merge ({exc.strerror}): "
            "nothing was merged or pushed"
        ) from None
    try:
        for path, (length, _) in aside.items():
            if length:
                with opened(git.root, _vault_path(git, path), write=True) as fd:
                    os.ftruncate(fd, length)
            else:
                (git.top / path).unlink()  # untracked: git would refuse to write the upstream's file over it
    except (OSError, Refused) as exc:  # Refused: made a symlink since set_aside read it
        put_back(git)
        why = exc.strerror if isinstance(exc, OSError) else "a journal folder is a symlink"
        raise Conflict(
            f"journal lines not yet committed could not be set aside for the merge ({why}): "
            "nothing was merged or pushed"
        ) from None


def _uncommitted(git: Git) -> dict[str, bool]:
    """Journal files changed in the work tree only (a person's staged change is theirs) ->
    whether git tracks them (False: untracked, new since the last commit)."""
    out = _names(git, "status", "--porcelain=v1", "--no-renames", "--untracked-files=all", "--", JOURNAL_DIR)
    found = {}
    for entry in out:  # "XY path": X the index's state, Y the work tree's
        state, path = entry[:2], entry[3:]
        if state in (" M", "??") and _journal_file(git, path) is not None:
            found[path] = state == " M"
    return found


def _journal_file(git: Git, repo_path: str) -> str | None:
    """The vault-relative journal file a repository path names, or None. Its spelling is
    checked first: Git.vault_path looks at the folders on the way on disk."""
    if not repo_path.startswith(git.prefix) or not is_journal_path(repo_path[len(git.prefix) :]):
        return None
    return git.vault_path(repo_path)


def _vault_path(git: Git, repo_path: str) -> str:
    return git.vault_path(repo_path) or repo_path


def _names(git: Git, *args: str) -> list[str]:
    """A git list of repository paths, NUL-separated so that no name comes back quoted."""
    try:
        out = git.run_bytes(*args[:1], "-z", *args[1:]).decode("utf-8", "surrogateescape")
    except GitError:
        return []  # then nothing is set aside, and the merge goes as it did
    return [name for name in out.split("\0") if name]


def left_aside(git: Git) -> bool:
    """Whether lines are set aside now: a sync merging, or one killed mid-merge."""
    return _kept_file(git).exists()


def _kept_file(git: Git) -> Path:
    return git.git_path(GIT_JOURNAL_ASIDE)


def _keep(git: Git, lines: dict[str, bytes]) -> None:
    """The lines in the git dir, whole or not at all, on disk before any journal file is
    cut back."""
    record = {"files": {path: base64.b64encode(block).decode("ascii") for path, block in lines.items()}}
    write_whole(_kept_file(git), json.dumps(record).encode("utf-8"))
