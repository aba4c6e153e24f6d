"""Probes a ghost could aim at what it may not see, found by an attacker's review: whether a
folder exists in another ghost's private area (a move's target), and how many notes another
ghost wrote (the watcher's own counts in `status`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli
from vaultmem.clock import iso, now
from vaultmem.paths import StatePaths

HIDDEN = ["private/bob", "diary/bob", "inbox/bob"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    area=st.sampled_from(HIDDEN),
    name=st.text(st.characters(codec="utf-8", exclude_characters="/\\\x00"), min_size=1, max_size=20).filter(
        lambda s: s.strip(" .") == s and s not in (".", "..")
    ),
    slash=st.booleans(),
)
def test_a_move_never_tells_whether_a_hidden_folder_exists(
    cli: Cli, vault: Path, area: str, name: str, slash: bool
) -> None:
    """The target is refused the same way whether bob has that folder or not."""
    target = f"{area}/{name}" + ("/" if slash else "")
    answers = []
    for exists in (False, True):
        folder = vault / area / name
        if exists:
            folder.mkdir(parents=True, exist_ok=True)
        res = cli("note", "move", "Welcome to the vault", target, "--dry-run", ghost="alice")
        answers.append((res.exit_code, res.stdout))
        if exists:
            folder.rmdir()
    assert answers[0] == answers[1]
    assert answers[0][0] == 5


@pytest.mark.parametrize("target", ["/etc", "/etcx", "../outside", "shared/../../x"])
def test_a_move_never_tells_whether_a_folder_outside_exists(cli: Cli, target: str) -> None:
    res = cli("note", "move", "Welcome to the vault", target, "--dry-run", ghost="alice")
    assert res.exit_code == 5
    assert f"invalid path {target!r}" in res.data["error"]["message"]


def test_status_shows_a_ghost_no_vault_wide_watcher_counts(cli: Cli, vault: Path) -> None:
    """The watcher's last reconcile, its queue and its errors are the whole vault's: a ghost
    polling `status` counted bob's private writes one by one."""
    report = {
        "pid": os.getpid(),
        "heartbeat": iso(now()),
        "state": "idle",
        "model": "ready",
        "last_reconcile": {"reason": "events", "added": 2, "updated": 0, "deleted": 0, "moved": 0},
        "queue": 3,
        "pending_events": 1,
        "recent_errors": [{"path": "private/bob/secret.md", "error": "x"}],
    }
    status_file = StatePaths(vault).watcher_status
    status_file.parent.mkdir(parents=True, exist_ok=True)
    status_file.write_text(json.dumps(report))
    seen_by_ghost = cli.ok("status", ghost="alice")["watcher"]
    for key in ("last_reconcile", "queue", "pending_events", "recent_errors"):
        assert key not in seen_by_ghost
    assert seen_by_ghost["model"] == "ready"
    assert cli.ok("status")["watcher"]["last_reconcile"]["added"] == 2  # an operator sees the vault's
