"""Passage terms (index/passage_terms.py, statedb/passage_terms.py): the indexer stores
each note's terms by passage, and a hybrid search measures passage coverage from them
instead of reading and scanning the candidates' files. The same scores either way; a row
made from other content than the note's is never used; a vault indexed before the table
existed gets its rows at the next `index`."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note
from vaultmem.paths import StatePaths
from vaultmem.search.passages import Coverage

QUERY = "harbour pilot guides ships past the breakwater"
SENTENCES = [
    "The harbour pilot guides ships past the breakwater at dawn.",
    "Ships wait outside the harbour until the tide turns.",
    "A pilot boards each ship near the outer buoy; the breakwater shelters the inner basin.",
    "Fishing boats leave before dawn and return by noon.",
    "The lighthouse keeper logs every ship that passes.",
    "Storms close the harbour mouth a few days each winter.",
]


@pytest.fixture
def vault(tmp_path: Path, module_hash: object) -> tuple[Cli, Path]:
    root = make_vault(tmp_path / "v", backend="auto")
    for i in range(24):
        picked = [SENTENCES[(i + k) % len(SENTENCES)] for k in range(1 + i % 4)]
        body = f"# Harbour note {i}\n\n" + "\n".join(picked) + f"\n\n- item {i}: the pilot log\n"
        note(root, f"shared/h{i:02d}.md", body, title=f"Harbour note {i}")
    cli = Cli(root)
    cli.ok("index")
    return cli, StatePaths(root).db


def _search(cli: Cli) -> list[dict[str, Any]]:
    data = cli.ok("search", QUERY, "--explain", "--min-score", "0", "--limit", "20")
    return [(r["summary"]["path"], r["summary"]["score"], r["explain"]["parts"]) for r in data["results"]]


def _rows(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT path, hash FROM passage_terms"))


def _scanning_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def scan(self: Coverage, text: str) -> float:
        raise AssertionError("a note's file was scanned for its coverage")

    monkeypatch.setattr(Coverage, "__call__", scan)


def test_every_indexed_note_has_its_passage_terms(vault: tuple[Cli, Path]) -> None:
    _cli, db = vault
    with sqlite3.connect(db) as conn:
        notes = dict(conn.execute("SELECT path, hash FROM files WHERE status='note'"))
    assert _rows(db) == notes and len(notes) == 24


def test_search_measures_coverage_from_the_terms_with_the_scores_of_a_scan(
    vault: tuple[Cli, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cli, db = vault
    with monkeypatch.context() as m:
        _scanning_fails(m)  # every candidate has its terms: no file is scanned
        from_terms = _search(cli)
    assert from_terms and all("coverage" in parts for _, _, parts in from_terms[:10])
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM passage_terms")  # as a state db from before the table
    assert _search(cli) == from_terms  # scanned: the very same scores and order


def test_a_row_of_other_content_is_not_used(vault: tuple[Cli, Path]) -> None:
    cli, db = vault
    expected = _search(cli)
    # terms claiming every query word in one passage, made from content the note no longer has
    claim = " ".join(f"{t}@0,1" for t in ("harbour", "pilot", "guid", "ship", "past", "breakwat"))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE passage_terms SET hash='sha256:other', terms=?", (f" {claim} ",))
    assert _search(cli) == expected


def test_edits_moves_and_deletes_keep_the_rows_in_step(vault: tuple[Cli, Path]) -> None:
    cli, db = vault
    root = cli.vault
    note(root, "shared/h00.md", "A new text about the breakwater.", title="Harbour note 0")
    (root / "shared" / "h01.md").unlink()
    (root / "shared" / "h02.md").rename(root / "shared" / "moved.md")
    cli.ok("index")
    with sqlite3.connect(db) as conn:
        notes = dict(conn.execute("SELECT path, hash FROM files WHERE status='note'"))
        terms = conn.execute("SELECT terms FROM passage_terms WHERE path='shared/h00.md'").fetchone()[0]
    assert _rows(db) == notes
    assert "shared/h01.md" not in notes and "shared/moved.md" in notes
    assert terms == " new@0 text@0 about@0 breakwat@0 "


def test_a_vault_indexed_before_the_table_gets_its_rows(vault: tuple[Cli, Path]) -> None:
    cli, db = vault
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE passage_terms")
        conn.execute("DELETE FROM meta WHERE key='passage_terms'")
        notes = dict(conn.execute("SELECT path, hash FROM files WHERE status='note'"))
    report = cli.ok("index")
    assert report["fulltext_docs"] == 0  # nothing re-indexed: only the rows made
    assert _rows(db) == notes


def test_a_vault_without_vectors_gets_them_when_it_turns_embeddings_on(tmp_path: Path, module_hash: object) -> None:
    """Passage terms serve hybrid search only: a vault without vectors is indexed without
    them, and one that turns embeddings on gets them for every note at its next index."""
    root = make_vault(tmp_path / "plain", backend="none")
    for i in range(5):
        note(root, f"shared/p{i}.md", SENTENCES[i], title=f"Plain {i}")
    cli = Cli(root)
    cli.ok("index")
    db = StatePaths(root).db
    assert _rows(db) == {}
    assert cli.ok("search", "harbour pilot", "--mode", "bm25")["results"]
    config = root / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "none"', 'backend = "auto"'))
    cli.ok("index")
    with sqlite3.connect(db) as conn:
        notes = dict(conn.execute("SELECT path, hash FROM files WHERE status='note'"))
    assert _rows(db) == notes and len(notes) == 5
