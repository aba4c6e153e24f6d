"""Issue 3, acceptance 5: bad files never stop indexing. Binary, latin-1, a YAML alias bomb,
a 3 MB file, a front matter that is a list, a symlink to a file outside the vault: `index`
exits 0 and reports each (in `index` and in `status`), and nothing outside the vault is
indexed or readable through any command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration._vaults import index_contents, make_vault, note, paths_of

SECRET = "xylophonesecretword"


def _alias_bomb() -> str:
    """A "billion laughs" front matter: nine levels of nine aliases each."""
    lines = ["---", 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join([*lines, "title: Bomb", "---", "The alias bomb body mentions a pangolin.", ""])


BOMB = _alias_bomb()


def _bad_vault(root: Path, outside: Path) -> dict[str, str]:
    """Good notes plus one of each bad kind; returns relpath -> expected problem code."""
    note(root, "shared/good.md", "A good note about the pangolin reserve.\n", title="Good")
    note(root, "shared/target.md", "Linked from the latin-1 note.\n", title="Target")
    (root / "shared/binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    (root / "shared/latin1.md").write_bytes(
        "---\ntitle: Café latin\n---\nUn café crème près du pangolin, voir [[Target]].\n".encode("latin-1")
    )
    (root / "shared/bomb.md").write_text(BOMB)
    big = "---\ntitle: Huge\n---\n" + ("pangolin filler line of text " * 40 + "\n") * 2700
    (root / "shared/huge.md").write_text(big)
    assert (root / "shared/huge.md").stat().st_size > 3_000_000
    (root / "shared/listfm.md").write_text("---\n- one\n- two\n---\nA list front matter about the pangolin.\n")
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_text(f"---\ntitle: Outside secret\n---\nThe {SECRET} must never be indexed.\n")
    (root / "shared/escape.md").symlink_to(outside)
    (root / "shared/loop-a.md").symlink_to(root / "shared/loop-b.md")  # a -> b -> a
    (root / "shared/loop-b.md").symlink_to(root / "shared/loop-a.md")
    (root / "shared/notepad.md").write_bytes("\ufeffSaved as 'Unicode' about the pangolin.\n".encode("utf-16-le"))
    return {
        "shared/binary.md": "binary",
        "shared/latin1.md": "not_utf8",
        "shared/bomb.md": "yaml_alias_bomb",
        "shared/huge.md": "too_large",
        "shared/listfm.md": "frontmatter_not_mapping",
        "shared/escape.md": "symlink_outside",
        "shared/loop-a.md": "symlink_loop",
        "shared/loop-b.md": "symlink_loop",
        "shared/notepad.md": "not_utf8",
    }


@pytest.fixture
def bad(tmp_path: Path, hash_embedder: object) -> tuple[Cli, Path, dict[str, str]]:
    root = make_vault(tmp_path / "bad", backend="auto")
    expected = _bad_vault(root, tmp_path / "elsewhere" / "secret.md")
    return Cli(root), root, expected


def _codes(errors: list[dict[str, str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for e in errors:
        out.setdefault(e["path"], set()).add(e["code"])
    return out


def test_index_reports_each_bad_file_and_exits_0(bad: tuple[Cli, Path, dict[str, str]]) -> None:
    cli, _, expected = bad
    res = cli("index")
    assert res.exit_code == 0, res.stderr
    assert "Traceback" not in res.stderr
    report = res.data
    codes = _codes(report["errors"])
    for path, code in expected.items():
        assert code in codes.get(path, set()), (path, codes.get(path))
    assert set(codes) == set(expected)
    for e in report["errors"]:
        assert e["message"] and SECRET not in e["message"]
    status = cli.ok("status")
    assert _codes(status["index"]["errors"]) == codes
    assert status["index"]["fresh"] is True


def test_degraded_notes_are_indexed_and_unreadable_ones_are_not(bad: tuple[Cli, Path, dict[str, str]]) -> None:
    cli, root, _ = bad
    cli.ok("index")
    contents = index_contents(root)
    # latin-1 and list front matter degrade to plain markdown; the alias bomb's front matter
    # is refused but its body is still a note.
    indexed = {"shared/good.md", "shared/target.md", "shared/latin1.md", "shared/listfm.md", "shared/bomb.md"}
    assert contents["whoosh"] == indexed
    assert contents["chroma"] == indexed
    found = set(paths_of(cli.ok("search", "pangolin", "--mode", "bm25", "--limit", "20")))
    assert found == {"shared/good.md", "shared/latin1.md", "shared/listfm.md", "shared/bomb.md"}
    assert cli.ok("status")["notes"]["total"] == len(indexed)
    # the latin-1 note still links
    assert {i["path"] for i in cli.ok("get", "Target")["links"]["in"]} == {"shared/latin1.md"}


def test_nothing_outside_the_vault_is_readable(bad: tuple[Cli, Path, dict[str, str]]) -> None:
    cli, _, _ = bad
    outputs = [cli("index").stdout, cli("status").stdout]
    # Search by the outside file's other words (the query itself is echoed back).
    for mode in ("bm25", "vector", "hybrid"):
        res = cli("search", "must never be indexed outside", "--mode", mode, "--limit", "50")
        assert res.exit_code == 0
        assert "shared/escape.md" not in paths_of(res.data)
        outputs.append(res.stdout)
    for ref in ("shared/escape.md", "Outside secret", "escape"):
        res = cli("get", ref)
        assert res.exit_code == 3, ref
        assert SECRET not in res.stdout + res.stderr
    q = cli("query", SECRET)
    assert q.exit_code == 0 and q.data["matches"] == []
    q = cli("query", "never indexed", "--min-relevance", "0")
    assert q.exit_code == 0 and "shared/escape.md" not in [m["path"] for m in q.data["matches"]]
    outputs.append(q.stdout)
    assert not any(SECRET in out for out in outputs)
    assert not any("Outside secret" in out for out in outputs)


def test_a_second_index_leaves_bad_files_alone(bad: tuple[Cli, Path, dict[str, str]]) -> None:
    cli, _, expected = bad
    cli.ok("index")
    again = cli.ok("index")
    assert (again["added"], again["updated"], again["deleted"]) == (0, 0, 0)
    assert set(_codes(again["errors"])) == set(expected)


def test_files_read_in_worker_processes_make_the_rows_one_process_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first index of many files parses them in worker processes (index/rows.py): every
    row (problems of the bad files included) is the row one process makes."""
    import sqlite3

    from tests.integration._vaults import generate
    from vaultmem.index import workers
    from vaultmem.paths import StatePaths

    def rows(root: Path) -> list[tuple[object, ...]]:
        with sqlite3.connect(StatePaths(root).db) as conn:
            cols = [c[1] for c in conn.execute("PRAGMA table_info(files)") if c[1] != "mtime_ns"]
            return sorted(conn.execute(f"SELECT {', '.join(cols)} FROM files"))

    one, two = make_vault(tmp_path / "one"), make_vault(tmp_path / "two")
    for root in (one, two):
        generate(root, 260)
        _bad_vault(root, tmp_path / "elsewhere" / "secret.md")
    first = Cli(one).ok("index")
    monkeypatch.setattr(workers, "PARALLEL_MIN_DOCS", 100)
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    started = []
    made = workers.in_processes
    monkeypatch.setattr(
        "vaultmem.index.rows.in_processes", lambda fn, jobs, n: started.append(len(jobs)) or made(fn, jobs, n)
    )
    second = Cli(two).ok("index")
    assert started == [2]  # 268 files in batches of 200
    assert rows(two) == rows(one)
    assert {k: v for k, v in second.items() if k != "seconds"} == {k: v for k, v in first.items() if k != "seconds"}
    assert index_contents(two)["whoosh"] == index_contents(one)["whoosh"]
    assert Cli(two).ok("search", SECRET, "--mode", "bm25")["results"] == []


def test_a_batch_whose_worker_fails_is_read_in_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.integration._vaults import generate
    from vaultmem.index import rows

    root = make_vault(tmp_path / "v")
    generate(root, 120)
    monkeypatch.setattr(rows, "build_workers", lambda n: 2)

    def half_broken(fn, jobs, n):  # type: ignore[no-untyped-def]
        for i, job in enumerate(jobs):
            yield job, (RuntimeError("worker died") if i % 2 else fn(job))

    monkeypatch.setattr(rows, "READ_BATCH", 25)
    monkeypatch.setattr(rows, "in_processes", half_broken)
    report = Cli(root).ok("index")
    assert report["added"] == 120 and report["errors"] == []
    assert len(index_contents(root)["whoosh"]) == 120
