"""The line a command forwarded to a busy watcher shows on a terminal while it waits."""

from __future__ import annotations

from typing import Any

import pytest

from vaultmem.daemon.client import wait_text


@pytest.mark.parametrize(
    ("status", "waited", "text"),
    [
        ({"progress": {"stage": "lexical index", "done": 312, "total": 1000}}, 1.2,
         "vaultmem: indexing the vault: 312 of 1,000 (1 s)…"),
        ({"progress": {"stage": "embedding", "done": 2048, "total": 12000}, "model": "loading"}, 14.0,
         "vaultmem: embedding notes: 2,048 of 12,000 (14 s)…"),
        ({"progress": {"stage": "reading notes", "done": 0, "total": 0}}, 1.0,
         "vaultmem: reading the vault's notes (1 s)…"),
        ({"progress": None, "model": "loading"}, 3.4, "vaultmem: waiting for the embedding model to load (3 s)…"),
        ({"progress": None, "model": "ready"}, 2.0, "vaultmem: waiting for the watcher (2 s)…"),
        (None, 5.0, "vaultmem: waiting for the watcher (5 s)…"),  # the ping itself went unanswered
    ],
)  # fmt: skip
def test_wait_text(status: dict[str, Any] | None, waited: float, text: str) -> None:
    assert wait_text(status, waited) == text


@pytest.mark.parametrize(
    ("status", "text"),
    [
        ({"progress": {"stage": "reading notes", "done": 600, "total": 3009}}, "vaultmem: indexing the vault (4 s)…"),
        ({"progress": {"stage": "embedding", "done": 20, "total": 700}}, "vaultmem: embedding notes (4 s)…"),
    ],
)
def test_a_ghost_waits_without_the_vaults_counts(status: dict[str, Any], text: str) -> None:
    """An attacker's walk: the counts are the whole vault's, another ghost's private notes
    among them ('600 of 3,009' on alice's terminal, who sees 7 notes)."""
    assert wait_text(status, 4.0, counted=False) == text


def test_a_ghosts_progress_hook_gets_no_counts() -> None:
    from vaultmem.services.app import uncounted

    seen: list[tuple[str, int, int]] = []

    def person(stage: str, done: int, total: int) -> None:
        seen.append((stage, done, total))

    assert uncounted(None, person) is person  # a person sees the counts
    hook = uncounted("alice", person)
    assert hook is not None
    hook("reading notes", 700, 700)
    assert seen == [("reading notes", 0, 0)]
    assert uncounted("alice", None) is None
