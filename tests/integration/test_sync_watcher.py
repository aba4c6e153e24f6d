"""Issue 27, item 2: a pull of 1,000 changed notes is indexed by a running watcher in one
reconcile — git holds its index lock while it writes the tree, and the watcher waits for it
instead of indexing a half-written tree every second — and searches asked meanwhile are
answered throughout (from the indexes as they were, then as they are)."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.test_clones_merge import clones, git
from tests.integration.test_sync import GIT_ENV
from tests.integration.test_watcher import Watcher, ok, start_watcher, vm, wait_until

__all__ = ["clones", "start_watcher"]  # fixtures, used by name below

PULLED = 1000
RECONCILED = re.compile(r"reconciled \((\w+)\): (\d+) added, (\d+) updated, (\d+) deleted, (\d+) moved")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]


def test_a_pull_of_a_thousand_notes_is_one_reconcile_and_searches_answer_throughout(
    clones: tuple[Path, Path],
    start_watcher: Callable[..., Watcher],
) -> None:
    one, two = clones
    (one / "shared" / "Anchor.md").write_text("# Anchor\n\nThe lighthouse keeper's logbook.\n")
    git(one, "add", "-A")
    git(one, "commit", "-qm", "anchor")
    git(one, "push", "-q", "origin", "main")
    git(two, "pull", "-q", "--no-rebase", "origin", "main")
    folder = one / "shared" / "pulled"
    folder.mkdir()
    filler = " ".join(f"word{k}" for k in range(300))  # notes of a realistic size: a slower checkout
    for i in range(PULLED):
        (folder / f"Pulled {i}.md").write_text(f"# Pulled {i}\n\nburstmarker note{i} {filler}\n")
    git(one, "add", "-A")
    git(one, "commit", "-qm", "a thousand notes")
    git(one, "push", "-q", "origin", "main")

    w = start_watcher(two)
    wait_until(lambda: "reconciled (start)" in w.stderr(), timeout=60)
    seen = len(w.stderr())
    answers: list[tuple[int, list[str]]] = []
    stop = threading.Event()

    def search_meanwhile() -> None:
        while not stop.is_set():
            res = vm(two, "search", "lighthouse keeper", "--mode", "bm25", timeout=120)
            results = json.loads(res.stdout)["results"] if res.returncode == 0 else []
            paths = [r["summary"]["path"] for r in results]
            answers.append((res.returncode, paths))

    searcher = threading.Thread(target=search_meanwhile)
    searcher.start()
    try:
        wait_until(lambda: len(answers) >= 1, timeout=60)
        synced = vm(two, "sync", timeout=300, **GIT_ENV)
        assert synced.returncode == 0, synced.stderr
        report = json.loads(synced.stdout)
        assert report["pulled"]["notes"] == PULLED and report["indexed"] == "synced"
        for i in (0, 437, PULLED - 1):  # indexed by the time sync returned
            found = ok(two, "search", f"burstmarker note{i}", "--mode", "bm25", "--limit", "1")["results"]
            assert [r["summary"]["title"] for r in found] == [f"Pulled {i}"]
        wait_until(lambda: len(answers) >= 3, timeout=120)  # and searches went on after it
    finally:
        stop.set()
        searcher.join(timeout=180)
    assert answers and all(code == 0 and paths[:1] == ["shared/Anchor.md"] for code, paths in answers), answers
    reconciles = [m.groups() for m in RECONCILED.finditer(w.stderr()[seen:])]
    changed = [r for r in reconciles if any(int(n) for n in r[1:])]
    assert len(changed) == 1, reconciles  # the whole burst, once
    assert int(changed[0][1]) == PULLED
    assert ok(two, "status")["index"]["pending"] == 0
