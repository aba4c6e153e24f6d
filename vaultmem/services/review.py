"""`vaultmem review`: a semantic digest of memory changes, for a person (issue 25, item 2).

A range of the vault's git history — by default everything not yet committed — read as
what happened to each note (vault/changes.py), who did it and what needs a person:

- who: the write journal's lines the range added (vault/journal.py) name the ghost, model
  and reason of every vaultmem write; a note whose bytes are not what vaultmem last wrote
  was edited by hand (`hand`). Commits without journal lines fall back to their author
  (`<ghost>@vaultmem` is a ghost's, see services/commits.py).
- flags: a secret in added text and a note moved across scopes by hand block
  (`review --check` exits 1 on them); an agent changing lines a person wrote, a delete or
  move of a note others link to, a new dangling link, a near-duplicate new note, a new fact
  without a source and an expiry removed are shown for a person to judge.

A ghost sees only the changes of notes it may read, as it sees everything else: a note
moved out of its view is deleted for it, one moved into it created.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import timedelta

from vaultmem.clock import iso
from vaultmem.clock import now as utc_now
from vaultmem.errors import InvalidInput
from vaultmem.index.resolve import name_key
from vaultmem.models import Change, Flag, ReviewResult
from vaultmem.services.app import App
from vaultmem.services.documents import edges_in
from vaultmem.services.revisions import BOOKKEEPING as WRITE_STAMPS
from vaultmem.services.seen import (
    History,
    readable,
    seen_at,
    seen_before,
    seen_commit,
    seen_or_before,
    seen_parent,
)
from vaultmem.services.twins import Twins
from vaultmem.vault.attachments import Attachments
from vaultmem.vault.changes import NoteChange, Side, describe, scope_moved
from vaultmem.vault.git import STAGED, WORKTREE, Git, GitError
from vaultmem.vault.journal import JOURNAL_DIR, Entry, parse_lines, read_all, stamp
from vaultmem.vault.layout import classify
from vaultmem.vault.secrets import find_secrets, key_lines

GHOST_EMAIL = "@vaultmem"  # the author email of a ghost's commits: `alice <alice@vaultmem>`
FACT_TYPES = frozenset({"fact"})
_SINCE = re.compile(r"^(\d+)\s*([hdw])\Z")


@dataclass(frozen=True, slots=True)
class Range:
    base: str | None  # a commit; None: the empty tree
    head: str | None  # a commit; None: the working tree
    label: str


def resolve_range(app: App, git: Git, rev: str | None, since: str | None, staged: bool = False) -> Range:
    """`rev`: "A..B", or one commit (its own change); `since`: "7d", "12h", "2w" or a date,
    up to the working tree; `staged`: HEAD to what is staged (a pre-commit hook's view);
    none: HEAD to the working tree."""
    if sum(bool(x) for x in (rev, since, staged)) > 1:
        raise InvalidInput("give one of a revision, --since and --staged")
    if staged:
        return Range(git.resolve("HEAD") if git.has_head() else None, STAGED, "HEAD..staged")
    if since:
        moment = _since(since)
        base = ""
        if git.has_head() and app.ghost is not None:  # the last commit of its own history by then
            base = seen_before(app, git, git.resolve("HEAD"), moment) or ""
        elif git.has_head():
            base = git.run("rev-list", "-1", f"--before={moment}", "HEAD").strip()
        return Range(base or None, WORKTREE, f"since {since}..working tree")
    if rev and ".." in rev:
        a, _, b = rev.partition("..")
        history = History(app, git) if app.ghost is not None else None  # read once for both ends
        return Range(seen_or_before(app, git, a or "HEAD", history), seen_commit(app, git, b or "HEAD", history), rev)
    if rev:
        history = History(app, git) if app.ghost is not None else None
        head = seen_commit(app, git, rev, history)
        return Range(seen_parent(app, git, head, history), head, rev)
    return Range(git.resolve("HEAD") if git.has_head() else None, WORKTREE, "HEAD..working tree")


def _since(text: str) -> str:
    m = _SINCE.match(text.strip())
    if m:
        n, unit = int(m.group(1)), m.group(2)
        span = {"h": timedelta(hours=n), "d": timedelta(days=n), "w": timedelta(weeks=n)}[unit]
        return iso(utc_now() - span)
    from vaultmem.vault.dates import parse_iso

    moment = parse_iso(text)
    if moment is None:
        raise InvalidInput(f"--since {text!r}: give a span like 7d, 12h, 2w, or a date like 2026-11-20")
    return iso(moment)


def is_note_path(path: str | None) -> bool:
    """A markdown file outside hidden folders — or in the trash, where deletes go."""
    if not path or not path.lower().endswith(".md"):
        return False
    parts = path.split("/")
    return parts[0] == ".trash" or not any(p.startswith(".") for p in parts)


def review(
    app: App, rev: str | None = None, since: str | None = None, ghost: str | None = None, staged: bool = False
) -> ReviewResult:
    """The digest of the changes in a range (module docstring); `ghost`: only that writer's."""
    git = Git.of(app.root)
    rng = resolve_range(app, git, rev, since, staged)
    return digest(app, git, rng, ghost)


def digest(app: App, git: Git, rng: Range, writer: str | None = None, flags: bool | str = True) -> ReviewResult:
    """The changes of a range; `flags`: with what needs a person, or "blocking": only the
    flags that block (`commit` holds those back)."""
    files = git.changes(rng.base, rng.head)
    notes = [f for f in files if is_note_path(f.path) or is_note_path(f.old_path)]
    entries = journal_between(git, rng)
    authors = _authors(git, rng) if rng.head not in (WORKTREE, STAGED) else {}
    old_paths = [f.old_path or f.path for f in notes if f.status != "A"]
    new_paths = [f.path for f in notes if f.status != "D"]
    before = git.contents(rng.base, old_paths) if rng.base is not None else {}
    after = git.contents(rng.head, new_paths)
    app.catch_up()
    flagger = Flagger(app, git, rng)
    out: list[Change] = []
    for f in notes:
        old_path = (f.old_path or f.path) if f.status != "A" else None
        new_path = f.path if f.status != "D" else None
        old = Side(old_path, before.get(old_path) if old_path else None)
        new = Side(new_path, after.get(new_path) if new_path else None)
        old, new = _visible(app, old, new)
        if old.path is None and new.path is None:
            continue
        change = describe(old, new)
        if change is None:
            continue
        by = writers(change, entries, old.data, new.data, authors)
        if writer is not None and not any(w.split("/")[0] == writer for w in by):
            continue
        out.append(
            Change(
                id=change.id,
                path=change.path,
                old_path=change.old_path,
                kind=change.kind,
                by=by,
                summary=change.summary(),
                flags=flagger.blocking(change, by)
                if flags == "blocking"
                else flagger.flags(change, by)
                if flags
                else [],
                title=change.title,
                diff=change.word_diff or None,
                properties=change.properties or None,
            )
        )
    out.sort(key=lambda c: (c.by[0] if c.by else "", c.path))
    by_writer: dict[str, dict[str, int]] = {}
    for c in out:
        for w in dict.fromkeys(b.split("/")[0] for b in c.by):
            counts = by_writer.setdefault(w, {})
            counts[c.kind] = counts.get(c.kind, 0) + 1
    blocking = sum(1 for c in out if any(f.blocking for f in c.flags))
    return ReviewResult(rng.label, out, by_writer, blocking, sum(1 for c in out if c.flags))


def _visible(app: App, old: Side, new: Side) -> tuple[Side, Side]:
    """Each side as the caller may see it: a side it may not read is no side at all."""
    if app.ghost is None:
        return old, new

    def seen(side: Side) -> Side:
        return side if side.path is None or readable(app, side.path) else Side(None, None)

    return seen(old), seen(new)


def journal_between(git: Git, rng: Range) -> Journal:
    """The journal as it is at the range's head (every line committed by then, whichever
    commit carried it), the writes before the head commit was made (all, for the working
    tree), with the base commit's time."""
    if rng.head in (WORKTREE, STAGED):
        entries = read_all(git.root)  # the working tree's journal holds every staged line
    else:
        names = git.run("ls-tree", "-r", "-z", "--name-only", "--full-name", rng.head, "--", JOURNAL_DIR)
        paths = [p for p in (git.vault_path(n) for n in names.split("\0") if n) if p]
        entries = []
        for data in git.contents(rng.head, paths).values():
            entries.extend(parse_lines((data or b"").decode("utf-8", "replace")))
    until = _commit_time(git, rng.head) if rng.head not in (WORKTREE, STAGED) else "~"
    entries = sorted((e for e in entries if e.at <= until), key=lambda e: e.at)
    return Journal(entries, git, rng.base)


def _commit_time(git: Git, rev: str) -> str:
    """A commit's time as the journal writes times (UTC, `Z`), to compare with its lines;
    the end of that second, so the writes just before a commit fall in it."""
    seconds = int(git.run("show", "-s", "--format=%ct", rev).strip())
    return stamp(seconds + 0.999)


def journal_added(git: Git, rng: Range, paths: Iterable[str]) -> list[Entry]:
    """The journal lines the range added (a file's lines at head not in it at base)."""
    paths = list(paths)
    before = git.contents(rng.base, paths) if rng.base is not None else {}
    after = git.contents(rng.head, paths)
    out: list[Entry] = []
    for path in paths:
        old = set((before.get(path) or b"").decode("utf-8", "replace").splitlines())
        text = (after.get(path) or b"").decode("utf-8", "replace")
        out.extend(parse_lines("\n".join(line for line in text.splitlines() if line not in old)))
    out.sort(key=lambda e: e.at)
    return out


def _authors(git: Git, rng: Range) -> dict[str, list[str]]:
    """Vault path -> who committed changes to it in the range (a ghost, or `hand`)."""
    spec = f"{rng.base}..{rng.head}" if rng.base else str(rng.head)
    out: dict[str, list[str]] = {}
    text = git.run("log", "--format=%x1e%ae", "--name-only", "-z", spec, "--", ".")
    for block in text.split("\x1e"):
        lines = [x for x in block.replace("\0", "\n").split("\n") if x]
        if not lines:
            continue
        email, files = lines[0], lines[1:]
        who = email.removesuffix(GHOST_EMAIL) if email.endswith(GHOST_EMAIL) else "hand"
        for repo_path in files:
            path = git.vault_path(repo_path)
            if path is not None and who not in out.setdefault(path, []):
                out[path].append(who)
    return out


def label(entry: Entry) -> str:
    who = entry.by or entry.person or "person"
    return f"{who}/{entry.model}" if entry.model else who


@dataclass(slots=True)
class Journal:
    """The journal's lines up to a range's head, and when each file's base content came."""

    entries: list[Entry]
    git: Git
    base: str | None

    def since(self, path: str) -> str:
        """When the base's content of `path` was committed (journal format); "" unknown."""
        if self.base is None:
            return ""
        out = self.git.run("log", "-1", "--format=%ct", self.base, "--", path).strip()
        # to the second, as git keeps it: the writes of that second count as after it
        return stamp(int(out)) if out else ""


def writers(
    change: NoteChange, journal: Journal, old: bytes | None, new: bytes | None, authors: dict[str, list[str]]
) -> list[str]:
    """Who made the change: the journal's writers of its paths since the line that wrote
    what the base holds (else since the base commit), in order; then `hand` when the file
    is not what vaultmem last wrote (or nobody journaled it). Whichever commit carried a
    journal line, it counts for the change whose bytes it wrote."""
    paths = {change.path, change.old_path} - {None}
    mine = [e for e in journal.entries if e.path in paths]
    every = mine  # the older lines too: what a write found may be what one of them left
    if old is None or change.kind == "restored":
        # a new note: its writes since its path last held nothing (an earlier life deleted);
        # a note restored from the trash too (its old bytes are the trashed copy's, which the
        # restore wrote again: that line was taken for the base's, the restore for a hand
        # edit, and sync refused a ghost's restore)
        start = max((i for i, e in enumerate(mine) if e.hash is None), default=None)
        mine = mine[start + 1 :] if start is not None else mine
    else:
        base_digest = hashlib.sha256(old).hexdigest()
        # the line that wrote the base's bytes at the base's path (a move writes the same
        # bytes at its new path: that line is part of the change, not its start)
        where = change.old_path or change.path
        start = max((i for i, e in enumerate(mine) if e.hash == base_digest and e.path == where), default=None)
        if start is not None:
            mine = mine[start + 1 :]
        else:  # the base was a hand edit: the writes after the commit that brought it
            since = journal.since(change.old_path or change.path)
            mine = [e for e in mine if e.at >= since]
    base = None if old is None else hashlib.sha256(old).hexdigest()
    out = list(dict.fromkeys(_with_hands_between(every, mine, base)))
    now_there = [e for e in mine if e.path == change.path]
    if change.kind == "deleted":
        if not mine:
            out = authors.get(change.path) or ["hand"]
        return out
    last = now_there[-1] if now_there else None
    digest = hashlib.sha256(new).hexdigest() if new is not None else None
    if last is None or last.hash != digest:
        fallback = [a for a in authors.get(change.path, []) if a not in out]
        out += fallback if not mine and fallback else ["hand"]
    return list(dict.fromkeys(out))


def _with_hands_between(every: list[Entry], mine: list[Entry], base: str | None) -> Iterator[str]:
    """The writers of `mine` (the change's lines, a tail of `every`) in order, `hand` before
    a write that found a file neither the base holds nor any earlier write left (a person's
    edit in between: a ghost's append to a note a person had just edited carries their
    words, which stay theirs). Any earlier write counts, not only the one just before:
    after a sync the journal interleaves two clones' lines, and the lines since the base
    commit are taken by the second (Journal.since), so the write a line followed may be
    one left out of `mine`."""
    counted = {id(e) for e in mine}
    known = {base}
    for entry in every:
        if id(entry) in counted:
            if entry.was is not None and entry.was not in known:
                yield "hand"
            yield label(entry)
        known.add(entry.hash)


class Flagger:
    """The flags of each change (module docstring), with what they need loaded once."""

    def __init__(self, app: App, git: Git, rng: Range) -> None:
        self.app, self.git, self.rng = app, git, rng
        self._twins = Twins(app)
        self._named: str | None = None

    def blocking(self, change: NoteChange, by: list[str]) -> list[Flag]:
        """The flags that block a commit: a secret added, a move across scopes by hand."""
        return [f for f in self._secret_and_scope(change, by) if f.blocking]

    def _secret_and_scope(self, change: NoteChange, by: list[str]) -> list[Flag]:
        out: list[Flag] = []
        if change.added_lines:
            found = find_secrets(change.added_text, set(change.added_lines))
            if found:
                where = "; ".join(s.where() for s in found[:3])
                out.append(Flag("secret", f"added text holds a secret ({where})", True))
        crossed = scope_moved(change)
        if crossed is not None:
            by_hand = "hand" in by
            how = "by hand" if by_hand else f"by {', '.join(by)}"
            out.append(Flag("cross_scope_move", f"moved from {crossed[0]} to {crossed[1]} {how}", by_hand))
        return out

    def flags(self, change: NoteChange, by: list[str]) -> list[Flag]:
        out: list[Flag] = self._secret_and_scope(change, by)
        people = {"hand", "person", *self.app.config.people}
        agent = any(b.split("/")[0] not in people for b in by)
        if change.kind in ("deleted", "moved"):
            linking = self._linked(change)
            if linking:
                what = "deleted" if change.kind == "deleted" else "moved"
                out.append(Flag(f"linked_{'delete' if what == 'deleted' else 'move'}", f"{what}; {linking}"))
        if change.links_added and change.new is not None:
            dangling = self._dangling_added(change)
            if dangling:
                out.append(Flag("dangling_link", "new link to nothing: " + ", ".join(f"[[{t}]]" for t in dangling[:3])))
        if change.kind == "created" and change.new is not None:
            twin = self._twins.of(change)
            if twin:
                out.append(Flag("near_duplicate", twin))
            if change.new.type in FACT_TYPES and not change.new.front_matter.get("source"):
                out.append(Flag("no_source", "a new fact that says not where it came from (no `source`)"))
        expires = change.properties.get("expires")
        if expires is not None and expires[0] is not None and expires[1] is None:
            out.append(Flag("expiry_removed", f"expiry {expires[0]} removed: it now never expires"))
        if agent and change.kind in ("edited", "properties") and change.old is not None and self.rng.base is not None:
            person = self._person_lines(change)
            if person:
                out.append(Flag("person_lines", person))
        return out

    def _dangling_added(self, change: NoteChange) -> list[str]:
        """The links this change added that lead nowhere the caller can see: resolving to
        nothing, or to a note it may not read (which must look the same: no flag may tell
        a hidden note's title from a missing one)."""
        added = {name_key(t) for t in change.links_added}
        out = []
        files = Attachments(self.app.root, self.app.can_read)  # `![[pic.png]]`: there, not a note
        reader = self.app.reader_links()  # where the caller's view sends each link (index/views.py)
        for edge in self.app.db.edges_from(change.path):
            dst = reader.dst(edge)
            if name_key(edge.target.strip()) in added and (dst is None or not self._seen([dst])):
                if dst is None and files.resolves(edge.target, change.path):
                    continue
                out.append(edge.target.strip())
        return list(dict.fromkeys(out))

    def _linked(self, change: NoteChange) -> str:
        """Which notes link to a deleted or moved note, in the caller's view."""
        if change.kind == "moved":
            sources = [e.src for e in edges_in(self.app, change.path) if e.src != change.path]
            seen = self._seen(sources)
            return f"{len(seen)} note{'s' if len(seen) != 1 else ''} link to it" if seen else ""
        old = change.old
        if old is None:
            return ""
        # Links written to its names, wherever they resolve now: whether the note went to
        # the trash or somewhere the caller cannot see must not show.
        names = {name_key(n) for n in (old.title, old.id, *old.aliases, change.path.rsplit("/", 1)[-1][:-3])}
        sources = [src for src, target in self.app.db.edge_targets() if name_key(target.strip()) in names]
        seen = [s for s in self._seen(sources) if s != change.path]
        return f"{len(seen)} note{'s' if len(seen) != 1 else ''} still link to it" if seen else ""

    def _seen(self, paths: Iterable[str]) -> list[str]:
        return sorted({p for p in paths if self.app.ghost is None or self.app.can_read(classify(p))})

    def _arrived_by(self, path: str) -> str | None:
        """The author email of the last commit up to the base that put a file at `path`."""
        out = self.git.run("log", "-1", "--format=%ae", "--diff-filter=AR", str(self.rng.base), "--", path)
        return out.strip() or None

    def _person_lines(self, change: NoteChange) -> str:
        """Lines of the old version a person wrote (git blame at the base: not a ghost's
        commit) that this change removed or rewrote."""
        path = change.old_path or change.path
        old_text = (self.git.contents(self.rng.base, [path]).get(path) or b"").decode("utf-8", "replace")
        new_text = change.added_text

        touched: set[int] = set()
        matcher = difflib.SequenceMatcher(a=old_text.split("\n"), b=new_text.split("\n"), autojunk=False)
        for tag, i1, i2, _, _ in matcher.get_opcodes():
            if tag in ("replace", "delete"):
                touched.update(range(i1 + 1, i2 + 1))
        touched -= key_lines(old_text, WRITE_STAMPS)  # rewritten by every write, a person's or not
        if not touched:
            return ""
        try:
            blame = self.git.run("blame", "--line-porcelain", str(self.rng.base), "--", path)
        except GitError:  # a file git cannot blame has no person's lines to report
            return ""
        person: list[int] = []
        line = email = filename = None
        arrival: list[str | None] = []  # who brought the note to its name, once asked
        for row in blame.split("\n"):
            head = row.split(" ")
            if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit() and head[2].isdigit():
                line = int(head[2])
            elif row.startswith("author-mail "):
                email = row[len("author-mail ") :].strip("<>")
            elif row.startswith("filename "):
                filename = self.git.vault_path(row[len("filename ") :])
            elif row.startswith("\t") and line is not None:
                if self.app.ghost is not None and (filename is None or not readable(self.app, filename)):
                    # blame followed a move into a place the caller may not read (a person
                    # published bob's private note): the lines are, to it, the mover's
                    if not arrival:
                        arrival.append(self._arrived_by(path))
                    email = arrival[0]
                if line in touched and email is not None and not email.endswith(GHOST_EMAIL):
                    person.append(line)
                line = None
        if not person:
            return ""
        listed = ", ".join(str(n) for n in person[:5]) + ("…" if len(person) > 5 else "")
        return f"changes lines a person wrote (line {listed} of the version at {self._base_named()})"

    def _base_named(self) -> str:
        """The base commit as the caller may name it: to a ghost, the last of its own history
        there, whose notes it may read are the same (the base may be another ghost's)."""
        if self._named is None:
            named = seen_at(self.app, self.git, self.rng.base)
            self._named = named[:8] if named else "the start"
        return self._named
