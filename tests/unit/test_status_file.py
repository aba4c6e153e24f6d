"""The watcher's status file (daemon/status.py): written atomically, and a vault renamed or
deleted under the watcher does not turn a status write into an error (the runner notices the
vault is gone and stops on its own)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from vaultmem.daemon.status import StatusFile


def test_a_status_write_replaces_the_file_whole(tmp_path: Path) -> None:
    status = StatusFile(tmp_path / ".watcher.json", lambda: {"state": "watching"})
    status.write(pid=7)
    data = json.loads((tmp_path / ".watcher.json").read_text(encoding="utf-8"))
    assert data["state"] == "watching" and data["pid"] == 7 and data["heartbeat"]
    assert [p.name for p in tmp_path.iterdir()] == [".watcher.json"]  # no temporary file left


def test_a_status_write_after_the_vault_went_is_not_an_error(tmp_path: Path) -> None:
    home = tmp_path / "vault" / ".vaultmem"
    home.mkdir(parents=True)
    status = StatusFile(home / ".watcher.json", lambda: {"state": "watching"})
    (tmp_path / "vault").rename(tmp_path / "moved")
    status.write()
    shutil.rmtree(tmp_path / "moved")
    status.write()
    assert not (tmp_path / "vault").exists()  # nothing made again where the vault was
