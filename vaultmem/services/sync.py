"""`vaultmem sync`: this clone's memory and its upstream's made one (issue 27, item 2).

Three git steps, each an existing engine's: commit the pending memory changes (one commit
per ghost, services/commits.py), merge the upstream in (notes merged by the vaultmem merge
driver, vault/merge.py), push. Safe in an agent's loop or cron:

- a person's hand edits not yet committed stop it before anything happens (a person
  decides when their words are committed), unless `include_hand_edits`;
- a merge, rebase or cherry-pick in progress stops it (a person's to finish);
- a note both sides changed on the same lines stops it after the merge, mid-merge, with the
  notes named (markers in their bodies only; `lint` names them too) — nothing is pushed;
  run as a ghost, a merge stopped on notes that ghost may not read is undone instead (it
  could not settle them, and would leave another ghost's note with markers in it);
- a push the remote refuses because it moved meanwhile is retried after merging again;
- journal lines not yet committed (another ghost's, run as a ghost) are set aside while
  git merges and appended again after it (vault/journal_aside.py).

Run with a ghost it commits that ghost's own changes only and names only notes it may
read. A running watcher indexes the pull's burst of files in one reconcile (it waits while
git holds the index lock, daemon/loop.py) and `sync` returns once it has.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from vaultmem.config import STATE_DIR
from vaultmem.errors import Conflict, InvalidInput
from vaultmem.models import SyncResult
from vaultmem.paths import TOKENS_NAME
from vaultmem.services.app import App
from vaultmem.services.commits import (
    commit_pending,
    pending_changes,
    put_back_aside,
    put_back_left_aside,
    refuse_mid_merge,
)
from vaultmem.services.crossings import Crossing, Kept, keep_crossed_edits, settle_double_deletes, unmerged
from vaultmem.services.gitsetup import NOTES_ATTRIBUTE, driver_command
from vaultmem.services.seen import History, may_be_told, seen_at, told
from vaultmem.vault.git import Git, GitError
from vaultmem.vault.journal import JOURNAL_DIR
from vaultmem.vault.journal_aside import set_aside
from vaultmem.vault.layout import folded, is_note_path
from vaultmem.vault.writers import held

PUSH_ATTEMPTS = 3  # merges and pushes when the remote keeps moving under us
SYMLINK_MODE = "120000"  # git's mode of a symlink


def sync(
    app: App,
    include_hand_edits: bool = False,
    push: bool = True,
    message: str | None = None,
    indexed_by_watcher: Callable[[list[str]], str] | None = None,
) -> SyncResult:
    """`indexed_by_watcher(paths)`: asks a running watcher to index what the merge changed
    and waits for it ("synced", "no_watcher", or why not); the front end that knows how to
    reach a watcher passes it."""
    git = Git.of(app.root)
    put_back_left_aside(app, git)
    refuse_mid_merge(git)
    upstream = _upstream(git)
    _ensure_driver(git)
    # a ghost's sync commits its own changes only, and stops at a person's it may see too
    pending = pending_changes(app, git, every_writer=True)
    hand = [p for p in pending.groups.get("hand", []) if may_be_told(app, p)]
    if "hand" in pending.groups and (not include_hand_edits or app.ghost is not None):
        pending.groups.pop("hand")  # never a ghost's to commit
        if hand and not include_hand_edits:
            raise Conflict(
                f"{len(hand)} note(s) hold a person's edits not yet committed: commit them "
                "(vaultmem commit or git), or sync --include-hand-edits",
                paths=sorted(hand)[:50],
            )
    committed = commit_pending(app, message, pending)
    before = git.resolve("HEAD") if git.has_head() else None
    crossed: list[Crossing] = []
    own: set[str] = set()  # commits sync made itself after merging: not pulled
    for attempt in range(PUSH_ATTEMPTS):
        _fetch(git, upstream, app)
        kept = _merge(git, upstream, app)
        crossed += kept.crossings
        own |= {kept.commit} if kept.commit else set()
        if not push:
            break
        try:
            git.run("push", "--quiet", *_push_target(upstream))
            break
        except GitError as exc:
            if attempt == PUSH_ATTEMPTS - 1 or not _moved_meanwhile(exc.stderr or str(exc)):
                raise Conflict(f"push to {upstream} refused: {_said(exc, app)}") from None
    after = git.resolve("HEAD") if git.has_head() else None
    notes = _changed_notes(app, git, before, after)
    history = History(app, git) if app.ghost is not None and after is not None else None  # once, for both ends
    pulled = {  # to a ghost, the commits of its own history there (services/seen.py)
        "from": seen_at(app, git, before, history),
        "to": seen_at(app, git, after, history),
        "commits": _pulled_commits(app, git, before, after, own),
        "notes": len(notes),
    }
    indexed = "unchanged" if not notes else indexed_by_watcher(notes) if indexed_by_watcher else "no_watcher"
    shown = [
        {"path": c.path, "trashed_to": c.trashed_to, "restored": c.kept} for c in crossed if may_be_told(app, c.path)
    ]
    return SyncResult(upstream, committed.commits, committed.held, pulled, push, indexed, shown)


def _upstream(git: Git) -> str:
    """The branch's upstream; without one, the one remote's branch of the same name (what
    a clone made by `git push origin main` without `-u` means)."""
    try:
        return git.run("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}").strip()
    except GitError:
        pass
    remotes = git.run("remote").split()
    if not remotes:
        raise InvalidInput("this clone has no remote to sync with: `git remote add origin URL` first")
    if not git.has_head():  # a new repository: no branch to push yet
        raise InvalidInput(
            f"this clone has no commits yet: `vaultmem commit` (or git commit), then `git push -u {remotes[0]} HEAD` "
            "once, then sync"
        )
    branch = git.run("rev-parse", "--abbrev-ref", "HEAD").strip()
    if len(remotes) == 1 and branch != "HEAD":
        guess = f"{remotes[0]}/{branch}"
        try:
            git.run("rev-parse", "--verify", "-q", f"refs/remotes/{guess}")
            return guess
        except GitError:
            pass
    raise InvalidInput(f"the current branch has no upstream: `git push -u {remotes[0]} HEAD` once, then sync")


def _ensure_driver(git: Git) -> None:
    """Notes must merge with the vaultmem driver: git's own line merge would put conflict
    markers in front matter. The driver's definition is this clone's config (set here when
    missing, as `git setup` would); the attribute that selects it is shared and committed,
    so a person adds it."""
    marked = git.run("check-attr", "merge", "--", "note.md").rsplit(":", 1)[-1].strip()
    if marked != "vaultmem":
        raise InvalidInput(
            f".gitattributes does not send notes to the vaultmem merge driver ({NOTES_ATTRIBUTE!r}): "
            "run `vaultmem git setup` and commit .gitattributes, then sync"
        )
    try:
        git.run("config", "--get", "merge.vaultmem.driver")
    except GitError:
        git.run("config", "merge.vaultmem.name", "vaultmem notes: front matter by key, bodies three-way")
        git.run("config", "merge.vaultmem.driver", driver_command())


def _push_target(upstream: str) -> list[str]:
    remote, _, branch = upstream.partition("/")
    return [remote, f"HEAD:{branch}"]


def _fetch(git: Git, upstream: str, app: App) -> None:
    remote, _, branch = upstream.partition("/")
    try:
        git.run("fetch", "--quiet", remote, branch)
    except GitError as exc:
        raise Conflict(
            f"fetch from {remote} failed: {_without_credentials(_fetch_reason(exc))}. Nothing was merged or "
            f"pushed: check that the remote is there and reachable (git remote -v; git fetch {remote})"
        ) from None


# git's closing advice after a failed fetch, whatever the cause: it says nothing of the cause.
_FETCH_ADVICE = ("Please make sure you have the correct access rights", "and the repository exists.")


def _fetch_reason(exc: GitError) -> str:
    """Every line git and its transport said, but hints and the stock advice: the line
    that says why (`ssh: connect to host … refused`) comes before git's own `fatal:`."""
    lines = [line.strip() for line in exc.stderr.splitlines()]
    said = [line for line in lines if line and not line.startswith("hint:") and line not in _FETCH_ADVICE]
    return "; ".join(line.rstrip(".") for line in said) or str(exc)


def _merge(git: Git, upstream: str, app: App) -> Kept:
    """Merges `upstream` in; the notes one side edited while the other deleted them
    (services/crossings.py), brought back after a clean merge."""
    if git.has_head() and git.is_ancestor(upstream, "HEAD"):
        return Kept([], None)  # nothing new upstream
    _refuse_unsafe(git, upstream)
    ours = git.resolve("HEAD") if git.has_head() else None
    base = _merge_base(git, ours, upstream)
    with held(app.root, exclusive=True):  # no note written while git merges (vault/writers.py)
        # other writers' journal lines not yet committed: git would refuse to merge into
        # their files, and they are not this sync's to commit (vault/journal_aside.py)
        aside = set_aside(git, upstream)
        try:
            git.run("merge", "--no-edit", "--quiet", upstream, env={"GIT_MERGE_AUTOEDIT": "no"})
        except GitError as exc:
            if not _settled(git):
                _merge_failed(git, upstream, app, exc)
        finally:
            if aside:  # after the merge, or after it was refused or undone: the file as it was
                put_back_aside(app, git)
    return keep_crossed_edits(git, base, ours, upstream)  # a store write: the lock shared again


def _settled(git: Git) -> bool:
    try:
        return settle_double_deletes(git)
    except GitError:
        return False  # what is unmerged then stops the sync as any conflict does, git's words kept from a ghost


def _merge_base(git: Git, ours: str | None, upstream: str) -> str | None:
    if ours is None:
        return None
    try:
        return git.run("merge-base", ours, upstream).strip() or None
    except GitError:
        return None  # unrelated histories


def _merge_failed(git: Git, upstream: str, app: App, exc: GitError) -> NoReturn:
    stages = unmerged(git)
    if stages:
        shown = sorted(p for p in stages if p is not None and may_be_told(app, p))
        if app.ghost is not None and len(shown) < len(stages):
            # A ghost cannot settle a note it may not read, and a merge left stopped would
            # leave another ghost's private note with both sides' text in it and block this
            # ghost's commits: undone, for the note's owner or a person to sync.
            what = "the merge stopped on notes changed on both sides that this ghost may not read"
            try:
                git.run("merge", "--abort")
            except GitError:
                raise Conflict(
                    f"{what}, and undoing it failed: a person runs `git merge --abort`, then `vaultmem sync`",
                    paths=shown[:50],
                ) from None
            raise Conflict(
                f"{what}; it was undone and nothing was pushed: a person (or the notes' owner) runs `vaultmem sync`",
                paths=shown[:50],
            ) from None
        marked = any({"2", "3"} <= stages[p] for p in shown)  # both sides' text: markers in it
        raise Conflict(
            (
                "the merge left notes both sides changed on the same lines (markers in their bodies; "
                "`vaultmem lint` names them)"
                if marked
                else "the merge stopped on notes one side deleted, moved or added while the other changed them "
                "(`git status` says how)"
            )
            + ": resolve them, `git add` and `git commit`, then sync again — or `git merge --abort`",
            paths=shown[:50],
        ) from None
    raise Conflict(f"merging {upstream} failed: {_said(exc, app)}") from None


def _refuse_unsafe(git: Git, upstream: str) -> None:
    """Nothing merged from an upstream that would run or load a teammate's code here:
    - files under .vaultmem/ or the token file: a clone's indexes and tokens are its own,
      never shared (.gitignore keeps them out of this clone's commits, not out of another's),
      and the merge would write them into this checkout (git overwrites ignored files) for
      the next search to load (Whoosh's segment lists are pickles);
    - changes to the hooks git runs here (core.hooksPath in the work tree, as the README's
      pre-commit hook asks): the merge itself would run a new post-merge hook;
    - symlinks under .vaultmem-journal/ (`_journal_links`): a journal line written through
      one would land where it points, out of the vault.
    Names are compared as a case-insensitive disk compares them (layout.folded): on macOS a
    commit's `.VaultMem/whoosh/...` or `Hooks/post-merge` is written into `.vaultmem/` or
    `hooks/`. A person reads them and merges by hand (`git merge`) if they trust them."""
    own = {folded(STATE_DIR), folded(TOKENS_NAME)}
    tree = _tree(git, upstream)
    state = [p for p in tree if folded(p.split("/")[0]) in own]
    if state:
        raise Conflict(
            f"{upstream} tracks this clone's own state ({len(state)} file(s) under {STATE_DIR}/ or "
            f"{TOKENS_NAME}): indexes and tokens are never shared, and a search here would load them; "
            f"nothing merged. Untrack them upstream (git rm -r --cached {STATE_DIR} {TOKENS_NAME}), commit, push",
            paths=state[:20],
        )
    links = _journal_links(git, upstream, tree)
    if links:
        raise Conflict(
            f"{upstream} makes {len(links)} path(s) under {JOURNAL_DIR}/ symlinks: vaultmem writes no journal "
            "through one (the lines would land where it points, out of the vault); nothing merged. Replace them "
            f"with real folders upstream (git rm the links, commit, push)",
            paths=links[:20],
        )
    folders = _hooks_in_repository(git)
    if folders:
        names = _listed(git, "diff", "--name-only", "--no-renames", f"HEAD...{upstream}")  # a rename: both names
        changed = [p for p in names if _reaches(p, folders)]
        if changed:
            hooks = folders[0]
            raise Conflict(
                f"{upstream} changes the hooks git runs in this clone (core.hooksPath {hooks}): "
                f"nothing merged. Read them (git diff HEAD...{upstream} -- :/{hooks}) and merge by hand "
                "(git merge) if you trust them",
                paths=changed[:20],
            )


def _tree(git: Git, rev: str) -> dict[str, str]:
    """The vault's files at `rev`, each with its git mode (`120000`: a symlink)."""
    entries = _listed(git, "ls-tree", "-r", rev, "--", ".")  # "<mode> <type> <object>\t<path>"
    return {path: meta.split(" ", 1)[0] for meta, _, path in (entry.partition("\t") for entry in entries)}


def _journal_links(git: Git, upstream: str, tree: dict[str, str]) -> list[str]:
    """The symlinks under .vaultmem-journal/ in the upstream's tree that the merge base did
    not have already: those the merge would bring in. One that both had is not the merge's
    to refuse (journal writes refuse it, vault/journal.py), and the sync that carries a
    person's commit removing it goes through."""
    journal = folded(JOURNAL_DIR)
    links = {p for p, mode in tree.items() if mode == SYMLINK_MODE and folded(p.split("/")[0]) == journal}
    if not links:
        return []
    base = _merge_base(git, git.resolve("HEAD") if git.has_head() else None, upstream)
    had = {p for p, mode in _tree(git, base).items() if mode == SYMLINK_MODE} if base else set()
    return sorted(links - had)


def _reaches(path: str, folders: list[str]) -> bool:
    """Whether a changed path is a hooks folder, lies in one, or is a folder on the way to
    one: a commit that makes `hooks` (or `tools` of `tools/hooks`) a symlink to a folder of
    its own files changes the hooks as surely as one that adds `hooks/post-merge`."""
    changed = folded(path)
    return any(
        changed == folder or changed.startswith(folder + "/") or folder.startswith(changed + "/")
        if folder != "."
        else "/" not in changed  # core.hooksPath is the work tree's top: a file there is a hook
        for folder in (folded(f) for f in folders)
    )


def _listed(git: Git, *args: str) -> list[str]:
    """A git list of file names, NUL-separated so that no name comes back quoted."""
    out = git.run_bytes(*args[:1], "-z", *args[1:]).decode("utf-8", "surrogateescape")
    return [name for name in out.split("\0") if name]


def _hooks_in_repository(git: Git) -> list[str]:
    """What a commit could change to change the hooks git runs here, relative to the
    repository's top (`git diff` names are): the hooks folder (core.hooksPath, else
    .git/hooks) as spelled, with its parents' symlinks resolved and wholly resolved, and
    the file each hook in it resolves to — wherever one of those lies in the work tree.
    A `hooks` symlink a commit can repoint, and a `.git/hooks/post-merge` that links to a
    tracked script, are both ways in."""
    top = git.top.resolve()
    try:
        configured = git.run("config", "--get", "core.hooksPath").strip()
    except GitError:
        configured = str(git.git_path("hooks"))
    folder = Path(configured).expanduser()
    spelled = Path(os.path.normpath(folder if folder.is_absolute() else top / folder))  # hooks run at the top
    places = [spelled, Path(os.path.realpath(spelled.parent)) / spelled.name, spelled.resolve()]
    try:
        places += [Path(os.path.realpath(entry.path)) for entry in os.scandir(spelled.resolve())]
    except OSError:
        pass  # no hooks folder yet: a commit may still make one (the places above)
    out = [Path(os.path.relpath(p, top)).as_posix() for p in places if p == top or top in p.parents]
    return list(dict.fromkeys(out))


def _moved_meanwhile(message: str) -> bool:
    return any(s in message for s in ("non-fast-forward", "fetch first", "rejected", "stale info"))


def _without_credentials(text: str) -> str:
    """git's words with the user and password taken out of any URL in them."""
    return re.sub(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]*@", r"\1", text)


def _said(exc: GitError, app: App) -> str:
    """Git's reason; to a ghost, not git's words: the files git lists may include another
    ghost's private notes."""
    return str(exc) if app.ghost is None else "git refused (a person can see why with `git status`)"


def _pulled_commits(app: App, git: Git, before: str | None, after: str | None, own: set[str]) -> int:
    """How many commits the pull brought (not `own`, sync's own after merging); to a ghost,
    those that changed a note it may be told of: one that touched only another ghost's
    private notes is not counted (SPEC §3)."""
    if before is None or after is None or before == after:
        return 0
    if app.ghost is None:
        return int(git.run("rev-list", "--count", f"{before}..{after}")) - len(own)
    out = git.run("log", "--format=%x00%H", "--name-only", "--no-renames", f"{before}..{after}", "--", ".")
    blocks = [block.splitlines() for block in out.split("\0")[1:]]
    commits = [lines[1:] for lines in blocks if lines and lines[0] not in own]
    return sum(1 for files in commits if any(told(app, git, f) for f in files if f))


def _changed_notes(app: App, git: Git, before: str | None, after: str | None) -> list[str]:
    if before is None or after is None or before == after:
        return []
    out = git.run("diff", "--name-only", "--no-renames", before, after, "--", ".").splitlines()
    paths = [git.vault_path(p) for p in out]
    return [p for p in paths if p is not None and is_note_path(p) and may_be_told(app, p)]
