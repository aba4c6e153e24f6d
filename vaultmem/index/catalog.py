"""The first stage of every reconcile: bring the state db in step with the files.

A pure diff (stat walk against stored rows), then reading only the files whose size or
mtime changed (or that changed too close to the last scan for their stat to be trusted:
vault/racy.py), then moves paired by id or content hash, then one transaction. Cheap when
nothing changed: no file is opened and neither chromadb nor a model is imported. `get`
and `query` run only this stage; `index` and `search` go on to the derived indexes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from vaultmem.config import VaultConfig
from vaultmem.index.resolve import LinkSource, NameEntry, Resolver, compute_edges, name_key
from vaultmem.index.rows import rows
from vaultmem.index.statedb import NoteRecord, StateDB
from vaultmem.vault import journal, racy
from vaultmem.vault.ids import derived_id
from vaultmem.vault.layout import FileEntry, walk_notes
from vaultmem.vault.note import content_hash, version_now
from vaultmem.vault.store import read_note_bytes

Progress = Callable[[int, int], None]


# git's "racy clean" rule (vault/racy.py): a row is trusted by (size, mtime) only when the
# mtime is RACY_WINDOW_NS older than the moment the scan that recorded it began; younger ones
# are read and hashed again, until a scan has read them safely after their mtime. Only the
# files saved in the last seconds cost a read.
SCANNED_AT = "catalog_scanned_ns"  # meta: when the scan that last recorded rows began
NO_SCAN = -(2**63)  # a db without that mark (made before it): no stat is trusted, once


def trusted_before(db: StateDB) -> int:
    """The mtime below which a row's unchanged (size, mtime) is trusted without a read."""
    scanned = db.get_meta(SCANNED_AT)
    return NO_SCAN if scanned is None else int(scanned) - racy.RACY_WINDOW_NS


@dataclass(frozen=True, slots=True)
class StatDiff:
    changed: list[FileEntry]  # new or different size/mtime: must be read
    deleted: list[str]  # rows whose file is gone
    unchanged: int


def diff_stats(
    entries: Iterable[FileEntry], known: Mapping[str, tuple[int, int, str, str]], trusted_before: int | None = None
) -> StatDiff:
    """Pure: which files need reading, which rows lost their file. `trusted_before`: an
    unchanged stat with an mtime from then on is read anyway (racy.RACY_WINDOW_NS); None trusts
    every unchanged stat (`status`, which only counts what is surely pending)."""
    changed: list[FileEntry] = []
    seen: set[str] = set()
    unchanged = 0
    for entry in entries:
        seen.add(entry.relpath)
        row = known.get(entry.relpath)
        if (
            row is not None
            and row[0] == entry.size
            and row[1] == entry.mtime_ns
            and (trusted_before is None or entry.mtime_ns < trusted_before)
        ):
            unchanged += 1
        else:
            changed.append(entry)
    deleted = sorted(p for p in known if p not in seen)
    return StatDiff(changed, deleted, unchanged)


def pair_moves(
    added: Mapping[str, tuple[str | None, bool, str]], deleted: Mapping[str, tuple[str | None, bool, str]]
) -> list[tuple[str, str]]:
    """Pure: (old, new) path pairs for files that moved. Values are (id, id_derived, hash).

    A real id wins (the file was moved and maybe edited); otherwise identical content."""
    pairs: list[tuple[str, str]] = []
    gone_by_id = {v[0]: p for p, v in deleted.items() if v[0] and not v[1]}
    gone_by_hash: dict[str, list[str]] = {}
    for p, v in sorted(deleted.items()):
        gone_by_hash.setdefault(v[2], []).append(p)
    used: set[str] = set()
    for new, (nid, derived, chash) in sorted(added.items()):
        old = gone_by_id.get(nid) if nid and not derived else None
        if old is None or old in used:
            old = next((p for p in gone_by_hash.get(chash, []) if p not in used), None)
        if old is not None:
            used.add(old)
            pairs.append((old, new))
    return pairs


# Bump when what a row records changes: every file is then read again once.
# p3: a conversation memory's `role`; p4: `former_ids`; p5: links in properties; p6: links
# and #tags in indented code blocks are text (vault/indented_code.py); p7: links resolve
# whatever their Unicode normal form (resolve.name_key), so edges stored dangling are redone;
# p8: comments and math hold no links or tags (vault/hidden.py), a markdown link without
# `.md` or with parentheses in its path is a link
PARSER_VERSION = "p8"


def config_signature(config: VaultConfig) -> str:
    return f"{PARSER_VERSION};types=" + ",".join(config.types)


@dataclass(slots=True)
class CatalogResult:
    added: int = 0
    updated: int = 0
    deleted: int = 0
    moved: int = 0
    unchanged: int = 0
    changed: bool = False
    moves: list[tuple[str, str]] = field(default_factory=list)
    changes: dict[str, str] = field(default_factory=dict)  # path -> added|updated|deleted|moved


def carry_derived_ids(
    db: StateDB, records: list[NoteRecord], moves: list[tuple[str, str]], new_paths: set[str]
) -> list[NoteRecord]:
    """Keep the ids of notes without an `id:` when they move.

    A derived id comes from the path, so a renamed folder would give every id-less note a
    new id and break every agent holding one. When a move is detected (same content at a
    new path), the note keeps the id it had; edits keep it too. The id lives in the state
    db only: `lint --fix` writes real ids into the files, and a rebuild from nothing
    (`index --full`, or deleting .vaultmem/) derives ids from paths again.
    """
    derived = [r for r in records if r.id_derived]
    if not derived:
        return records
    moved_from = {new: old for old, new in moves}
    wanted = [moved_from.get(r.path, r.path) for r in derived]
    previous = db.by_paths(wanted)
    taken = db.note_ids()
    out: list[NoteRecord] = []
    for rec in records:
        if not rec.id_derived:
            out.append(rec)
            continue
        before = previous.get(moved_from.get(rec.path, rec.path))
        if (
            before is not None
            and before.id_derived
            and before.id
            and (rec.path not in new_paths or rec.path in moved_from)
        ):
            out.append(replace(rec, id=before.id))
            continue
        if rec.path in new_paths and rec.id in taken:
            # A new file at a path a moved note came from: its path-derived id is taken by
            # that note, so it gets the next free one.
            n = 2
            while derived_id(f"{rec.path}#{n}") in taken:
                n += 1
            rec = replace(rec, id=derived_id(f"{rec.path}#{n}"))
        taken.add(rec.id or "")
        out.append(rec)
    return out


def count_versions(
    records: list[NoteRecord],
    before: Mapping[str, NoteRecord],
    moves: Iterable[tuple[str, str]],
    written: Mapping[str, tuple[str, int]],
) -> list[NoteRecord]:
    """Changed rows get their effective version from what was known of their path (the row
    they replace, at the same path or the one a moved note came from, and vaultmem's own
    last write there): an edit by hand counts as one more version."""
    moved_from = {new: old for old, new in moves}
    out = []
    for rec in records:
        if rec.is_note and rec.extra is not None:
            prev = before.get(moved_from.get(rec.path, rec.path))
            known = [(prev.hash, prev.version)] if prev is not None and prev.is_note else []
            if rec.path in written:
                known.append(written[rec.path])
            if known:
                version = version_now(
                    rec.hash, int(rec.extra.get("file_version") or 0), bool(rec.extra.get("body_edited")), known
                )
                if version != rec.version:
                    rec = replace(rec, version=version)
        out.append(rec)
    return out


def known_writes(root: Path, db: StateDB, records: list[NoteRecord]) -> dict[str, tuple[str, int]]:
    """path -> (file hash, version) of vaultmem's last write there. A db that never scanned
    (`.vaultmem/` deleted, a damaged db set aside) has none, but the vault's journal names
    the bytes vaultmem last wrote at each path: a file no longer as written was edited by
    hand since, one version past its `version:` (SPEC §2), even in a property alone, which
    the body's `hash` does not cover (else an agent's write over it would pass)."""
    written = db.writes_of(r.path for r in records)
    if db.get_meta(SCANNED_AT) is not None:
        return written
    journaled = journal.last_written(root)
    for rec in records:
        digest = journaled.get(rec.path)
        if digest is not None and rec.path not in written and rec.extra is not None:
            written[rec.path] = (digest, int(rec.extra.get("file_version") or 0))
    return written


def name_of(rec: NoteRecord) -> tuple[object, ...]:
    """What other notes' links resolve against."""
    return (rec.status, rec.id, rec.title, rec.aliases)


def name_entry(rec: NoteRecord) -> NameEntry:
    """A note's names as db.names() gives them."""
    return NameEntry(rec.path, rec.id or rec.path, rec.title or "", rec.aliases)


class NamesCache:
    """The Resolver of the db's names, kept between reconciles by a long-lived process (the
    watcher, an MCP server: index/views.py holds one): building one reads and indexes every
    note's names (~0.6 s at 50k notes). It is used only while the db's names token is the
    one it was made for: every change of names writes a new token in the same transaction,
    in whichever process."""

    def __init__(self) -> None:
        self._held: tuple[str, Resolver] | None = None

    def current(self, db: StateDB) -> Resolver:
        """The Resolver of the names in the db now."""
        token = db.names_token()
        held = self._held
        if token is not None and held is not None and held[0] == token:
            return held[1]
        resolver = Resolver(NameEntry(*row) for row in db.names())
        if token is not None:
            self._held = (token, resolver)
        return resolver

    def renamed(self, db: StateDB, gone: Iterable[NameEntry] | None = None, came: Iterable[NameEntry] = ()) -> Resolver:
        """Inside the writer's transaction, after names changed (`gone` replaced by `came`;
        None: any name may have): a new names token, and the Resolver of the names now. The
        one held for the names before is updated in place when Resolver.update can do it
        exactly."""
        # Forgotten first, so it is never left under the old token half updated; the new
        # token is the db's only once the transaction commits (after a rollback it matches nothing).
        held, self._held = self._held, None
        before = db.names_token()
        token = db.new_names_token()
        resolver = held[1] if held is not None and held[0] == before and before is not None else None
        if resolver is None or gone is None or not resolver.update(gone, came):
            resolver = Resolver(NameEntry(*row) for row in db.names())
        self._held = (token, resolver)
        return resolver


def rebuild_edges(
    db: StateDB, resolver: Resolver, only: list[NoteRecord] | None = None, gone: Iterable[str] = ()
) -> None:
    """Resolve links into the edges table: every note's, or only the notes in `only` (and
    drop the edges of the paths in `gone`, notes that no longer exist)."""
    if only is None:
        sources = [LinkSource(r.path, r.links, r.parent) for r in db.notes()]
        db.replace_edges(compute_edges(resolver, sources))
        db.new_edges_generation(None)
    else:
        replaced = [r.path for r in only] + list(gone)
        sources = [LinkSource(r.path, r.links, r.parent) for r in only]
        db.replace_edges(compute_edges(resolver, sources), sources=replaced)
        # Readers holding a graph in memory (the watcher) redo these notes' links only.
        db.new_edges_generation(replaced)


def update_edges(
    db: StateDB, resolver: Resolver, changed: list[NoteRecord], names: Iterable[NameEntry], gone: Iterable[str]
) -> None:
    """After notes appeared, vanished, moved or changed name: resolve again the links of
    the changed notes and of every note with a link that could mean one of `names` (their
    names before and after), instead of every link in the vault (seconds at 10k notes)."""
    affected = names_met_by(names)
    stale = {src for src, target in db.edge_targets() if affected(target)}
    stale -= {r.path for r in changed}
    stale.difference_update(gone)
    others = [r for r in db.by_paths(stale).values() if r.status == "note"]
    rebuild_edges(db, resolver, only=[r for r in changed if r.status == "note"] + others, gone=gone)


def names_met_by(names: Iterable[NameEntry]) -> Callable[[str], bool]:
    """Whether a link's target text could resolve to one of `names` (resolve.py's rules),
    or resolve differently because of one: it names an id, title or alias of one of them,
    or ends in the file stem of one (paths, folder suffixes, stems and relative links all
    end in the stem). A superset; it only decides which links are resolved again."""
    keys: set[str] = set()
    stems: set[str] = set()
    for e in names:
        keys.update((e.id, name_key(e.id), name_key(e.title.strip())))
        keys.update(name_key(a.strip()) for a in e.aliases)
        stems.add(_stem_of(e.path))
    keys.discard("")

    def met(target: str) -> bool:
        raw = target.strip()
        if raw in keys or name_key(raw) in keys:
            return True
        stem = _stem_of(raw)
        return stem in stems or stem in (".", "..", "")

    return met


def _stem_of(path: str) -> str:
    low = name_key(path.strip().strip("/"))
    low = low[:-3] if low.endswith(".md") else low
    return low.rsplit("/", 1)[-1]


def catch_up(
    root: Path,
    db: StateDB,
    config: VaultConfig,
    progress: Progress | None = None,
    bodies: dict[str, str] | None = None,
    strays: list[str] | None = None,
    names: NamesCache | None = None,
) -> CatalogResult:
    """Bring the state db up to date with the files. Idempotent; one transaction.

    `bodies`, when given, collects the body of every note read, so the index stages that
    follow in the same run need not read those files again. `strays`, when given, collects
    the write temp files the walk met (vault/layout.py walk_notes). `names`: the Resolver
    a long-lived process keeps (index/views.py); a fresh one otherwise."""
    started = racy.now_ns()  # before the walk: every stat and read below is later
    known = db.stats()
    # Problems depend on the config (allowed types); a config change re-checks every file.
    signature = config_signature(config)
    recheck = db.get_meta("catalog_signature") != signature
    if recheck:
        known = {p: (-1, -1, h, s) for p, (_, _, h, s) in known.items()}
    diff = diff_stats(walk_notes(root, strays), known, trusted_before(db))
    result = CatalogResult(unchanged=diff.unchanged)
    if not diff.changed and not diff.deleted:
        return result
    verified, changed = ([], diff.changed) if recheck else _as_recorded(root, diff.changed, known)
    read = _read_changed(root, config, changed, known, recheck, bodies, progress)
    result.unchanged += len(read.touched) + len(read.quiet) + len(verified)
    if not (read.records or read.quiet or read.touched or diff.deleted):
        _settle(db, verified, started)
        return result
    new_paths = {r.path for r in read.records if r.path not in known}
    deleted_rows = db.by_paths(diff.deleted)
    moves = pair_moves(
        {r.path: (r.id, r.id_derived, r.hash) for r in read.records if r.path in new_paths},
        {p: (r.id, r.id_derived, r.hash) for p, r in deleted_rows.items() if r.status == "note"},
    )
    records = carry_derived_ids(db, read.records, moves, new_paths)
    quiet = carry_derived_ids(db, read.quiet, [], set())
    _count(result, records, diff.deleted, moves, new_paths)
    db.begin()
    try:
        for entry in read.touched:
            db.touch(entry.relpath, entry.size, entry.mtime_ns)
        before = db.by_paths([*(r.path for r in records), *diff.deleted])
        written = known_writes(root, db, [*records, *quiet])
        records = count_versions(records, before, moves, written)
        quiet = count_versions(quiet, db.by_paths([r.path for r in quiet]), (), written)
        db.record_versions((r.path, r.hash, r.version) for r in records if r.is_note)
        db.upsert(records)
        db.upsert(quiet)
        db.tombstone(diff.deleted)
        _relink(db, names or NamesCache(), before, records, quiet, new_paths, diff.deleted)
        db.set_meta("catalog_signature", signature)
        db.set_meta(SCANNED_AT, str(started))
        db.commit()
    except BaseException:
        db.rollback()
        raise
    result.changed = bool(records or diff.deleted)
    return result


@dataclass(slots=True)
class _Read:
    records: list[NoteRecord] = field(default_factory=list)  # new or changed content
    quiet: list[NoteRecord] = field(default_factory=list)  # same content, re-checked against a new config
    touched: list[FileEntry] = field(default_factory=list)  # only the mtime moved (touch, checkout)


def _read_changed(
    root: Path,
    config: VaultConfig,
    changed: list[FileEntry],
    known: dict[str, tuple[int, int, str, str]],
    recheck: bool,
    bodies: dict[str, str] | None,
    progress: Progress | None,
) -> _Read:
    """Read every changed file, sorted by what it needs: a new row, a re-check, or a touch."""
    out = _Read()
    for i, (entry, record, body) in enumerate(rows(root, config, changed), 1):
        if bodies is not None and body is not None:
            bodies[entry.relpath] = body
        old = known.get(entry.relpath)
        if old is not None and old[2] == record.hash:
            (out.quiet.append(record) if recheck else out.touched.append(entry))
        else:
            out.records.append(record)
        if progress:
            progress(i, len(changed))
    return out


def _as_recorded(
    root: Path, changed: list[FileEntry], known: Mapping[str, tuple[int, int, str, str]]
) -> tuple[list[FileEntry], list[FileEntry]]:
    """(racy files whose bytes hash as their row records, the rest to read). A racy file has
    its recorded size and mtime (diff_stats read it only for being recent): its hash alone
    tells whether it changed, without parsing it (a checkout of many files, indexed twice
    within the window, costs one read and hash of each, not a parse)."""
    verified: list[FileEntry] = []
    rest: list[FileEntry] = []
    for entry in changed:
        row = known.get(entry.relpath)
        if row is None or row[:2] != (entry.size, entry.mtime_ns) or entry.symlink:
            rest.append(entry)
            continue
        try:
            same = content_hash(read_note_bytes(root / entry.relpath)) == row[2]
        except OSError:
            same = False  # the reading below reports it
        (verified if same else rest).append(entry)
    return verified, rest


def _settle(db: StateDB, verified: list[FileEntry], started: int) -> None:
    """A scan that found nothing changed, only read recent files again: record when it
    began once that lets a later scan trust one of them, else write nothing (a `get` just
    after a save commits nothing; a db that cannot be written is no error here)."""
    if db.unwritable is not None or all(racy.is_racy(e.mtime_ns, started) for e in verified):
        return
    with db.transaction():
        db.set_meta(SCANNED_AT, str(started))


def _count(
    result: CatalogResult,
    records: list[NoteRecord],
    deleted: list[str],
    moves: list[tuple[str, str]],
    new_paths: set[str],
) -> None:
    """What the reconcile did, in counts and per path."""
    result.moves = moves
    result.moved = len(moves)
    result.added = len(new_paths) - len(moves)
    result.updated = len(records) - len(new_paths)
    result.deleted = len(deleted) - len(moves)
    moved_from = {old for old, _ in moves}
    moved_to = {new for _, new in moves}
    result.changes = {
        **{p: "deleted" for p in deleted if p not in moved_from},
        **{r.path: "moved" if r.path in moved_to else "added" if r.path in new_paths else "updated" for r in records},
    }


def _relink(
    db: StateDB,
    names: NamesCache,
    before: dict[str, NoteRecord],
    records: list[NoteRecord],
    quiet: list[NoteRecord],
    new_paths: set[str],
    deleted: list[str],
) -> None:
    """Inside the transaction: the edges after the change, by the cheapest exact path."""
    same_names = not (new_paths or deleted or quiet) and all(
        r.path in before and name_of(before[r.path]) == name_of(r) for r in records
    )
    if same_names:
        # No note appeared, vanished, moved or changed its id, title or aliases: no other
        # note's links can resolve differently, and the names' Resolver holds.
        resolver = names.current(db) if db.names_token() is not None else names.renamed(db)
        rebuild_edges(db, resolver, only=[r for r in records if r.status == "note"])
    elif quiet:
        rebuild_edges(db, names.renamed(db))  # a new config re-checked every note: resolve everything
    elif records or deleted:
        # The names before the change and after: a link that met one of them may now
        # resolve elsewhere.
        old_names = [name_entry(b) for b in before.values() if b.is_note]
        new_names = [name_entry(r) for r in records if r.is_note]
        gone = [*deleted, *(r.path for r in records if not r.is_note)]
        update_edges(db, names.renamed(db, old_names, new_names), records, old_names + new_names, gone=gone)
