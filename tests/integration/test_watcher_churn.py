"""The watcher's memory stays flat under churn (issue 14): many saved edits, each re-indexed,
leave its resident memory where it was. The bench measures the issue's figure, 2,000 edits
over 10k notes with vectors, the end within 15% of the RSS after the first 100 (scripts/
bench.py --only scale). This is the check at a smaller scale, backend none, in seconds.

At this scale the watcher is mostly the bare interpreter (~55 MB), and the buffers a Whoosh
segment merge leaves in the heap (one merge every dozen commits) are alone ~15% of it: so
the test asks that the growth stops. Measured (600 notes, RSS every 300 edits, MB): 53 55
56 57 63 60 61 62 66 64 — merges at 1,300 and 2,500 edits, no trend between them. A leak of
a few kilobytes an edit would show in the second half.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration._vaults import generate, make_vault
from tests.integration.test_watcher import Watcher, ok, start_watcher, wait_until

__all__ = ["start_watcher"]  # the fixture, used by name below

NOTES = 600
EDITS = 2000
ROUND = 100
WARM = 500  # edits before the heap has settled: caches filled, the first merges done
OVERALL = 0.25  # the end against the RSS after WARM edits
SECOND_HALF = 0.10  # the end against the RSS after the first half: the growth has stopped


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
def test_watcher_memory_is_flat_under_churn(tmp_path: Path, start_watcher: Callable[..., Watcher]) -> None:
    vault = make_vault(tmp_path / "vault")
    paths = generate(vault, NOTES)
    ok(vault, "index")
    w = start_watcher(vault)
    rng = random.Random(14)
    originals = {p: (vault / p).read_text() for p in paths}
    readings: list[float] = []
    last_token = ""
    for done in range(ROUND, EDITS + 1, ROUND):
        for i, rel in enumerate(rng.sample(paths, ROUND)):
            last_token = f"churnword{done}x{i}"
            target = vault / rel
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.write_text(f"{originals[rel]}\n\nEdit {done}: {last_token} and more words.\n")
            os.replace(tmp, target)  # the way editors save
        last = rel
        # Every edit of the round indexed: the index is fresh and the last word is found.
        wait_until(lambda: ok(vault, "status")["index"]["fresh"], timeout=30, step=0.1)
        found = [r["summary"]["path"] for r in ok(vault, "search", last_token, "--mode", "bm25")["results"]]
        assert found == [last]
        time.sleep(0.2)
        readings.append(rss_mb(w.proc.pid))
    assert w.proc.poll() is None
    # In a clean-clone CI run (MB, every 100 edits): 64 68 70 70 71 73 74 76 78 78 78 78 81
    # 78 78 79 79 80 80 81 — the first reading is still warming up, so the overall bound
    # counts from the WARM-th edit. Two local runs of the suite read 65 … 74 75 | 75 78 81 78
    # … 81 and 65 … 75 76 | 76 78 81 77 … 81: the same end, reached later, so the second
    # half allows 10% (a leak of a few kilobytes an edit still shows as a steady climb).
    first, half, end = readings[WARM // ROUND - 1], readings[len(readings) // 2 - 1], readings[-1]
    shown = f"RSS after each {ROUND} edits (MB): {[round(x) for x in readings]}"
    assert end <= first * (1 + OVERALL), shown
    assert end <= half * (1 + SECOND_HALF), shown
