"""Dense search checks the notes of its nearest chunks against the filters from a lean
read of their rows (StateDB.filter_rows, issue 14): what it tests must be exactly what the
whole row says, for every kind of note, and a row that changes must be read again."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note
from vaultmem.index.documents import doc_for
from vaultmem.index.statedb import filter_record
from vaultmem.index.vectors import note_metadata, owner_key
from vaultmem.services.app import App


def _vault(tmp_path: Path) -> Path:
    root = make_vault(tmp_path / "v", projects={"apollo": ["alice"]})
    note(root, "shared/plain.md", "No front matter at all.")
    note(
        root,
        "shared/full.md",
        "Every field.",
        title="Full",
        type="decision",
        tags=["Alpha", "beta/gamma"],
        aliases=["The full one"],
        created="2025-01-02T03:04:05Z",
        updated="2025-02-03",
        expires="2030-01-01",
        trust=0.9,
        confidence=0.25,
        importance=0.7,
    )
    note(root, "ghosts/alice/private/mine.md", "Alice's own.", tags=["secret"])
    note(root, "projects/apollo/plan.md", "The project plan.", type="plan")
    note(root, "inbox/loose.md", "Captured.", expires="2001-01-01")
    Cli(root).ok("index")
    return root


def test_filter_rows_give_the_whole_rows_metadata(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    app = App.open(root, "alice")
    paths = app.db.note_paths()
    assert len(paths) == 5
    rows = app.db.filter_rows([*paths, "missing.md"])
    assert sorted(rows) == sorted(paths)
    for path in paths:
        whole = app.db.get(path)
        assert whole is not None
        assert note_metadata(doc_for(filter_record(rows[path]), "")) == note_metadata(doc_for(whole, ""))


def test_the_lookup_reads_a_changed_row_again(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    app = App.open(root, "alice")
    key = owner_key("shared/full.md")
    assert app.indexes.note_lookup()({key})[key]["tag:alpha"] is True
    note(root, "shared/full.md", "Every field.", title="Full", tags=["delta"])
    Cli(root).ok("index")
    meta = app.indexes.note_lookup()({key})[key]
    assert "tag:alpha" not in meta and meta["tag:delta"] is True
    assert meta["type"] == "note"


def test_lookups_by_path_id_or_title_use_their_own_index(tmp_path: Path) -> None:
    """Without statistics SQLite prefers the status index for `status='note' AND id=?`,
    which walks every note (~20 ms at 50k notes, per lookup): each lookup of a few notes
    must search by its own column."""
    root = _vault(tmp_path)
    app = App.open(root, "alice")
    db = app.db
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    full = db.get("shared/full.md")
    assert full is not None and full.id
    db.by_id(full.id)
    db.by_id(full.id.lower(), any_case=True)
    db.notes_titled("Full")
    db.notes_titled("Full", scope="shared")
    db.note_locations(["shared/full.md"])
    db.filter_rows(["shared/full.md"])
    db.conn.set_trace_callback(None)
    lookups = [s for s in statements if s.lstrip().upper().startswith("SELECT") and "status" in s]
    assert len(lookups) >= 6
    for sql in lookups:
        plan = " ".join(str(row[-1]) for row in db.conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
        assert "files_status" not in plan, (sql, plan)
        assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, (sql, plan)
