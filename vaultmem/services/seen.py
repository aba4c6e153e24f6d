"""A ghost's history: the commits that changed a note it may read, and revisions counted in it.

One git history holds every ghost's notes, so git's own revision arithmetic counts commits
a ghost may not know of: `get --at HEAD~3` answering or not told alice how many commits
there are, bob's private ones included, and a commit id she never saw, given by prefix,
answered whether bob had committed. To a ghost a revision therefore names a commit of its
own history (SPEC §3): a branch, tag, HEAD or REV@{date} the last commit at or before it
that changed a note it may read (the notes it can see are the same there); `~N` and `^`
step back through those commits only; a commit id must be one of them (matched against
them alone: git matches a prefix against every object); a merge that brought it nothing
new is not one (bob's sync of a private commit merges alice's work in), and the walk goes
on through the parent it repeats; a merge's other parents (`^2`), the reflog's Nth entry
(`@{3}`), git describe's `name-g<id>` and the rest of git's syntax are a person's. A person's revisions are git's.
"""

from __future__ import annotations

import re

from vaultmem.errors import InvalidInput
from vaultmem.services.app import App
from vaultmem.vault.git import REFLOG_SELECTOR, Git, searches_history
from vaultmem.vault.layout import classify, is_note_path

# steps back at the end of a revision: ~, ~N, ^, ^0, ^1 (git reads each as first parents)
_STEPS = re.compile(r"(?:~\d*|\^[01]?)*\Z")
_STEP = re.compile(r"~(\d*)|\^([01]?)")
_COMMIT_ID = re.compile(r"[0-9a-fA-F]{4,64}\Z")
# ORIG_HEAD and FETCH_HEAD are left out: every merge or pull moves them, one of another
# ghost's private commits too
_POINTERS = frozenset({"", "HEAD", "@"})
# HEAD@{3}, @{-2}: the reflog's Nth entry counts every commit made here, not a ghost's
_COUNTED_ENTRY = re.compile(r"@\{\s*-?0*[1-9]\d*\s*\}")
_NOT_DATES = frozenset({"u", "upstream", "push"})
_GHOST_REVISION = (
    "a revision of the notes you may read: HEAD, a branch or tag, HEAD~N, REV@{date}, a commit that changed one"
)


def readable(app: App, path: str) -> bool:
    """Whether the caller may read the note at a vault path (one in the trash by the place
    it was deleted from: layout.classify)."""
    return app.can_read(classify(path))


def seen_commit(app: App, git: Git, rev: str, history: History | None = None) -> str:
    """The commit `rev` names to the caller (module docstring); InvalidInput for none, in
    one message whether git knows the revision or not."""
    sha = seen_or_before(app, git, rev, history)
    if sha is None:
        raise InvalidInput(f"{rev!r} names no commit of this repository")
    return sha


def seen_or_before(app: App, git: Git, rev: str, history: History | None = None) -> str | None:
    """As seen_commit, but None for a revision before the caller's history begins (to a
    ghost, the vault before any note it may read: a range from there starts empty)."""
    if app.ghost is None:
        return git.resolve(rev)
    if rev.startswith("-") or searches_history(rev):
        raise InvalidInput(f"{rev!r} is not {_GHOST_REVISION}")
    base, back = split_steps(rev)
    history = history or History(app, git)
    none = InvalidInput(f"{rev!r} names no commit of this repository")
    bare = REFLOG_SELECTOR.sub("", base)
    if _COMMIT_ID.match(base):
        # Matched against the caller's own commits only: git would match a prefix against
        # every object, and answer differently where one of another ghost's commits shares it
        sha = history.known(base)
        if sha is None:
            raise none
    elif bare in _POINTERS or bare in _refs(git):
        tip, moment = _dated(base, rev)
        try:
            sha = git.resolve(tip or "HEAD")
        except InvalidInput:
            raise none from None
        if moment is not None:
            at = _by_time(git, history, sha, moment)
            if at is None:
                return None
            sha = at
    else:  # `x-g<id>` (git describe's names), `<id>@{0}`, a path: an id by another road
        raise none
    chain = history.chain(sha, back + 1)
    return chain[back] if back < len(chain) else None


def _dated(base: str, rev: str) -> tuple[str, str | None]:
    """A ghost's `REF@{date}` as REF and the date. git reads it from the reflog: where REF
    pointed then, in this clone, which may be a commit since reset, amended or rebased away
    (one of another ghost's), and answering from it told that it had been there, and when.
    To a ghost it is REF's line as it is now, by the time each commit was written. `@{u}`, `@{push}` and `@{0}`
    name no time and stay as they are."""
    selectors = list(REFLOG_SELECTOR.finditer(base))
    if not selectors:
        return base, None
    inners = [m.group(0)[2:-1].strip() for m in selectors]
    # one date, last: `main@{T}@{now}` would have git read `main@{T}` from the reflog
    if any(inner.lower() not in _NOT_DATES for inner in inners[:-1]) or not inners[-1]:
        raise InvalidInput(f"{rev!r} is not {_GHOST_REVISION}")
    last, inner = selectors[-1], inners[-1]
    if inner.lower() in _NOT_DATES or inner.isdigit():
        return base, None
    return base[: last.start()] + base[last.end() :], inner


def _by_time(git: Git, history: History, tip: str, moment: str) -> str | None:
    """The last commit of the caller's history from `tip` written by `moment` (a date git reads)."""
    limit = git.run("rev-parse", f"--before={moment}").strip()  # --min-age=<seconds>
    seconds = int(limit.partition("=")[2]) if limit.startswith("--min-age=") else None
    for sha in history.chain(tip, len(history.parents) + 1):
        if seconds is None or history.time.get(sha, 0) <= seconds:
            return sha
    return None


def seen_at(app: App, git: Git, sha: str | None, history: History | None = None) -> str | None:
    """The commit the caller sees at `sha`: itself, or the last before it that changed a
    note it may read (None: none did)."""
    if sha is None or app.ghost is None:
        return sha
    chain = (history or History(app, git)).chain(sha, 1)
    return chain[0] if chain else None


def seen_parent(app: App, git: Git, sha: str, history: History | None = None) -> str | None:
    """The commit before `sha` in the caller's history (its first parent, for a person)."""
    if app.ghost is None:
        return git.first_parent(sha)
    before = [c for c in (history or History(app, git)).chain(sha, 2) if c != sha]
    return before[0] if before else None


def seen_before(app: App, git: Git, head: str, moment: str) -> str | None:
    """The last commit of the caller's history from `head` committed by `moment` (a date
    git reads): a person's is git's `rev-list --before`, which may be another ghost's."""
    return _by_time(git, History(app, git), head, moment)


def split_steps(rev: str) -> tuple[str, int]:
    """A ghost's revision as its base and how many of its commits to step back."""
    tail = _STEPS.search(rev)
    cut = tail.start() if tail else len(rev)
    base, steps = rev[:cut], rev[cut:]
    bare = REFLOG_SELECTOR.sub("", base)
    if not base or "~" in bare or "^" in bare or _COUNTED_ENTRY.search(base):
        raise InvalidInput(f"{rev!r} is not {_GHOST_REVISION}")
    back = 0
    for m in _STEP.finditer(steps):
        if m.group(0).startswith("~"):
            back += int(m.group(1)) if m.group(1) else 1
        else:
            back += 0 if m.group(2) == "0" else 1
    return base, back


def _refs(git: Git) -> set[str]:
    """Every name a branch, tag or remote branch goes by (`main`, `refs/heads/main`); not a
    person's stash (`stash` answering told a ghost there was stashed work, hidden or not)."""
    names: set[str] = set()
    for ref in git.run(
        "for-each-ref", "--format=%(refname)", "refs/heads/", "refs/tags/", "refs/remotes/"
    ).splitlines():
        names.add(ref)
        for prefix in ("refs/heads/", "refs/tags/", "refs/remotes/", "refs/"):
            if ref.startswith(prefix):
                names.add(ref[len(prefix) :])
                if prefix == "refs/remotes/" and ref.endswith("/HEAD"):
                    names.add(ref[len(prefix) : -len("/HEAD")])
    return names


class History:
    """The caller's view of the repository's commits, read once: a commit is the caller's
    when it changed a note it may read; a merge is not when, in what the caller may read,
    it is the same as one of its parents (it brought the caller nothing new), and the walk
    back goes on through that parent, as git's own history simplification does for a path."""

    def __init__(self, app: App, git: Git) -> None:
        self.app, self.git = app, git
        self.parents: dict[str, list[str]] = {}
        self.changed: dict[str, bool] = {}  # a commit of one parent: changed a note it may read
        # author time, seconds: a person's rebase or amend keeps it and moves the committer
        # time (a pull --rebase over another ghost's private commits re-dated alice's own)
        self.time: dict[str, int] = {}
        # the lines of branches, tags and remote branches (and a detached HEAD), as _refs:
        # not a person's stash, whose commits hold the work it put aside, or other refs
        lines = ["--branches", "--tags", "--remotes", *(["HEAD"] if git.has_head() else [])]
        out = git.run("log", *lines, "--no-renames", "--name-only", "-z", "--format=%x1e%H%x1f%P%x1f%at")
        self._told: dict[str, bool] = {}  # by path: a long history names the same notes thousands of times
        for block in out.split("\x1e"):
            fields = block.split("\0")
            head = fields[0].split("\x1f")
            if len(head) < 3 or not head[0].strip():
                continue
            sha = head[0].strip()
            self.parents[sha] = head[1].split()
            self.time[sha] = int(head[2].strip() or 0)
            names = [n[1:] if n.startswith("\n") else n for n in fields[1:]]
            self.changed[sha] = any(self.told(n) for n in names if n)
        self._same: dict[str, str | None] = {}

    def known(self, prefix: str) -> str | None:
        """The caller's one commit whose id starts with `prefix`; None for none or several."""
        prefix = prefix.lower()
        if prefix in self.parents:  # a whole id
            return prefix if self._is_mine(prefix) else None
        mine = [sha for sha in self.parents if sha.startswith(prefix) and self._is_mine(sha)]
        return mine[0] if len(mine) == 1 else None

    def chain(self, sha: str, limit: int) -> list[str]:
        """Up to `limit` of the caller's commits from `sha` back, newest first."""
        out: list[str] = []
        walked: set[str] = set()
        at: str | None = sha
        while at is not None and len(out) < limit and at not in walked:
            walked.add(at)
            parents = self.parents.get(at, [])
            if len(parents) > 1:
                same = self._same_parent(at)
                if same is not None:
                    at = same
                    continue
            if self._is_mine(at):
                out.append(at)
            at = parents[0] if parents else None
        return out

    def told(self, repo_path: str) -> bool:
        if repo_path not in self._told:
            self._told[repo_path] = told(self.app, self.git, repo_path)
        return self._told[repo_path]

    def _is_mine(self, sha: str) -> bool:
        if len(self.parents.get(sha, [])) > 1:
            return self._same_parent(sha) is None
        return self.changed.get(sha, False)

    def _same_parent(self, merge: str) -> str | None:
        """The parent a merge is the same as in what the caller may read, if any. Of several,
        the one whose line holds the caller's newest commit, else the first: bob syncing
        his private line with alice's work that came to nothing she can see (a note made
        and deleted) is the same as both, and his first parent would skip her commits,
        which without him are her line."""
        if merge not in self._same:
            self._same[merge] = None  # while deciding: a cycle is no merge's
            same = []
            for parent in self.parents[merge]:
                names = self.git.run("diff", "--no-renames", "--name-only", "-z", parent, merge, "--", ".")
                if not any(self.told(n) for n in names.split("\0") if n):
                    same.append(parent)
            self._same[merge] = self._newest_line(same) if len(same) > 1 else (same[0] if same else None)
        return self._same[merge]

    def _newest_line(self, parents: list[str]) -> str:
        """The parent whose first commit of the caller's reaches every other's."""
        firsts = {p: next(iter(self.chain(p, 1)), None) for p in parents}
        for parent, first in firsts.items():
            others = {f for p, f in firsts.items() if p != parent and f is not None and f != first}
            if first is not None and others <= self._ancestors(first):
                return parent
        return parents[0]

    def _ancestors(self, sha: str) -> set[str]:
        seen: set[str] = set()
        todo = [sha]
        while todo:
            for parent in self.parents.get(todo.pop(), []):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return seen


def may_be_told(app: App, path: str) -> bool:
    """Whether the caller may be told of the note at a vault path (review's rule)."""
    return app.ghost is None or readable(app, path)


def told(app: App, git: Git, repo_path: str) -> bool:
    """A note the caller may be told of (the journal, beside every write, is nobody's news)."""
    path = git.vault_path(repo_path)
    return path is not None and is_note_path(path) and may_be_told(app, path)
