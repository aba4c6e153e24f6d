"""`vaultmem commit`: pending memory changes as one git commit per writer (issue 25, item 7).

Each ghost's changes are committed with the ghost as author (`alice <alice@vaultmem>`) and
the person's own git identity as committer, with its journal lines, a message that says
what it did (`memory(alice): 2 created, 1 validated, 1 deleted`) and trailers
(`Vaultmem-Ghost:`, `Vaultmem-Model:`, `Vaultmem-Reason:`), so `git log --author=alice`
shows alice's memory changes only. Changes made through vaultmem without a ghost, and
edits made by hand (a file that is not what vaultmem last wrote), are committed as the
person's. What a person already staged for other files stays staged and out of these
commits. Run with a ghost, it commits that ghost's own changes only.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.errors import Conflict
from vaultmem.models import CommitMade, CommitResult
from vaultmem.paths import GIT_INDEX_LOCK, GIT_JOURNAL_ASIDE
from vaultmem.services.app import App
from vaultmem.services.review import GHOST_EMAIL, Range, digest, is_note_path, journal_added
from vaultmem.shown import UNSAFE
from vaultmem.vault.changes import TRASH
from vaultmem.vault.git import WORKTREE, Git, GitError
from vaultmem.vault.journal import JOURNAL_DIR, PERSON, Entry
from vaultmem.vault.journal_aside import left_aside, put_back
from vaultmem.vault.writers import held

PEOPLE = ("person", "hand")  # writers whose commits are the person's own


def writer_of(by: list[str]) -> str:
    """The writer a changed note is committed as: a person's words in it make it theirs,
    a ghost's write after them included (its commit would carry them under its name)."""
    if not by or "hand" in by:
        return "hand"
    return by[-1].split("/")[0]


@dataclass
class Pending:
    """What `commit` would do: the changed files by writer, and what it holds back."""

    groups: dict[str, list[str]] = field(default_factory=dict)  # writer -> paths (old paths of moves too)
    kinds: dict[str, Counter[str]] = field(default_factory=dict)
    models: dict[str, Counter[str]] = field(default_factory=dict)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    # writer -> the other ghosts whose words its commit carries (a ghost's write, then a
    # person's edit on top, is the person's commit): named as co-authors, not left out
    helpers: dict[str, set[str]] = field(default_factory=dict)
    held: list[dict[str, object]] = field(default_factory=list)


def pending_changes(app: App, git: Git, every_writer: bool = False) -> Pending:
    """The uncommitted memory changes grouped by who made them (module docstring); with a
    ghost, that ghost's own only (`every_writer`: and the person's, `hand`, too: what a
    ghost's sync must not merge over)."""
    base = git.resolve("HEAD") if git.has_head() else None
    rng = Range(base, WORKTREE, "HEAD..working tree")
    files = [f for f in git.changes(base, WORKTREE) if _memory(f.path) or _memory(f.old_path)]
    review = digest(app, git, rng, flags="blocking")
    by_path = {c.path: c for c in review.changes}
    entries = journal_added(git, rng, [f.path for f in files if f.path.startswith(JOURNAL_DIR + "/")])
    out = Pending()
    for f in files:
        change = by_path.get(f.path) or (by_path.get(f.old_path) if f.old_path else None)
        if change is not None and any(flag.blocking for flag in change.flags):
            # a secret, a note moved across scopes by hand: a person decides (review --check)
            out.held.append({"path": change.path, "reasons": [x.reason for x in change.flags if x.blocking]})
            continue
        if f.path.startswith(JOURNAL_DIR + "/"):
            folder = f.path.split("/")[1]
            writer = "person" if folder == PERSON else folder
        elif change is not None:
            writer = writer_of(change.by)
            if writer in app.config.people:
                writer = "person"  # one of the vault's people: the person's own commit
            out.kinds.setdefault(writer, Counter())[change.kind] += 1
            for label in change.by:
                who, _, model = label.partition("/")
                if who == writer and model:
                    out.models.setdefault(writer, Counter())[model] += 1
                elif who not in (writer, *PEOPLE, *app.config.people):
                    out.helpers.setdefault(writer, set()).add(who)
        else:
            writer = _journaled(git, entries, f.path)
        if writer in app.config.people:
            writer = "person"  # one of the vault's people: the person's own commit
        paths = out.groups.setdefault(writer, [])
        paths.append(f.path)
        if f.old_path:
            paths.append(f.old_path)
    for entry in entries:
        if entry.reason and entry.reason not in out.reasons.setdefault(entry.by or "person", []):
            out.reasons[entry.by or "person"].append(entry.reason)
    if app.ghost is not None:
        out.groups = {w: p for w, p in out.groups.items() if w == app.ghost or (every_writer and w == "hand")}
    return out


def commit_pending(app: App, message: str | None = None, pending: Pending | None = None) -> CommitResult:
    git = Git.of(app.root)
    if pending is None:  # sync's own commit: sync put them back before it planned it
        put_back_left_aside(app, git)
    refuse_mid_merge(git)
    plan = pending if pending is not None else pending_changes(app, git)
    made: list[CommitMade] = []
    for writer in sorted(plan.groups, key=lambda w: (w in PEOPLE, w)):
        paths = list(dict.fromkeys(plan.groups[writer]))
        text = _message(
            writer,
            message,
            plan.kinds.get(writer, Counter()),
            plan.models.get(writer),
            plan.reasons.get(writer),
            plan.helpers.get(writer),
        )
        author = None if writer in PEOPLE else f"{writer} <{writer}{GHOST_EMAIL}>"
        sha = commit_paths(git, paths, text, author)
        made.append(CommitMade(sha, writer, text, paths))
    return CommitResult(made, plan.held)


def put_back_left_aside(app: App, git: Git) -> None:
    """Journal lines a sync killed mid-merge left aside, put back: without them another
    ghost's notes read as a person's edits, and a person's commit would take them as its
    own. The writers' lock alone, and only when there are any (a commit or a sync's start)."""
    if left_aside(git):
        with held(app.root, exclusive=True):
            put_back_aside(app, git)


def put_back_aside(app: App, git: Git) -> None:
    """The journal lines set aside around a merge, appended to their files again (vault/
    journal_aside.py). The caller holds the writers' lock alone."""
    dropped = put_back(git)
    if dropped:  # the record is a file in the git dir: anyone with the clone may have written it
        app.notice(
            f"warning: {dropped} of the entries of journal lines set aside ({GIT_JOURNAL_ASIDE} in the git dir) "
            f"named no journal file of this vault (an absolute path, `..`, a NUL, or outside {JOURNAL_DIR}/): "
            "dropped, nothing written for them"
        )


def _memory(path: str | None) -> bool:
    """A file `commit` takes: a note (the trash included, where deletes go) or the journal.
    Anything else in the vault's folder — an attachment, the config — is the person's to commit."""
    return bool(path) and (is_note_path(path) or str(path).startswith(JOURNAL_DIR + "/"))


def refuse_mid_merge(git: Git) -> None:
    """A merge, rebase or cherry-pick in progress is a person's to finish: committing notes
    then would mark conflicts resolved. A git stopped mid-way is named first: its merge is
    not one to finish (_refuse_locked)."""
    git_dir = Path(git.run("rev-parse", "--absolute-git-dir").strip())
    _refuse_locked(git, git_dir)
    unmerged = git.run("ls-files", "-u", "--", ".").strip()
    busy = [name for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD") if _ref(git, name)]
    if (git_dir / "rebase-merge").exists() or (git_dir / "rebase-apply").exists():
        busy.append("a rebase")
    if unmerged or busy:
        what = ", ".join(busy) or "unmerged files"
        raise Conflict(f"git is in the middle of {what}: finish it (resolve, then git commit) before vaultmem commit")


def _refuse_locked(git: Git, git_dir: Path) -> None:
    """git's index lock left in place: another git runs, or one was killed mid-way. A merge
    killed so leaves notes half-merged in the work tree; committing them as they are (what
    a person does once they delete the lock) can record the merge without the rest of the
    teammate's edits, so the message says to set them aside first (`git stash` keeps them,
    a person's own edits since included). Before, git's own words came back ("git reset
    failed: remove the file manually to continue.") without naming the file."""
    lock = git_dir / GIT_INDEX_LOCK
    try:
        since = lock.stat().st_mtime
    except OSError:
        return
    age = max(0, int(time.time() - since))
    raise Conflict(
        f"git's index is locked ({os.path.relpath(lock, git.root)}, made {age} s ago): another git command is "
        "running in this vault, or one was stopped mid-way. If none runs, remove the lock; a stopped merge "
        "may have left notes half-merged (`git status` lists them): `git merge --abort` if git is mid-merge, "
        "else `git stash` them, then sync again. Committing them as they are can drop the other side's edits"
    )


def _ref(git: Git, name: str) -> bool:
    try:
        git.run("rev-parse", "-q", "--verify", name)
        return True
    except GitError:
        return False


def commit_paths(git: Git, paths: list[str], message: str, author: str | None) -> str:
    """One commit of `paths` as they are in the working tree, made through an index of our
    own: what the person staged for other files stays staged and out of it; the committed
    paths' entries in their index then match the new commit."""
    import tempfile

    head = git.resolve("HEAD") if git.has_head() else None
    env: dict[str, str] = {}
    if author is not None:
        name, _, email = author.partition(" <")
        env.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email.rstrip(">"))
    with tempfile.TemporaryDirectory(prefix="vaultmem-commit-") as tmp:
        index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        if head is not None:
            git.run("read-tree", head, env=index)
        git.run("add", "-A", "--", *paths, env=index)
        tree = git.run("write-tree", env=index).strip()
    parents = ["-p", head] if head is not None else []
    sha = git.run("commit-tree", tree, *parents, "-F", "-", input=message.encode("utf-8"), env=env).strip()
    git.run("update-ref", "-m", "vaultmem commit", "HEAD", sha, *([head] if head is not None else []))
    known = [p for p in paths if git.run("ls-files", "--", p).strip() or _in_head(git, p)]
    if known:
        _index_as_committed(git, known, sha)
    return sha


INDEX_WAIT = (20, 0.25)  # tries, seconds apart: a person's `git status` holds the lock for ms


def _index_as_committed(git: Git, paths: list[str], sha: str) -> None:
    """The person's index entries of `paths` as just committed. Left as they were, the
    index would hold the old versions: `git status` would show the commit staged to be
    undone, and a person's next `git commit` would undo it. The index lock a person's git
    holds a moment is waited out; one held longer is reported."""
    tries, pause = INDEX_WAIT
    for attempt in range(tries):
        try:
            git.run("reset", "-q", "--", *paths)
            return
        except GitError as exc:
            if GIT_INDEX_LOCK not in exc.stderr:
                raise
            if attempt == tries - 1:
                raise Conflict(
                    f"committed {sha[:10]}, but git's index stayed locked ({exc}): once no git runs, "
                    "`git reset -q` — until then `git status` shows the committed notes as staged to be "
                    "undone, and a `git commit` would undo them"
                ) from None
            time.sleep(pause)


def _in_head(git: Git, path: str) -> bool:
    return bool(git.run("ls-tree", "--name-only", "HEAD", "--", path).strip())


def _journaled(git: Git, entries: list[Entry], path: str) -> str:
    """Who wrote a changed file no note change accounts for (a write that changed only its
    bookkeeping, a file in the trash): its last journal line, if the file is still what
    that line says; else a person, by hand."""
    if path.startswith(TRASH) and path.count("/") >= 2:
        # a note a write deleted lies in the trash: its writer journaled the original path gone
        gone = [e for e in entries if e.path == path.split("/", 2)[2] and e.hash is None]
        return (gone[-1].by or "person") if gone else "hand"
    mine = [e for e in entries if e.path == path]
    if not mine:
        return "hand"
    data = git.contents(WORKTREE, [path]).get(path)
    digest_now = hashlib.sha256(data).hexdigest() if data is not None else None
    return (mine[-1].by or "person") if mine[-1].hash == digest_now else "hand"


def _one_line(text: str) -> str:
    """A client's model name or reason as a trailer: one plain line (a newline would add
    trailers of its own; ESC would steer `git log` in a terminal), what `clean` would show
    escaped (vaultmem/shown.py) made a space."""
    return " ".join(UNSAFE.sub(" ", text).split())[:200]


def _message(
    writer: str,
    message: str | None,
    kinds: Counter[str],
    models: Counter[str] | None,
    reasons: list[str] | None,
    helpers: set[str] | None = None,
) -> str:
    tally = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "journal"
    summary = f"memory({writer}): {tally}"
    lines = [message.strip() if message and message.strip() else summary]
    if message and message.strip():
        lines += ["", summary]
    trailers = []
    if writer not in PEOPLE:
        trailers.append(f"Vaultmem-Ghost: {writer}")
    for model in sorted({_one_line(m) for m in models or {}}):
        trailers.append(f"Vaultmem-Model: {model}")
    for reason in (reasons or [])[:3]:
        trailers.append(f"Vaultmem-Reason: {_one_line(reason)}")
    for ghost in sorted(helpers or ()):
        trailers.append(f"Co-authored-by: {ghost} <{ghost}{GHOST_EMAIL}>")
    if trailers:
        lines += ["", *trailers]
    return "\n".join(lines)
