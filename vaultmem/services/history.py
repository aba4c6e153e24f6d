"""`vaultmem history NOTE` and `get NOTE --at REV`: a note's past, from git (issue 25, item 5).

The versions of one note across renames (`git log --follow`), newest first, with the
uncommitted change on top: when, who (the journal's writers of that commit, else its
author: a ghost's `<ghost>@vaultmem`, anyone else's a person's), and what changed, as
`review` says it (vault/changes.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from vaultmem.errors import NotFound
from vaultmem.models import HistoryResult, Links, NoteDocument, Version
from vaultmem.services.app import App
from vaultmem.services.lookup import find_note
from vaultmem.services.review import GHOST_EMAIL, Range, journal_between, writers
from vaultmem.services.seen import seen_or_before
from vaultmem.vault.changes import Side, describe
from vaultmem.vault.comments import read as comments_of
from vaultmem.vault.git import WORKTREE, Git
from vaultmem.vault.layout import classify
from vaultmem.vault.note import ParsedNote, parse_note


@dataclass(frozen=True, slots=True)
class Step:
    """One commit of a note's history: the note's path in it and before it."""

    sha: str
    parent: str | None
    author: str
    email: str
    at: str
    path: str
    old_path: str | None  # where it was before this commit (a rename), else None
    status: str  # A, M, D, R


def steps(git: Git, path: str, rev: str = "HEAD") -> list[Step]:
    """The commits up to `rev` that changed the note now at `path`, newest first, renames
    followed: git's, and where git took the note for created there, a rename Git.changes
    finds by the note's id (a small note moved and edited in one commit)."""
    found = _logged(git, path, rev)
    last = found[-1] if found else None
    if last is None or last.status != "A" or last.parent is None:
        return found
    moved = [c for c in git.changes(last.parent, last.sha) if c.status == "R" and c.path == last.path]
    if not moved or moved[0].old_path is None:
        return found
    found[-1] = Step(last.sha, last.parent, last.author, last.email, last.at, last.path, moved[0].old_path, "R")
    return found + steps(git, moved[0].old_path, last.parent)


def _logged(git: Git, path: str, rev: str) -> list[Step]:
    """The commits `git log --follow` gives for `path` up to `rev`, newest first."""
    fmt = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI"
    out = git.run("log", "--follow", "-M", "--name-status", "-z", f"--format={fmt}", rev, "--", path)
    found: list[Step] = []
    for block in out.split("\x1e"):
        if not block.strip("\0\n"):
            continue
        block = block.lstrip("\0\n")
        cut = min((i for i in (block.find("\0"), block.find("\n")) if i >= 0), default=len(block))
        head, rest = block[:cut], block[cut + 1 :]
        fields = head.split("\x1f")
        if len(fields) < 5:
            continue
        sha, parents, author, email, at = fields[:5]
        status_fields = [x for x in rest.strip("\n").split("\0") if x]
        if not status_fields:
            continue
        status = status_fields[0][:1]
        if status == "C" and len(status_fields) >= 3:
            # `--follow` took the note for a copy of another note (a text like one of bob's
            # private notes): the note began here; what came before is the other note's
            new = git.vault_path(status_fields[2])
            if new is not None:
                found.append(Step(sha, parents.split()[0] if parents else None, author, email, at, new, None, "A"))
            break
        if status == "R" and len(status_fields) >= 3:
            old, new = git.vault_path(status_fields[1]), git.vault_path(status_fields[2])
        else:
            old, new = None, git.vault_path(status_fields[1]) if len(status_fields) > 1 else None
        if new is None:
            continue
        found.append(Step(sha, parents.split()[0] if parents else None, author, email, at, new, old, status))
    return found


def visible_steps(app: App, git: Git, path: str) -> list[Step]:
    """The note's commits the caller may see, newest first: its history stops where the
    note came from a place the caller may not read (another ghost's private notes, a
    project it is not in), so no earlier text or name of it shows. A note renamed since
    the last commit is followed from its committed name."""
    if not git.has_head():
        return []
    logged = path
    if not git.run("ls-tree", "--name-only", "HEAD", "--", path).strip():
        moved = [c for c in git.changes(git.resolve("HEAD"), WORKTREE) if c.path == path and c.old_path]
        logged = moved[0].old_path if moved and moved[0].old_path else path
    out: list[Step] = []
    for step in steps(git, logged):
        if not app.can_read(classify(step.path)):
            break
        if step.old_path is not None and not app.can_read(classify(step.old_path)):
            # it came into view here: as far as the caller knows, created here
            out.append(Step(step.sha, None, step.author, step.email, step.at, step.path, None, "A"))
            break
        out.append(step)
    return out


def note_history(app: App, ref: str) -> HistoryResult:
    app.catch_up()
    rec = find_note(app.db, ref, app.can_read)
    git = Git.of(app.root)
    versions: list[Version] = []
    history = visible_steps(app, git, rec.path)
    head_path = history[0].path if history else None
    if git.has_head():
        pending = _uncommitted(app, git, rec.path, head_path)
        if pending is not None:
            versions.append(pending)
    for step in history:
        versions.append(_version(git, step))
    return HistoryResult(rec.id or "", rec.path, versions)


def _uncommitted(app: App, git: Git, path: str, head_path: str | None) -> Version | None:
    """The change not yet committed, if any: the note now against its last commit."""
    base = git.resolve("HEAD")
    old = git.contents(base, [head_path]).get(head_path) if head_path else None
    new = git.contents(WORKTREE, [path]).get(path)
    change = describe(Side(head_path if old is not None else None, old), Side(path, new))
    if change is None:
        return None
    by = writers(change, journal_between(git, Range(base, WORKTREE, "")), old, new, {})
    return Version(None, None, by, None, path, change.kind, change.summary())


def _version(git: Git, step: Step) -> Version:
    old_path = step.old_path or (step.path if step.status != "A" else None)
    old = git.contents(step.parent, [old_path]).get(old_path) if step.parent and old_path else None
    new = git.contents(step.sha, [step.path]).get(step.path) if step.status != "D" else None
    change = describe(Side(old_path if old is not None else None, old), Side(step.path, new))
    who = step.email.removesuffix(GHOST_EMAIL) if step.email.endswith(GHOST_EMAIL) else "hand"
    kind, summary, by = "edited", "", [who]
    if change is not None:
        kind, summary = change.kind, change.summary()
        journal = journal_between(git, Range(step.parent, step.sha, ""))
        by = writers(change, journal, old, new, {step.path: [who]})
    return Version(step.sha, step.at, by, f"{step.author} <{step.email}>", step.path, kind, summary)


def note_at(app: App, ref: str, rev: str) -> NoteDocument:
    """The note as it was at `rev` (its path then, renames followed): `get --at`."""
    app.catch_up()
    rec = find_note(app.db, ref, app.can_read)
    git = Git.of(app.root)
    at = seen_or_before(app, git, rev)
    missing = NotFound(f"{rec.path} did not exist at {rev}")
    if at is None:  # before the caller's history began: none of the notes it reads existed
        raise missing
    for step in visible_steps(app, git, rec.path):
        if not git.is_ancestor(step.sha, at):
            continue
        data = git.contents(at, [step.path]).get(step.path)
        parsed = parse_note(step.path, data) if data is not None else None
        if not isinstance(parsed, ParsedNote):
            break
        fm = parsed.front_matter
        return NoteDocument(
            note={**fm, "path": step.path},
            body=parsed.body,
            tags=list(parsed.tags),
            links=Links([], [], []),
            comments=[c.to_dict() for c in comments_of(fm.get("comments"))],
            part={"at": at},
        )
    raise missing
