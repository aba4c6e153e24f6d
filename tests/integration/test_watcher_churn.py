"""The watcher's memory stays flat under churn (issue 14): many saved edits, each re-indexed,
leave its resident memory where it was. The bench measures the issue's figure, 2,000 edits
over 10k notes with vectors, the end within 15% of the RSS after the first 100 (`python -m
tools.bench --only scale`). This is the check at a smaller scale, backend none, in seconds.

What it measures must not follow the scheduler (issue 22): with file events, how edits fall
into reconciles (and so how many Whoosh commits and merges they make), and when the
time-gated heap trims come, depend on how busy the machine is. So the watcher runs without
events (`--no-events`, as on a network share) and each round of edits is indexed by exactly
one reconcile, which a sync asks for: the same commits, merges and trims on any machine.

At this scale the watcher is mostly the bare interpreter (~55 MB), and the buffers a Whoosh
segment merge leaves in the heap (one merge every dozen commits) are alone ~15% of it: so
the test asks that the growth stops. A leak of a few kilobytes an edit would show in the
second half.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration._vaults import generate, make_vault
from tests.integration.test_watcher import Watcher, ok, start_watcher
from vaultmem.daemon import client

__all__ = ["start_watcher"]  # the fixture, used by name below

NOTES = 600
EDITS = 2000
# Over 100 fulltext documents, a reconcile trims the heap at once (daemon/loop.py), not when
# the clock allows: every round ends with a trim.
ROUND = 125
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
    w = start_watcher(vault, "--no-events", "--rescan-interval", "86400")
    rng = random.Random(14)
    originals = {p: (vault / p).read_text() for p in paths}
    readings: list[float] = []
    for done in range(ROUND, EDITS + 1, ROUND):
        edited = rng.sample(paths, ROUND)
        for i, rel in enumerate(edited):
            last_token = f"churnword{done}x{i}"
            target = vault / rel
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.write_text(f"{originals[rel]}\n\nEdit {done}: {last_token} and more words.\n")
            os.replace(tmp, target)  # the way editors save
        # One reconcile indexes the round (a sync asks for it and waits until it is done).
        assert client.sync(str(vault), edited, timeout_s=60) == "synced"
        assert w.ping()["reconciles"] == 1 + done // ROUND  # the start's, then one a round
        found = [r["summary"]["path"] for r in ok(vault, "search", last_token, "--mode", "bm25")["results"]]
        assert found == [rel]
        readings.append(rss_mb(w.proc.pid))
    assert w.proc.poll() is None
    first, half, end = readings[WARM // ROUND - 1], readings[len(readings) // 2 - 1], readings[-1]
    shown = f"RSS after each {ROUND} edits (MB): {[round(x) for x in readings]}"
    print(shown)
    assert end <= first * (1 + OVERALL), shown
    assert end <= half * (1 + SECOND_HALF), shown
