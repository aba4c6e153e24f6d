"""The always-warm CLI: a read command that finds no watcher starts one and is answered by
it; the watcher leaves after its idle time; VAULTMEM_NO_AUTOSTART=1 and `[watch] autostart
= false` turn it off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vaultmem.daemon.client import ping

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
pytestmark = pytest.mark.slow


def _run(vault: Path, *args: str, autostart: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_NO_AUTOSTART"}
    if not autostart:
        env["VAULTMEM_NO_AUTOSTART"] = "1"
    return subprocess.run([VAULTMEM, *args, "--vault", str(vault), "--json"], env=env, capture_output=True, text=True)


def _set_watch(vault: Path, text: str) -> None:
    config = vault / "vaultmem.toml"
    body = config.read_text()
    assert "\n[watch]\n" in body  # the template's section, its settings commented out
    config.write_text(body.replace("\n[watch]\n", f"\n[watch]\n{text}\n", 1))


def _wait_gone(vault: Path, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ping(str(vault), timeout_s=0.5) is None:
            return True
        time.sleep(0.2)
    return False


def test_search_starts_a_watcher_that_leaves_when_idle(vault: Path) -> None:
    _set_watch(vault, "idle_exit_minutes = 0.05")  # 3 s
    assert ping(str(vault)) is None
    first = _run(vault, "search", "example")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["query"] == "example"
    reply = ping(str(vault))
    assert reply is not None, "the search should have started a watcher"
    served = reply["served"]
    assert served >= 1  # the search was answered by it
    status = json.loads(_run(vault, "status").stdout)
    assert status["watcher"]["running"] is True
    assert status["watcher"]["idle_exit_s"] == pytest.approx(3.0)
    try:
        assert _wait_gone(vault, 15), "the watcher should exit after its idle time"
    finally:
        subprocess.run([VAULTMEM, "watch", "--stop", "--vault", str(vault)], capture_output=True)


@pytest.mark.parametrize("how", ["env", "config"])
def test_autostart_can_be_turned_off(vault: Path, how: str) -> None:
    if how == "config":
        _set_watch(vault, "autostart = false")
    res = _run(vault, "search", "example", autostart=how != "env")
    assert res.returncode == 0, res.stderr
    assert ping(str(vault)) is None
