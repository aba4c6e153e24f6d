"""The errors a reconcile reports come from the rows with an error among their problems only
(issue 14: decoding the warning of every note without an id cost a 38k-note no-op `index`
half a second)."""

from __future__ import annotations

from pathlib import Path

from vaultmem.index.engine import error_list
from vaultmem.index.statedb import NoteRecord, StateDB


def _row(path: str, *problems: dict[str, str], status: str = "note") -> NoteRecord:
    return NoteRecord(path=path, size=1, mtime_ns=1, hash=f"h-{path}", status=status, problems=problems)


def test_only_errors_are_reported_and_warnings_that_mention_errors_are_not(tmp_path: Path) -> None:
    db = StateDB(tmp_path / "state.db")
    warning = {"severity": "warning", "code": "missing_id", "message": "no id in front matter"}
    says_error = {"severity": "warning", "code": "odd", "message": 'the word "error" in a warning'}
    binary = {"severity": "error", "code": "binary", "message": "not text"}
    cafe = {"severity": "error", "code": "not_utf8", "message": "décodé en latin-1 « erreur »"}
    db.begin()
    db.upsert(
        [
            *(_row(f"shared/n{i:03d}.md", warning) for i in range(200)),
            _row("shared/says.md", says_error),
            _row("shared/z-binary.md", binary, status="unreadable"),
            _row("shared/a-latin.md", warning, cafe),
            _row("shared/gone.md", binary, status="deleted"),
        ]
    )
    db.commit()
    assert error_list(db) == [
        {"path": "shared/a-latin.md", "code": "not_utf8", "message": "décodé en latin-1 « erreur »"},
        {"path": "shared/z-binary.md", "code": "binary", "message": "not text"},
    ]
    db.close()
