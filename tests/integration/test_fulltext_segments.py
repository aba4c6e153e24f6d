"""A large lexical build commits a segment per SEGMENT_CHARS of text (issue 14: one writer
over 50k notes spilled its postings to disk and ran a third slower per note). The segments
change nothing a search returns: the same notes, the same scores, as one segment gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration._vaults import generate, index_contents, make_vault
from vaultmem.index import fulltext, workers

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


@pytest.mark.parametrize("backend", ["none", "auto"])
def test_a_build_in_worker_processes_searches_like_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, hash_embedder: object
) -> None:
    """A fresh build of many notes runs in spawned Whoosh workers (a segment each): the
    same documents and the same scores as one process gives. With vectors the bodies go
    to the workers counted already (analysis.Analyzed, pickled with its counts)."""
    one = make_vault(tmp_path / "one", backend=backend)
    two = make_vault(tmp_path / "two", backend=backend)
    generate(one, 300)
    generate(two, 300)
    Cli(one).ok("index", "--full")
    monkeypatch.setattr(workers, "PARALLEL_MIN_DOCS", 100)
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert workers.build_workers(300) == 2 and workers.build_workers(99) == 1
    spawned = []
    made = workers.parallel_writer
    monkeypatch.setattr(workers, "parallel_writer", lambda *a: spawned.append(a[1]) or made(*a))
    report = Cli(two).ok("index", "--full")
    assert report["fulltext_docs"] == 300 and spawned == [2]
    assert _segments(one) == 1
    assert _segments(two) == 2  # 300 notes in jobs of 100: both workers wrote one
    assert index_contents(two)["whoosh"] == index_contents(one)["whoosh"]
    assert _searches(Cli(two)) == _searches(Cli(one))
    # Later changes are single-process updates of the same index.
    note = two / "shared" / "gen" / "note-00011.md"
    note.write_text(note.read_text() + "\nA zebrafinch was seen.\n")
    data = Cli(two).ok("search", "zebrafinch", "--mode", "bm25")
    assert [r["summary"]["path"] for r in data["results"]] == ["shared/gen/note-00011.md"]
    assert len(index_contents(two)["whoosh"]) == 300


def test_a_failed_parallel_build_is_built_again_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Workers that fail (here: their writer cannot be made; a killed worker loses its
    segment, caught by the count) cost time, never notes."""
    root = make_vault(tmp_path / "v")
    generate(root, 150)
    monkeypatch.setattr(workers, "build_workers", lambda docs: 2)
    made = fulltext.FullTextIndex._writer

    def broken(self: fulltext.FullTextIndex, workers: int) -> object:
        if workers > 1:
            raise OSError("no room for a worker")
        return made(self, workers)

    monkeypatch.setattr(fulltext.FullTextIndex, "_writer", broken)
    with caplog.at_level("WARNING", logger="vaultmem.index"):
        report = Cli(root).ok("index", "--full")
    assert report["fulltext_docs"] == 150 and report["errors"] == []
    assert "building it again in one process" in caplog.text
    assert len(index_contents(root)["whoosh"]) == 150
    assert _segments(root) == 1


def test_a_parallel_build_that_loses_a_note_is_built_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that dies after its work was handed out leaves its notes out of the commit:
    the count after it shows, and the build is done again in this process."""
    root = make_vault(tmp_path / "v")
    generate(root, 150)
    monkeypatch.setattr(workers, "build_workers", lambda docs: 2)
    real_write = fulltext.FullTextIndex._write

    def lossy(self: fulltext.FullTextIndex, upserts, deletes, fresh, workers):  # type: ignore[no-untyped-def]
        if workers > 1:
            upserts = list(upserts)[:-3]  # as if a worker's last job never came back
        return real_write(self, upserts, deletes, fresh, workers)

    monkeypatch.setattr(fulltext.FullTextIndex, "_write", lossy)
    report = Cli(root).ok("index", "--full")
    assert report["fulltext_docs"] == 150
    assert len(index_contents(root)["whoosh"]) == 150


def test_a_parallel_build_from_a_script_without_a_main_guard_runs_the_script_once(tmp_path: Path) -> None:
    """Spawned workers run the parent's main script again unless told otherwise: a caller's
    script without `if __name__ == "__main__"` must neither run twice nor hang the build."""
    import subprocess
    import sys

    root = make_vault(tmp_path / "v")
    generate(root, 250)
    runs = tmp_path / "runs.txt"
    script = tmp_path / "build.py"
    script.write_text(
        "import sys\n"
        f"open({str(runs)!r}, 'a').write('ran\\n')\n"
        "from vaultmem.index import workers\n"
        "workers.PARALLEL_MIN_DOCS = 100\n"
        "workers.os.sched_getaffinity = lambda pid: {0, 1}\n"
        "from vaultmem.cli.entry import main\n"
        f"sys.argv = ['vaultmem', 'index', '--full', '--json', '--vault', {str(root)!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert runs.read_text() == "ran\n"
    assert "building it again" not in done.stderr
    assert _segments(root) == 2
    assert len(index_contents(root)["whoosh"]) == 250
