"""An edit that crossed a delete: one clone changed a note while another deleted it.

`note delete` moves a note into `.trash/<UTC time>/<path>` (Obsidian's own delete, into
`.trash/<name>`); git sees a rename, and its merge carries the other clone's edit along
into the trash, where nobody reads it. A person's or agent's words written after the
delete's author last saw the note are newer than the delete, so `sync` brings the note
back to where it was, edit and all, in a commit of its own (`trash restore` by hand would
do the same). Where a note has since been made at that path, the edited copy stays in
the trash and is reported.

A note both clones deleted is no conflict either (settle_double_deletes).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from vaultmem.errors import VaultmemError
from vaultmem.paths import TRASH_RELPATH
from vaultmem.services.commits import commit_paths
from vaultmem.vault import store
from vaultmem.vault.frontmatter import split_document
from vaultmem.vault.git import Git
from vaultmem.vault.layout import DELETE_BATCH, utf8_name

KEPT_MESSAGE = (
    "vaultmem sync: notes edited on one side and deleted on the other, brought back from .trash/\n\n"
    "The edit is newer than the delete; delete the note again if it should stay gone."
)


@dataclass(frozen=True, slots=True)
class Crossing:
    path: str  # where the note lived, and lives again when kept
    trashed_to: str  # its copy in .trash/, the other side's edit merged in
    kept: bool  # brought back (False: a note has been made at `path` since)


@dataclass(frozen=True, slots=True)
class Kept:
    crossings: list[Crossing]
    commit: str | None  # the commit that brought them back: sync's own, not pulled


def crossings(git: Git, base: str, trasher: str, editor: str) -> list[tuple[str, str]]:
    """(note path, trash path) of each note `trasher` moved to .trash/ since `base` while
    `editor` changed its words. Vault-relative paths."""
    moved = _trashed(git, base, trasher)
    if not moved:
        return []
    changed = set(_names(git, "M", base, editor, "."))
    found = [(path, trashed) for path, trashed in moved.items() if path in changed]
    if not found:
        return []
    before, after = git.contents(base, [p for p, _ in found]), git.contents(editor, [p for p, _ in found])
    return [(p, t) for p, t in found if _words(before[p]) != _words(after[p])]


def _trashed(git: Git, base: str, side: str) -> dict[str, str]:
    """The notes `side` deleted since `base`: note path -> its trash path, as git pairs them
    (a delete moves the file unchanged) into the place a delete puts it — vaultmem's
    `.trash/<time>/<path>`, Obsidian's `.trash/<name>`. A file that only turned up in the
    trash (a person's own) is no note's, and a note moved elsewhere is not deleted."""
    out = git.run_bytes("diff", "-z", "--name-status", "-M", "--diff-filter=R", base, side, "--", ".")
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    pairs: dict[str, str] = {}
    for at in range(0, len(fields) - 2, 3):
        old, new = git.vault_path(fields[at + 1]), git.vault_path(fields[at + 2])
        if old is None or new is None or not (utf8_name(old) and utf8_name(new)):
            continue
        if _trash_of(new) in (old, old.rsplit("/", 1)[-1]):
            pairs[old] = new
    return pairs


def _trash_of(path: str) -> str | None:
    """What a trash path holds: `.trash/<time>/<path>` the path, `.trash/<name>` the name."""
    parts = path.split("/", 2)
    if parts[0] != TRASH_RELPATH or len(parts) < 2:
        return None
    if len(parts) == 3:
        return parts[2] if DELETE_BATCH.match(parts[1]) else None
    return parts[1]


_LINK_TARGETS = re.compile(r"\[\[[^\]\n]*\]\]|\]\([^)\n]*\)")
_KEPT_BY_VAULTMEM = ("version", "updated", "hash")


def _words(data: bytes | None) -> tuple[str, str]:
    """What a person or agent wrote in a note: its body without link targets and its front
    matter without the keys every write sets. A change vaultmem makes on its own (the
    links a move or `fix-names` rewrites, in the body or in properties) is no edit to
    bring a deleted note back for."""
    text = (data or b"").decode("utf-8", "replace").replace("\r\n", "\n")
    split = split_document(text)
    front = "\n".join(
        line
        for line in (split.fm_text or "").split("\n")
        if not line.startswith(tuple(f"{k}:" for k in _KEPT_BY_VAULTMEM))
    )
    return _LINK_TARGETS.sub("[[]]", front), _LINK_TARGETS.sub("[[]]", split.body)


def keep_crossed_edits(git: Git, base: str | None, ours: str | None, theirs: str) -> Kept:
    """After a clean merge of `theirs` into `ours` (which met at `base`): every crossed
    note back where it was, committed. The move never replaces a note (store.move_file),
    one written since the merge included."""
    if base is None or ours is None:
        return Kept([], None)
    found = [*crossings(git, base, ours, theirs), *crossings(git, base, theirs, ours)]
    out = []
    for path, trashed in found:
        try:
            store.move_file(git.root, trashed, path)
            out.append(Crossing(path, trashed, True))
        except VaultmemError:  # a note made at its path since, or the copy gone: it stays as it is
            out.append(Crossing(path, trashed, False))
    kept = [part for c in out if c.kept for part in (c.trashed_to, c.path)]
    return Kept(out, commit_paths(git, kept, KEPT_MESSAGE, None) if kept else None)


def _names(git: Git, status: str, old: str, new: str, where: str) -> list[str]:
    out = git.run_bytes("diff", "-z", "--name-only", "--no-renames", f"--diff-filter={status}", old, new, "--", where)
    names = (git.vault_path(n) for n in out.decode("utf-8", "surrogateescape").split("\0") if n)
    return [n for n in names if n is not None and utf8_name(n)]


def unmerged(git: Git, whole: bool = False) -> dict[str | None, set[str]]:
    """The vault's unmerged files -> the index stages git holds of each ("1" base, "2"
    ours, "3" theirs); `whole`: the repository's (pathspecs are literal here: no `:/`),
    the files outside the vault under None."""
    where = os.path.relpath(git.top, git.root) if whole else "."
    out = git.run_bytes("ls-files", "-u", "-z", "--full-name", "--", where).decode("utf-8", "surrogateescape")
    stages: dict[str | None, set[str]] = {}
    for entry in out.split("\0"):
        if entry:
            info, _, repo_path = entry.partition("\t")
            path = git.vault_path(repo_path)
            stages.setdefault(path if path is not None and utf8_name(path) else None, set()).add(info.split()[-1])
    return stages


def settle_double_deletes(git: Git) -> bool:
    """After a merge that stopped: when all that stopped it, in the whole repository, is
    notes both sides deleted, each into a trash place of its own (git's rename/rename
    conflict), keep each side's own copy, the note deleted, and finish the merge. False,
    with nothing done, when anything else is unmerged: that is a person's to resolve.

    Each copy is written from its own side: git's conflict puts one text merged from both,
    markers and all, in both places."""
    found = unmerged(git, whole=True)
    stages = {path: s for path, s in found.items() if path is not None}
    if len(stages) != len(found):
        return False  # outside the vault: not ours to settle
    gone = {path for path, s in stages.items() if s == {"1"}}  # deleted on both sides
    copies = {path: s for path, s in stages.items() if s in ({"2"}, {"3"})}  # each side's own
    if not gone or len(gone) + len(copies) != len(stages):
        return False
    for path in copies:
        held = _trash_of(path)
        if held is None or not any(held in (note, note.rsplit("/", 1)[-1]) for note in gone):
            return False
    for path, side in copies.items():
        git.run("checkout", "HEAD" if side == {"2"} else "MERGE_HEAD", "--", path)
    git.run("rm", "-q", "--cached", "--", *sorted(gone))
    # --no-verify: the hooks `git merge` runs, no others (a pre-commit hook would stop here)
    git.run("commit", "-q", "--no-edit", "--no-verify", env={"GIT_MERGE_AUTOEDIT": "no"})
    return True
