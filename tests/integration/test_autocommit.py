"""Issue 25, item 7: `[git] autocommit` lets the watcher commit pending memory changes,
one commit per ghost, once the vault has been quiet; off by default."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration.test_git_review import PERSON, git, new_vault

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def watching(root: Path) -> tuple[object, threading.Thread]:
    from vaultmem.cli.serve import command_runner
    from vaultmem.daemon.client import ping
    from vaultmem.daemon.runner import Settings, Watcher

    watcher = Watcher(root, command_runner, Settings(rescan_s=60.0))
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while (ping(str(root)) or {}).get("state") != "watching":
        assert thread.is_alive() and time.monotonic() < deadline, "the watcher did not come up"
        time.sleep(0.05)
    return watcher, thread


@pytest.mark.parametrize("on", [True, False], ids=["autocommit", "off-by-default"])
def test_the_watcher_commits_once_the_vault_is_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    for key, value in PERSON.items():
        monkeypatch.setenv(key, value)
    root = new_vault(tmp_path / "v")
    if on:
        config = root / "vaultmem.toml"
        text = config.read_text().replace("# autocommit = false", "autocommit = true")
        config.write_text(text.replace("# quiet_seconds = 120", "quiet_seconds = 0.5"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    watcher, thread = watching(root)
    try:
        cli = Cli(root)
        cli.ok("note", "create", "--title", "A", "--type", "fact", "--scope", "shared", "--body", "Alpha.",
               "--source", "x", ghost="alice")  # fmt: skip
        cli.ok("note", "create", "--title", "B", "--type", "fact", "--scope", "shared", "--body", "Beta.",
               "--source", "x", ghost="bob")  # fmt: skip
        deadline = time.monotonic() + (30 if on else 3)
        while time.monotonic() < deadline and git(root, "status", "--porcelain"):
            time.sleep(0.1)
    finally:
        watcher.request_stop()  # type: ignore[attr-defined]
        thread.join(timeout=30)
    log = git(root, "log", "--format=%an", "-3").split()
    if on:
        assert git(root, "status", "--porcelain") == ""
        assert sorted(log[:2]) == ["alice", "bob"]
    else:
        assert (
            log == ["Pat"]
            and "shared/A.md"
            in subprocess.run(
                ["git", "status", "--porcelain", "-uall"], cwd=root, capture_output=True, text=True
            ).stdout
        )
