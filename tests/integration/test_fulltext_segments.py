"""A large lexical build commits a segment per SEGMENT_CHARS of text (issue 14: one writer
over 50k notes spilled its postings to disk and ran a third slower per note). The segments
change nothing a search returns: the same notes, the same scores, as one segment gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration._vaults import generate, index_contents, make_vault
from vaultmem.index import fulltext

QUERIES = ["vector index", "graph link budget", "memory agent ghost", "chunk embedding fusion rank", "token"]


def _searches(cli: Cli) -> list[list[tuple[str, float]]]:
    out = []
    for q in QUERIES:
        data = cli.ok("search", q, "--mode", "bm25", "--limit", "15", "--min-score", "0")
        out.append([(r["summary"]["path"], round(float(r["summary"]["score"]), 6)) for r in data["results"]])
    return out


def _segments(root: Path) -> int:
    return len(list((root / ".vaultmem" / "whoosh").glob("*.seg")))


def test_a_build_in_segments_searches_like_one_segment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = make_vault(tmp_path / "one")
    many = make_vault(tmp_path / "many")
    generate(one, 300)
    generate(many, 300)
    Cli(one).ok("index", "--full")
    monkeypatch.setattr(fulltext, "SEGMENT_CHARS", 20_000)  # ~300 notes of ~1 kB: a commit every ~15 notes
    report = Cli(many).ok("index", "--full")
    assert report["fulltext_docs"] == 300
    assert _segments(one) == 1
    assert _segments(many) >= 2  # the last commit may merge the smallest (Whoosh MERGE_SMALL)
    assert index_contents(many)["whoosh"] == index_contents(one)["whoosh"]
    assert _searches(Cli(many)) == _searches(Cli(one))
    # An edit after a build in segments replaces the note's one document.
    note = many / "shared" / "gen" / "note-00007.md"
    note.write_text(note.read_text() + "\nA zebrafinch was seen.\n")
    data = Cli(many).ok("search", "zebrafinch", "--mode", "bm25")
    assert [r["summary"]["path"] for r in data["results"]] == ["shared/gen/note-00007.md"]
    assert len(index_contents(many)["whoosh"]) == 300
