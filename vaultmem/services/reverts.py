"""`vaultmem revert`: undo an agent's changes as a new change (issue 25, item 6).

Never rewrites history: the undo is new writes, journaled as the caller's. A commit's
change to a note is taken back by a three-way merge — the commit's version as base, the
note now as ours, the version before the commit as theirs — the body by `git merge-file`,
the front matter key by key; bookkeeping (`updated`, `version`, `hash`) is written fresh.
Where a later edit, a person's especially, touched the same lines or keys, the note is a
conflict: left exactly as it is, listed, and the command exits 4. A note the commit created
is deleted (to the trash) unless it changed since; one it deleted is put back where it was;
one it moved goes back (its links rewritten, as `note move` does).

Forms: `revert COMMIT`; `revert NOTE --to REV` (the note as at REV, unless a person changed
it since); `revert --by GHOST [--since REV]` (every commit of that ghost, newest first).
`--dry-run` changes nothing and says what would happen, with the digest of the commits.
"""

from __future__ import annotations

from typing import Any

from vaultmem.clock import note_time
from vaultmem.clock import now as utc_now
from vaultmem.errors import InvalidInput, NotFound
from vaultmem.index.statedb import NoteRecord
from vaultmem.models import RevertResult
from vaultmem.services.app import App, batched_writes
from vaultmem.services.lookup import find_note, location_of
from vaultmem.services.review import GHOST_EMAIL, Range, digest, is_note_path
from vaultmem.services.revisions import BOOKKEEPING, record_written
from vaultmem.services.seen import History, seen_commit, seen_or_before, seen_parent
from vaultmem.vault import store
from vaultmem.vault.changes import CHURN
from vaultmem.vault.git import Git
from vaultmem.vault.layout import classify
from vaultmem.vault.note import REPEATED_KEY, ParsedNote, body_hash, parse_note
from vaultmem.vault.writer import REMOVE, edit_note_text, normalize_body


@batched_writes
def revert(
    app: App, target: str | None, to: str | None, by: str | None, since: str | None, dry_run: bool = False
) -> RevertResult:
    git = Git.of(app.root)
    app.catch_up()  # where each note is now (a move since the commit)
    if by is None and since is not None and target is None:
        by = app.ghost  # `revert --ghost G --since REF`: G's own commits since REF
    app.reason = app.reason or "revert " + " ".join(x for x in (target, to and f"--to {to}", by and f"--by {by}") if x)
    mine = History(app, git) if app.ghost is not None else None  # a ghost's history, read once
    if to is not None:
        if target is None:
            raise InvalidInput("--to needs the note to bring back: revert NOTE --to REV")
        return _note_to(app, git, target, seen_commit(app, git, to, mine), dry_run)
    none = NotFound(f"no commit {target!r} of notes you may change; nothing reverted")
    if by is not None:
        start = seen_or_before(app, git, since, mine) if since else None
        spec = f"{start}..HEAD" if start else "HEAD"
        commits = [c.sha for c in git.log([f"--author={by}{GHOST_EMAIL}", spec])]
        if mine is not None:  # its own history: not another ghost's private commits
            commits = [c for c in commits if mine.known(c) == c]
        # one message whether there are none or only some of notes hidden from the caller
        none = NotFound(f"no commit of {by} {'since ' + since if since else 'in this history'} of notes you may change")
        if not commits:
            raise none
    elif target is not None:
        commits = [seen_commit(app, git, target, mine)]
    else:
        raise InvalidInput("name what to undo: a COMMIT, a NOTE with --to REV, or --by GHOST [--since REV]")
    # Every commit is planned before anything is written. Of a commit, the caller undoes the
    # changes of notes it may change, the only ones it can know of: a commit that also
    # touched notes hidden from it must look to it as one that did not (SPEC §3), and one
    # that touched none it may change as no commit at all.
    # A person ($VAULTMEM_PERSON) may change every placed note, so what it cannot undo is a
    # file in no ghost's, project's or shared folder (nobody's note, which lint names): told,
    # not left to find it undone. Any other caller hears of no change it may not make.
    unplaced: list[str] | None = [] if app.person is not None else None
    plans = [_plan(app, git, sha, unplaced=unplaced) for sha in commits]
    if not any(plans) and not unplaced:
        raise none
    restored: list[dict[str, Any]] = []
    conflicts: list[dict[str, Any]] = [
        {"id": "", "path": path, "reason": UNPLACED_REASON} for path in dict.fromkeys(unplaced or ())
    ]
    left: Left = {}  # a dry run writes nothing: what each step would leave, for the steps after
    for plan in plans:  # newest first: each undo sees the notes as the later ones left them
        for step in plan:
            outcome = _undo(app, git, *step, dry_run, left if dry_run else None)
            (conflicts if "reason" in outcome else restored).append(outcome)
    relinked = {path for outcome in restored for path in outcome.pop("links", ())}
    for conflict in conflicts:  # its text stayed, but a move back rewrote its links: say so
        if conflict["path"] in relinked and conflict["reason"].endswith(LEFT):
            conflict["reason"] = conflict["reason"][: -len(LEFT)] + LEFT_RELINKED
    review = None
    if dry_run:
        parent = seen_parent(app, git, commits[-1], mine)
        review = digest(app, git, Range(parent, commits[0], f"{(parent or 'root')[:8]}..{commits[0][:8]}"))
    return RevertResult(dry_run, restored, conflicts, review)


LEFT = "; left as it is"
LEFT_RELINKED = "; its text left as it is, its links to a note moved back rewritten to follow it"
UNPLACED_REASON = "in no ghost's, project's or shared folder (lint names it): move it to one to undo it; not undone"
Step = tuple[str | None, bytes | None, str | None, bytes | None]  # before path, bytes; after path, bytes
Left = dict[str, tuple[str | None, bytes | None]]  # note id -> its path and bytes (None: deleted)


def _plan(app: App, git: Git, sha: str, only: str | None = None, unplaced: list[str] | None = None) -> list[Step]:
    """The note changes of one commit (`only`: of the note with that id) that the caller
    may make: a change whose note, before or after, is at a path it may not write is left
    out, never named; `unplaced` (a person's) gets the paths of those in no folder of anyone."""
    parent = git.first_parent(sha)
    steps: list[Step] = []
    for f in git.changes(parent, sha):
        if not (is_note_path(f.path) or is_note_path(f.old_path)):
            continue
        before_path = f.old_path or (f.path if f.status != "A" else None)
        after_path = f.path if f.status != "D" else None
        if f.old_path and not app.can_write(classify(f.old_path)) and app.can_write(classify(f.path)):
            # it came into the caller's view here (a person published bob's note): created,
            # as its history tells it (history.visible_steps), not a change hidden from it
            before_path = None
        if before_path and before_path.startswith(".trash/"):
            before_path = None
        if after_path and after_path.startswith(".trash/"):
            after_path = None
        before = git.contents(parent, [before_path]).get(before_path) if parent and before_path else None
        after = git.contents(sha, [after_path]).get(after_path) if after_path else None
        if only is not None:
            shown = _parsed(after_path, after) or _parsed(before_path, before)
            if shown is None or shown.id != only:
                continue
        refused = [path for path in (before_path, after_path) if path and not app.can_write(classify(path))]
        if refused:
            if unplaced is not None:
                unplaced.extend(path for path in refused if not classify(path).placed)
            continue
        steps.append((before_path, before, after_path, after))
    return steps


def _now(app: App, shown: ParsedNote | None, after_path: str | None) -> NoteRecord | None:
    """The note the change made, now: of those holding its id, one the caller may read
    (another ghost's copy of the id must change nothing), the one at the commit's path first."""
    if shown is None or not shown.id or shown.id_derived:
        return None
    holders = [r for r in app.db.by_id(shown.id) if app.can_read(location_of(r))]
    return next((r for r in holders if r.path == after_path), holders[0] if holders else None)


def _undo(
    app: App,
    git: Git,
    before_path: str | None,
    before: bytes | None,
    after_path: str | None,
    after: bytes | None,
    dry_run: bool,
    left: Left | None = None,
) -> dict[str, Any]:
    """Take back one note's change from (before_path, before) to (after_path, after).
    `left` (a dry run of several steps): each note's path and bytes as the steps before
    would have left them, read in place of the file and kept up to date here."""
    from vaultmem.services.moves import apply_moves
    from vaultmem.services.notes import delete_note

    note_after = _parsed(after_path, after)
    note_before = _parsed(before_path, before)
    shown = note_after or note_before
    note_id = shown.id if shown else ""
    now_rec = _now(app, shown, after_path)
    if now_rec is not None and not app.can_write(location_of(now_rec)):
        # moved since where the caller may not write: for it the note is gone
        return {"id": note_id, "path": after_path or before_path, "reason": "not found now; nothing to undo"}
    now_path = now_rec.path if now_rec is not None else after_path
    read = _read(app, now_path) if now_path else None
    current, stamp = read if read is not None else (None, None)
    if dry_run and left is not None and note_id in left:
        now_path, current = left[note_id]
    if note_before is None and note_after is not None:  # created: delete, unless changed since
        if current is None:
            return {"id": note_id, "path": after_path, "action": "already gone"}
        if not _same_words(current, after):
            return {"id": note_id, "path": now_path, "reason": "created by the commit and changed since; kept"}
        if not dry_run:
            delete_note(app, now_path or "")
        if left is not None:
            left[note_id] = (now_path, None)
        return {"id": note_id, "path": now_path, "action": "deleted"}
    if note_before is not None and note_after is None:  # deleted: put it back
        if current is not None:
            return {"id": note_id, "path": now_path, "action": "already there"}
        assert before_path is not None and before is not None
        outcome = _put_back(app, note_id, before_path, before, note_before.version, dry_run)
        if left is not None and "reason" not in outcome:
            left[note_id] = (before_path, before)
        return outcome
    if note_before is None or note_after is None or current is None or now_path is None:
        return {"id": note_id, "path": now_path or after_path, "reason": "not found now; nothing to undo"}
    merged = _merge(git, note_before, note_after, current, now_path)
    if isinstance(merged, str):
        return {"id": note_id, "path": now_path, "reason": merged}
    action = "unchanged since" if merged is None else "restored"
    version = _version_of(current) + 1
    final = _bump(merged, version) if merged is not None else current
    if left is not None:
        left[note_id] = (now_path, final)  # as the write below leaves it, its version raised
    if merged is not None and not dry_run and stamp is not None:
        store.replace_file(app.root, now_path, final, stamp)  # a Conflict if it changed since it was read
        record_written(app, now_path, final, version)
    if before_path and after_path and before_path != after_path and now_path == after_path:
        if (app.root / before_path).exists():
            return {"id": note_id, "path": now_path, "reason": f"moved by the commit; {before_path} is taken now"}
        # its links follow it back (those the caller may see are named): a dry run says which
        relinked = apply_moves(app, {now_path: before_path}, dry_run=dry_run).links_updated
        if left is not None:
            left[note_id] = (before_path, left[note_id][1])
        return {"id": note_id, "path": before_path, "action": f"moved back from {now_path}", "links": relinked}
    return {"id": note_id, "path": now_path, "action": action}


def _put_back(app: App, note_id: str, path: str, data: bytes, version: int, dry_run: bool) -> dict[str, Any]:
    """A note the commit deleted, written again where it was (unless that path is taken)."""
    if (app.root / path).exists():
        return {"id": note_id, "path": path, "reason": "deleted by the commit; its path is taken now"}
    if not dry_run:
        store.create_file(app.root, path, data)
        record_written(app, path, data, version)
    return {"id": note_id, "path": path, "action": "restored"}


def _parsed(path: str | None, data: bytes | None) -> ParsedNote | None:
    if path is None or data is None:
        return None
    parsed = parse_note(path, data)
    return parsed if isinstance(parsed, ParsedNote) else None


def _read(app: App, path: str) -> tuple[bytes, store.FileStamp] | None:
    try:
        return store.read_file(app.root, path)
    except (NotFound, InvalidInput):
        return None


def _merge(git: Git, before: ParsedNote, after: ParsedNote, current: bytes, path: str) -> bytes | str | None:
    """The note now with the commit's change taken back: bytes; None when nothing is left to
    undo; a reason string when a later change touched the same lines or keys."""
    now = _parsed(path, current)
    if now is None:
        return "unreadable now; left as it is"
    if any(p.code == REPEATED_KEY for p in now.problems):
        return "its front matter sets a key more than once now (see `vaultmem lint`); left as it is"
    try:
        text = current.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8 now (edited by hand?); left as it is"
    body, conflicts = git.merge_text(now.body, after.body, before.body)
    if conflicts:
        return f"{conflicts} part(s) of the body changed since by someone else; left as it is"
    changes: dict[str, Any] = {}
    clashing = []
    for key in dict.fromkeys([*after.front_matter, *before.front_matter]):
        if key in CHURN:
            continue
        base, ours, theirs = after.front_matter.get(key), now.front_matter.get(key), before.front_matter.get(key)
        if base == theirs:
            continue  # the commit did not change it
        if ours == base:
            changes[key] = REMOVE if theirs is None and key not in before.front_matter else theirs
        elif ours != theirs:
            clashing.append(key)
    if clashing:
        return f"changed since: {', '.join(clashing)}; left as it is"
    if body == now.body and not changes:
        return None
    edited = edit_note_text(text, now.front_matter, changes, body if body != now.body else None)
    return edited.text.encode("utf-8")


def _version_of(data: bytes) -> int:
    parsed = parse_note("x.md", data)
    return parsed.version if isinstance(parsed, ParsedNote) else 0


def _same_words(a: bytes | None, b: bytes | None) -> bool:
    """The same note but for what every vaultmem write sets (`_bump`): a revert of a note's
    later edits raises its version, and the note its creation made is still that note."""
    if a == b or a is None or b is None:
        return a == b
    x, y = parse_note("x.md", a), parse_note("x.md", b)
    if not (isinstance(x, ParsedNote) and isinstance(y, ParsedNote)):
        return False

    def words(n: ParsedNote) -> tuple[dict[str, object], str]:
        return {k: v for k, v in n.front_matter.items() if k not in BOOKKEEPING}, normalize_body(n.body)

    return words(x) == words(y)


def _bump(data: bytes, version: int) -> bytes:
    """The bookkeeping of a vaultmem write: version, updated, hash of the body."""
    parsed = parse_note("x.md", data)
    if not isinstance(parsed, ParsedNote):
        return data
    changes = {"version": version, "updated": note_time(utc_now()), "hash": body_hash(normalize_body(parsed.body))}
    return edit_note_text(data.decode("utf-8"), parsed.front_matter, changes, None).text.encode("utf-8")


def _note_to(app: App, git: Git, ref: str, rev: str, dry_run: bool) -> RevertResult:
    """One note back as it was at `rev`: every later change taken back, newest first; a
    change made by hand since is a conflict (a person's words are never replaced)."""
    from vaultmem.services.history import visible_steps

    app.catch_up()
    rec = find_note(app.db, ref, app.can_write)
    later = [s for s in visible_steps(app, git, rec.path) if not git.is_ancestor(s.sha, rev)]
    people = [s for s in later if not s.email.endswith(GHOST_EMAIL)]
    if people:
        listed = ", ".join(f"{s.sha[:10]} by {s.author}" for s in people[:5])
        reason = f"a person changed it since: {listed}"
        return RevertResult(dry_run, [], [{"id": rec.id, "path": rec.path, "reason": reason}])
    restored: list[dict[str, Any]] = []
    conflicts: list[dict[str, Any]] = []
    left: Left = {}  # a dry run writes nothing: what each step would leave
    for step in later:
        for change in _plan(app, git, step.sha, only=rec.id or ""):
            outcome = _undo(app, git, *change, dry_run, left if dry_run else None)
            (conflicts if "reason" in outcome else restored).append(outcome)
        if conflicts:
            break
    return RevertResult(dry_run, restored, conflicts)
