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
from collections import Counter

from vaultmem.models import CommitMade, CommitResult
from vaultmem.services.app import App
from vaultmem.services.review import GHOST_EMAIL, Range, digest, journal_added
from vaultmem.vault.changes import TRASH
from vaultmem.vault.git import WORKTREE, Git
from vaultmem.vault.journal import JOURNAL_DIR, PERSON, Entry

PEOPLE = ("person", "hand")  # writers whose commits are the person's own


def writer_of(by: list[str]) -> str:
    """The writer a changed note is committed as: a person's words in it make it theirs."""
    if not by or by[-1] == "hand":
        return "hand"
    return by[-1].split("/")[0]


def commit_pending(app: App, message: str | None = None) -> CommitResult:
    git = Git.of(app.root)
    base = git.resolve("HEAD") if git.has_head() else None
    rng = Range(base, WORKTREE, "HEAD..working tree")
    files = git.changes(base, WORKTREE)
    review = digest(app, git, rng, flags=False)
    by_path = {c.path: c for c in review.changes}
    entries = journal_added(git, rng, [f.path for f in files if f.path.startswith(JOURNAL_DIR + "/")])
    groups: dict[str, list[str]] = {}
    models: dict[str, Counter[str]] = {}
    kinds: dict[str, Counter[str]] = {}
    for f in files:
        change = by_path.get(f.path) or (by_path.get(f.old_path) if f.old_path else None)
        if f.path.startswith(JOURNAL_DIR + "/"):
            folder = f.path.split("/")[1]
            writer = "person" if folder == PERSON else folder
        elif change is not None:
            writer = writer_of(change.by)
            kinds.setdefault(writer, Counter())[change.kind] += 1
            for label in change.by:
                who, _, model = label.partition("/")
                if who == writer and model:
                    models.setdefault(writer, Counter())[model] += 1
        else:
            writer = _journaled(git, entries, f.path)
        if writer in app.config.people:
            writer = "person"  # one of the vault's people: the person's own commit
        paths = groups.setdefault(writer, [])
        paths.append(f.path)
        if f.old_path:
            paths.append(f.old_path)
    reasons: dict[str, list[str]] = {}
    for entry in entries:
        if entry.reason and entry.reason not in reasons.setdefault(entry.by or "person", []):
            reasons[entry.by or "person"].append(entry.reason)
    if app.ghost is not None:
        groups = {w: p for w, p in groups.items() if w == app.ghost}
    made: list[CommitMade] = []
    for writer in sorted(groups, key=lambda w: (w in PEOPLE, w)):
        paths = list(dict.fromkeys(groups[writer]))
        text = _message(writer, message, kinds.get(writer, Counter()), models.get(writer), reasons.get(writer))
        git.run("add", "-A", "--", *paths)  # pathspecs: relative to the vault, where git runs
        args = ["commit", "--quiet", "--no-verify", "-m", text]
        if writer not in PEOPLE:
            args += ["--author", f"{writer} <{writer}{GHOST_EMAIL}>"]
        git.run(*args, "--only", "--", *paths)
        sha = git.run("rev-parse", "HEAD").strip()
        made.append(CommitMade(sha, writer, text, paths))
    return CommitResult(made)


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


def _message(
    writer: str, message: str | None, kinds: Counter[str], models: Counter[str] | None, reasons: list[str] | None
) -> str:
    tally = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "journal"
    summary = f"memory({writer}): {tally}"
    lines = [message.strip() if message and message.strip() else summary]
    if message and message.strip():
        lines += ["", summary]
    trailers = []
    if writer not in PEOPLE:
        trailers.append(f"Vaultmem-Ghost: {writer}")
    for model in sorted(models or {}):
        trailers.append(f"Vaultmem-Model: {model}")
    for reason in (reasons or [])[:3]:
        trailers.append(f"Vaultmem-Reason: {' '.join(reason.split())[:200]}")
    if trailers:
        lines += ["", *trailers]
    return "\n".join(lines)
