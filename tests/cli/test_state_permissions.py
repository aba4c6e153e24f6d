"""Issue 22, item 3: the derived state holds titles, paths and words of private notes, so it
is the owner's alone: `.vaultmem/` 0700 and its files 0600, from the first command on, and
a state folder an earlier version left readable is fixed at the next start."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.conftest import Cli


def _loose(state: Path) -> list[str]:
    """Every entry under `state` (itself included) that group or others may use."""
    out = []
    for path in [state, *state.rglob("*")]:
        st = path.lstat()
        if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
            out.append(f"{path.relative_to(state.parent)} {oct(st.st_mode & 0o777)}")
    return out


def test_a_new_vault_keeps_its_derived_state_to_its_owner(vault: Path, cli: Cli) -> None:
    cli.ok("note", "create", "--title", "Secret", "--type", "note", "--scope", "private", "--body", "x", ghost="alice")
    cli.ok("index")
    cli.ok("search", "secret", ghost="alice")
    state = vault / ".vaultmem"
    assert state.stat().st_mode & 0o777 == 0o700
    assert (state / "state.db").exists() and (state / "whoosh").is_dir()
    assert _loose(state) == []


def test_a_state_folder_left_readable_is_fixed_at_the_next_start(vault: Path, cli: Cli) -> None:
    cli.ok("index")
    state = vault / ".vaultmem"
    os.chmod(state, 0o755)  # as an earlier version made it
    for path in state.rglob("*"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    assert _loose(state)
    cli.ok("get", "Welcome to the vault")  # any command that opens the vault
    assert _loose(state) == []


def test_a_watcher_makes_every_file_owner_only(vault: Path) -> None:
    import subprocess
    import sys
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    env["VAULTMEM_CACHE_DIR"] = os.environ["VAULTMEM_CACHE_DIR"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultmem.cli.serve", "--vault", str(vault)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (vault / ".vaultmem" / "watcher.sock").exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        (vault / "shared" / "New.md").write_text("a new note\n")
        cli = Cli(vault)
        deadline = time.monotonic() + 30
        while cli.ok("status")["index"]["pending"]:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        state = vault / ".vaultmem"
        assert _loose(state) == [], _loose(state)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
