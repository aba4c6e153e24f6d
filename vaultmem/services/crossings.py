"""An edit that crossed a delete: one clone changed a note while another deleted it.

`note delete` moves a note into `.trash/<UTC time>/<path>`; git sees a rename, and its
merge carries the other clone's edit along into the trash, where nobody reads it. A
person's or agent's words written after the delete's author last saw the note are newer
than the delete, so `sync` brings the note back to where it was, edit and all, in a
commit of its own (`trash restore` by hand would do the same). Where a note has since
been made at that path, the edited copy stays in the trash and is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from vaultmem.errors import Conflict
from vaultmem.paths import TRASH_RELPATH
from vaultmem.services.commits import commit_paths
from vaultmem.services.trash import DELETE_BATCH
from vaultmem.vault import store
from vaultmem.vault.git import Git
from vaultmem.vault.layout import utf8_name

KEPT_MESSAGE = (
    "vaultmem sync: notes edited on one side and deleted on the other, brought back from .trash/\n\n"
    "The edit is newer than the delete; delete the note again if it should stay gone."
)


@dataclass(frozen=True, slots=True)
class Crossing:
    path: str  # where the note lived, and lives again when kept
    trashed_to: str  # its copy in .trash/, the other side's edit merged in
    kept: bool  # brought back (False: a note has been made at `path` since)


def crossings(git: Git, base: str, trasher: str, editor: str) -> list[tuple[str, str]]:
    """(note path, trash path) of each note `trasher` moved to .trash/ since `base` while
    `editor` changed it. Vault-relative paths."""
    added = _names(git, "A", base, trasher, TRASH_RELPATH)
    gone = set(_names(git, "D", base, trasher, "."))
    edited = set(_names(git, "M", base, editor, "."))
    out = []
    for trashed in added:
        parts = trashed.split("/", 2)
        if len(parts) == 3 and DELETE_BATCH.match(parts[1]) and parts[2] in gone and parts[2] in edited:
            out.append((parts[2], trashed))
    return out


def keep_crossed_edits(git: Git, base: str | None, ours: str | None, theirs: str) -> list[Crossing]:
    """After a clean merge of `theirs` into `ours` (which met at `base`): every crossed
    note back where it was, committed. The move never replaces a note (store.move_file),
    one written since the merge included."""
    if base is None or ours is None:
        return []
    found = [*crossings(git, base, ours, theirs), *crossings(git, base, theirs, ours)]
    out = []
    for path, trashed in found:
        try:
            store.move_file(git.root, trashed, path)
            out.append(Crossing(path, trashed, True))
        except Conflict:  # a note made at its path since: the edited copy stays in the trash
            out.append(Crossing(path, trashed, False))
    kept = [part for c in out if c.kept for part in (c.trashed_to, c.path)]
    if kept:
        commit_paths(git, kept, KEPT_MESSAGE, None)
    return out


def _names(git: Git, status: str, old: str, new: str, where: str) -> list[str]:
    out = git.run_bytes("diff", "-z", "--name-only", "--no-renames", f"--diff-filter={status}", old, new, "--", where)
    names = (git.vault_path(n) for n in out.decode("utf-8", "surrogateescape").split("\0") if n)
    return [n for n in names if n is not None and utf8_name(n)]
