"""A ghost's history: the commits that changed a note it may read, and revisions counted in it.

One git history holds every ghost's notes, so git's own revision arithmetic counts commits
a ghost may not know of: `get --at HEAD~3` answering or not told alice how many commits
there are, bob's private ones included, and a commit id she never saw, given by prefix,
answered whether bob had committed. To a ghost a revision therefore names a commit of its
own history (SPEC §3): a branch, tag, HEAD or REV@{date} the last commit at or before it
that changed a note it may read (the notes it can see are the same there); `~N` and `^`
step back through those commits only; a commit id must be one of them; a merge's other
parents (`^2`), the reflog's Nth entry (`@{3}`) and the rest of git's syntax are a
person's. A person's revisions are git's.
"""

from __future__ import annotations

import re

from vaultmem.errors import InvalidInput
from vaultmem.services.app import App
from vaultmem.vault.git import Git
from vaultmem.vault.layout import classify, is_note_path

# steps back at the end of a revision: ~, ~N, ^, ^0, ^1 (git reads each as first parents)
_STEPS = re.compile(r"(?:~\d*|\^[01]?)*\Z")
_STEP = re.compile(r"~(\d*)|\^([01]?)")
_COMMIT_ID = re.compile(r"[0-9a-fA-F]{4,64}\Z")
_REFLOG_SELECTOR = re.compile(r"@\{[^{}]*\}")
# HEAD@{3}, @{-2}: the reflog's Nth entry counts every commit made here, not a ghost's
_COUNTED_ENTRY = re.compile(r"@\{\s*-?0*[1-9]\d*\s*\}")
_GHOST_REVISION = (
    "a revision of the notes you may read: HEAD, a branch or tag, HEAD~N, REV@{date}, a commit that changed one"
)


def readable(app: App, path: str) -> bool:
    """Whether the caller may read the note at a vault path; a note in the trash by the
    place it was deleted from."""
    if path.startswith(".trash/") and path.count("/") >= 2:
        path = path.split("/", 2)[2]
    return app.can_read(classify(path))


def seen_commit(app: App, git: Git, rev: str) -> str:
    """The commit `rev` names to the caller (module docstring); InvalidInput for none, in
    one message whether git knows the revision or not."""
    sha = seen_or_before(app, git, rev)
    if sha is None:
        raise InvalidInput(f"{rev!r} names no commit of this repository")
    return sha


def seen_or_before(app: App, git: Git, rev: str) -> str | None:
    """As seen_commit, but None for a revision before the caller's history begins (to a
    ghost, the vault before any note it may read: a range from there starts empty)."""
    if app.ghost is None:
        return git.resolve(rev)
    base, back = split_steps(rev)
    sha = git.resolve(base)
    chain = seen_chain(app, git, sha)
    if _COMMIT_ID.match(base) and (not chain or chain[0] != sha):
        # a commit id it may not know of answers as one that does not exist
        raise InvalidInput(f"{rev!r} names no commit of this repository")
    return chain[back] if back < len(chain) else None


def split_steps(rev: str) -> tuple[str, int]:
    """A ghost's revision as its base and how many of its commits to step back."""
    tail = _STEPS.search(rev)
    cut = tail.start() if tail else len(rev)
    base, steps = rev[:cut], rev[cut:]
    bare = _REFLOG_SELECTOR.sub("", base)
    if not base or "~" in bare or "^" in bare or _COUNTED_ENTRY.search(base):
        raise InvalidInput(f"{rev!r} is not {_GHOST_REVISION}")
    back = 0
    for m in _STEP.finditer(steps):
        if m.group(0).startswith("~"):
            back += int(m.group(1)) if m.group(1) else 1
        else:
            back += 0 if m.group(2) == "0" else 1
    return base, back


def seen_chain(app: App, git: Git, sha: str) -> list[str]:
    """`sha`'s first-parent line, newest first, cut to the commits that changed a note the
    caller may read (a merge by what it brought to its first parent)."""
    out = git.run("log", "--first-parent", "--no-renames", "--name-only", "-z", "--format=%x1e%H", sha, "--", ".")
    chain = []
    for block in out.split("\x1e"):
        fields = block.split("\0")
        if not fields[0]:
            continue
        names = [n[1:] if n.startswith("\n") else n for n in fields[1:]]
        if any(told(app, git, n) for n in names if n):
            chain.append(fields[0].strip())
    return chain


def may_be_told(app: App, path: str) -> bool:
    """Whether the caller may be told of the note at a vault path (review's rule)."""
    return app.ghost is None or readable(app, path)


def told(app: App, git: Git, repo_path: str) -> bool:
    """A note the caller may be told of (the journal, beside every write, is nobody's news)."""
    path = git.vault_path(repo_path)
    return path is not None and is_note_path(path) and may_be_told(app, path)
