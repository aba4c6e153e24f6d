"""`vaultmem lint [--fix]`: vault consistency for review and CI.

Reads every file itself (no index needed, so it runs in a pre-commit hook on a fresh
clone). Prints paths and problems, never note contents.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from vaultmem.config import VaultConfig
from vaultmem.errors import Conflict, InvalidInput, NotFound
from vaultmem.index.resolve import LinkSource, NameEntry, Resolver, compute_edges, name_key
from vaultmem.models import LintReport, Problem
from vaultmem.services.app import App
from vaultmem.services.obsidian_links import link_by_file_names, not_file_named
from vaultmem.vault import store
from vaultmem.vault.attachments import Attachments
from vaultmem.vault.comments import as_property
from vaultmem.vault.comments import nested as nested_comments
from vaultmem.vault.comments import read as comments_of
from vaultmem.vault.ids import new_ulid
from vaultmem.vault.layout import classify, walk_notes
from vaultmem.vault.note import REPEATED_KEY, ParsedNote, Unreadable, parse_note
from vaultmem.vault.schema import check_note
from vaultmem.vault.secrets import file_text, find_secrets, scanner_version
from vaultmem.vault.writer import edit_note_text

_SEVERITY_ORDER = {"error": 0, "warning": 1}
SHUT_MESSAGE = (
    "this folder cannot be read (its permissions): vaultmem does not index the notes in it, "
    "and search does not find them; `chmod u+rx` it"
)
UNNAMED_MESSAGE = (
    "its name is not UTF-8 (each byte that is not shown as \ufffd): vaultmem skips it and Obsidian "
    "cannot open it; rename it (e.g. `mv` with the name as `ls` prints it)"
)


def lint_vault(app: App, fix: bool = False) -> LintReport:
    """Every note of the vault — or, with a ghost, the notes that ghost may see: their own
    problems, and the cross-checks (ids, titles, links) among them only, so nothing of a
    note it cannot see shows through (SPEC §3); `fix` writes only what it may write."""
    problems: list[Problem] = []
    notes: list[ParsedNote] = []
    unnamed: list[str] = []
    shut: list[str] = []
    for entry in walk_notes(app.root, unnamed=unnamed, shut=shut):
        if app.ghost is not None and not app.can_read(classify(entry.relpath)):
            continue
        parsed = store.read_entry(app.root, entry)
        if isinstance(parsed, Unreadable):
            problems.append(parsed.problem)
            continue
        notes.append(parsed)
        problems.extend(parsed.problems)
        problems.extend(check_note(parsed, app.config))
    fixed: list[dict[str, str]] = []
    if fix:
        fixed = _add_missing_ids(app, notes)
        if fixed:
            done = {f["path"] for f in fixed}
            problems = [p for p in problems if not (p.code == "missing_id" and p.path in done)]
        flattened = _flatten_comments(app, notes)
        if flattened:
            done = {f["path"] for f in flattened}
            problems = [p for p in problems if not (p.code == "nested_comments" and p.path in done)]
            fixed += flattened
        dated = _obsidian_dates(app, notes)
        if dated:
            done = {f["path"] for f in dated}
            problems = [p for p in problems if not (p.code == "zoned_date" and p.path in done)]
            fixed += dated
        relinked, notes = link_by_file_names(app, notes, lambda note: not _repeats_keys(note))
        fixed += relinked
    problems.extend(
        Problem(path, "error", "name_not_utf8", UNNAMED_MESSAGE)
        for path in unnamed
        if app.ghost is None or app.can_read(classify(path))
    )
    problems.extend(
        Problem(path, "error", "folder_unreadable", SHUT_MESSAGE)
        for path in shut
        if app.ghost is None or app.can_read(classify(f"{path}/note.md"))
    )
    files = Attachments(app.root, lambda loc: app.ghost is None or app.can_read(loc))
    problems.extend(
        _cross_checks(
            notes, {f["path"]: f["id"] for f in fixed if "id" in f}, files.resolves, app.config, app.ghost is None
        )
    )
    problems.extend(_secrets(app, notes))
    problems.sort(key=lambda p: (p.path, _SEVERITY_ORDER.get(p.severity, 2), p.code))
    errors = sum(1 for p in problems if p.severity == "error")
    warnings = sum(1 for p in problems if p.severity == "warning")
    return LintReport(problems, errors, warnings, len(notes), fixed if fix else None)


def lint_staged(app: App) -> LintReport:
    """The notes staged for the next commit, as git holds them (not as the files are now):
    what a pre-commit hook must check. Each note's own problems and secrets; the checks
    across notes (ids, titles, links) need the whole vault and are `lint`'s."""
    from vaultmem.services.review import is_note_path
    from vaultmem.vault.git import STAGED, Git
    from vaultmem.vault.note import parse_note

    git = Git.of(app.root)
    base = git.resolve("HEAD") if git.has_head() else None
    paths = [c.path for c in git.changes(base, STAGED) if c.status != "D" and is_note_path(c.path)]
    paths = [p for p in paths if not p.startswith(".trash/")]
    if app.ghost is not None:
        paths = [p for p in paths if app.can_read(classify(p))]
    problems: list[Problem] = []
    checked = 0
    for path, data in git.contents(STAGED, paths).items():
        if data is None:
            continue
        checked += 1
        parsed = parse_note(path, data)
        if isinstance(parsed, Unreadable):
            problems.append(parsed.problem)
            continue
        problems.extend(parsed.problems)
        problems.extend(check_note(parsed, app.config))
        problems.extend(_secret_problems(parsed, [[s.kind, s.line] for s in find_secrets(file_text(parsed))]))
    problems.sort(key=lambda p: (p.path, _SEVERITY_ORDER.get(p.severity, 2), p.code))
    errors = sum(1 for p in problems if p.severity == "error")
    return LintReport(problems, errors, sum(1 for p in problems if p.severity == "warning"), checked)


def _cross_checks(
    notes: list[ParsedNote],
    new_ids: dict[str, str],
    attached: Callable[[str, str], bool],
    config: VaultConfig,
    operator: bool,
) -> list[Problem]:
    """`attached(target, source)`: whether a link names a file other than a note that is there."""
    problems: list[Problem] = []
    by_id: dict[str, list[str]] = defaultdict(list)
    for note in notes:
        note_id = new_ids.get(note.relpath, note.id)
        if not note.id_derived or note.relpath in new_ids:
            by_id[note_id].append(note.relpath)
    for note_id, paths in by_id.items():
        if len(paths) > 1:
            for path in paths:
                others = ", ".join(p for p in paths if p != path)
                problems.append(Problem(path, "error", "duplicate_id", f"id {note_id} is also used by {others}"))
    # Titles are unique only among shared notes (SPEC §2). Two ghosts' private notes may share
    # a title, and naming one ghost's note to another would be a title oracle.
    by_title: dict[str, list[str]] = defaultdict(list)
    for note in notes:
        if note.scope == "shared":
            by_title[name_key(note.title)].append(note.relpath)
    for paths in by_title.values():
        if len(paths) > 1:
            for path in paths:
                others = ", ".join(p for p in paths if p != path)
                problems.append(Problem(path, "warning", "duplicate_title", f"title is also used by {others}"))
    resolver = Resolver(NameEntry(n.relpath, n.id, n.title, n.aliases) for n in notes)
    sources = [LinkSource(n.relpath, tuple(link.to_dict() for link in n.graph_links), n.parent) for n in notes]
    for edge in compute_edges(resolver, sources):
        if edge.dst is None and (edge.kind == "parent" or not attached(edge.target, edge.src)):
            what = "parent" if edge.kind == "parent" else "link"
            problems.append(
                Problem(edge.src, "warning", "dangling_link", f"{what} target {edge.target!r} does not resolve")
            )
    return problems + not_file_named(notes, resolver, config, operator)


def _secrets(app: App, notes: list[ParsedNote]) -> list[Problem]:
    """A secret in a note is an error: memory is shared, synced and kept in git history.
    Each file's content is scanned once (the state db keeps what a content hash held);
    the problem names the kind and the line of the file, never the secret."""
    keys = {n.relpath: f"{scanner_version()}:{n.content_hash}" for n in notes}
    known = app.db.secret_scans(keys.values())
    scanned: dict[str, list[list[object]]] = {}
    problems = []
    for note in notes:
        key = keys[note.relpath]
        found = known.get(key)
        if found is None:
            found = scanned[key] = [[s.kind, s.line] for s in find_secrets(file_text(note))]
        problems.extend(_secret_problems(note, found))
    if scanned:
        app.db.record_secret_scans(scanned)
    return problems


def _secret_problems(note: ParsedNote, found: list[list[object]]) -> list[Problem]:
    message = "holds a secret ({} on line {}): move it to a secret manager, then out of git history"
    return [Problem(note.relpath, "error", "secret", message.format(kind, line)) for kind, line in found]


def _flatten_comments(app: App, notes: list[ParsedNote]) -> list[dict[str, str]]:
    """Rewrite nested comments (`- {at, by, model, text}`) as the list of texts Obsidian's
    Properties view shows (vault/comments.py)."""

    def changes(fm: dict[str, Any]) -> dict[str, Any]:
        return {"comments": as_property(comments_of(fm["comments"]))} if nested_comments(fm.get("comments")) else {}

    return _rewrite_properties(app, notes, changes, lambda c: {"comments": f"{len(c['comments'])} as a list of texts"})


def _obsidian_dates(app: App, notes: list[ParsedNote]) -> list[dict[str, str]]:
    """Rewrite vaultmem's dates written with a zone (`…Z`, `+02:00`) in Obsidian's Date &
    time form, UTC without a zone (the vault's convention)."""
    from vaultmem.vault.dates import note_time_of
    from vaultmem.vault.schema import zoned_dates

    def changes(fm: dict[str, Any]) -> dict[str, Any]:
        times = {k: note_time_of(fm[k]) for k in zoned_dates(fm)}
        return {k: v for k, v in times.items() if v is not None}

    return _rewrite_properties(app, notes, changes, lambda c: {"dates": ", ".join(sorted(c))})


def _rewrite_properties(
    app: App,
    notes: list[ParsedNote],
    changes_of: Callable[[dict[str, Any]], dict[str, Any]],
    told: Callable[[dict[str, Any]], dict[str, str]],
) -> list[dict[str, str]]:
    """`lint --fix` of front matter keys: each note (the caller may write) whose front matter
    `changes_of` has changes for gets them, nothing else of it changing; `told(changes)` is
    its `fixed` entry. A note changed since it was read is left for the next run."""
    fixed: list[dict[str, str]] = []
    found: dict[str, str] = {}  # what each fix found: a person's words stay theirs (review.writers)
    for note in notes:
        if app.ghost is not None and not app.can_write(note.location):
            continue
        if not note.fm_ok or _repeats_keys(note) or not changes_of(note.front_matter):
            continue
        try:
            data, stamp = store.read_file(app.root, note.relpath)
            parsed = parse_note(note.relpath, data)
            if not isinstance(parsed, ParsedNote) or not parsed.fm_ok:
                continue
            changes = changes_of(parsed.front_matter)  # as the file is now
            if not changes:
                continue
            edited = edit_note_text(data.decode("utf-8"), parsed.front_matter, changes)
            store.replace_file(app.root, note.relpath, edited.text.encode("utf-8"), stamp)
        except (Conflict, UnicodeDecodeError, NotFound, InvalidInput):
            continue  # changed meanwhile, or too large once fixed: left as it is
        fixed.append({"path": note.relpath, **told(changes)})
        found[note.relpath] = stamp.sha256
    app.wrote([f["path"] for f in fixed], was=found)
    return fixed


def _add_missing_ids(app: App, notes: list[ParsedNote]) -> list[dict[str, str]]:
    """Write a real id into every note that has none; nothing else changes."""
    fixed: list[dict[str, str]] = []
    found: dict[str, str] = {}
    for note in notes:
        if app.ghost is not None and not app.can_write(note.location):
            continue
        # Broken, non-UTF-8 or unclosed front matter is for a person to fix: adding a block
        # in front of an unclosed `---` would turn the user's text into a second one.
        if (
            not note.id_derived
            or not note.fm_ok
            or _repeats_keys(note)
            or any(p.code in ("not_utf8", "unclosed_frontmatter") for p in note.problems)
        ):
            continue
        try:
            data, stamp = store.read_file(app.root, note.relpath)
            text = data.decode("utf-8")
            new_id = new_ulid()
            # the derived id agents may have stored keeps naming the note (lookup.find_note)
            edited = edit_note_text(text, note.front_matter, {"id": new_id, "former_ids": [note.id]})
            store.replace_file(app.root, note.relpath, edited.text.encode("utf-8"), stamp)
        except (Conflict, UnicodeDecodeError, NotFound, InvalidInput):
            continue  # changed meanwhile, or too large once fixed: left as it is
        fixed.append({"path": note.relpath, "id": new_id})
        found[note.relpath] = stamp.sha256  # what the fix found: a person's words stay theirs (review.writers)
    app.wrote([f["path"] for f in fixed], was=found)
    return fixed


def _repeats_keys(note: ParsedNote) -> bool:
    """A key set twice: re-rendering the block would drop one, maybe a person's (note.py)."""
    return any(p.code == REPEATED_KEY for p in note.problems)
