"""Issue 22, items 6 and 7, on real mounts the test makes (root only; skipped elsewhere):

6. A read-only vault (a read-only bind mount) can be read: the derived state goes to the
   user's cache folder, with a notice; writes fail with a clear error (not_writable).
7. On a full disk (a small tmpfs filled up) reads go on with the index as it is, and say
   so; writes and indexing fail with a clear error (disk_full), damage nothing, and work
   again once there is room.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli

pytestmark = pytest.mark.slow  # mounts, and the installed CLI as processes

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


needs_mounts = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a file system needs root")


def _run(vault: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed CLI, as a user runs it (its own process)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    full_env.update(VAULTMEM_NO_AUTOSTART="1", VAULTMEM_CACHE_DIR=os.environ["VAULTMEM_CACHE_DIR"], **(env or {}))
    return subprocess.run(
        [VAULTMEM, "--vault", str(vault), *args, "--json"], capture_output=True, text=True, env=full_env, timeout=120
    )


@pytest.fixture
def read_only(vault: Path, tmp_path: Path) -> Iterator[Path]:
    """The vault, mounted read-only elsewhere, with no derived state of its own."""
    Cli(vault).ok("note", "create", "--title", "Kelp forests", "--type", "fact", "--scope", "shared",
                  "--body", "Kelp grows fast.")  # fmt: skip
    subprocess.run(["rm", "-rf", str(vault / ".vaultmem")], check=True)
    mountpoint = tmp_path / "ro"
    mountpoint.mkdir()
    if not (_mount("--bind", str(vault), str(mountpoint)) and _mount("-o", "remount,ro,bind", str(mountpoint))):
        _umount(mountpoint)
        pytest.skip("this machine does not allow a read-only bind mount")
    try:
        yield mountpoint
    finally:
        _umount(mountpoint)


@needs_mounts
def test_a_read_only_vault_can_be_read_and_says_why_it_cannot_be_written(read_only: Path) -> None:
    cache = Path(os.environ["VAULTMEM_CACHE_DIR"]) / "state"
    for args in (("get", "Kelp forests"), ("list",), ("query", "kelp"), ("status",), ("search", "kelp grows")):
        done = _run(read_only, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
    assert "cannot be written" in _run(read_only, "get", "Kelp forests").stderr
    found = _run(read_only, "search", "kelp grows")
    assert '"Kelp forests"' in found.stdout
    assert not (read_only / ".vaultmem").exists() and any(cache.iterdir())
    for args in (("note", "create", "--title", "New", "--type", "fact", "--scope", "shared"), ("capture", "x")):
        done = _run(read_only, *args, env={"VAULTMEM_GHOST": "alice"})
        assert done.returncode == 1 and '"not_writable"' in done.stdout, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mountpoint = tmp_path / "small"
    mountpoint.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mountpoint)):
        pytest.skip("this machine does not allow mounting a tmpfs")
    try:
        yield mountpoint
    finally:
        _umount(mountpoint)


@needs_mounts
def test_a_full_disk_keeps_reads_working_and_writes_fail_clearly(small_disk: Path) -> None:
    from vaultmem.services.vaults import init_vault

    vault = small_disk / "vault"
    init_vault(vault, ["alice"])
    config = vault / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "auto"', 'backend = "none"'))
    assert _run(vault, "index").returncode == 0
    before = _run(vault, "get", "Welcome to the vault").stdout
    (vault / "shared" / "Added meanwhile.md").write_text("x")  # changed, and no room to index it
    filler = small_disk / "filler"
    with filler.open("wb") as fh:  # every byte left
        chunk = b"\0" * (1 << 16)
        try:
            while True:
                fh.write(chunk)
                fh.flush()
        except OSError:
            pass
    for args in (("get", "Welcome to the vault"), ("list",), ("query", "vault"), ("search", "welcome")):
        done = _run(vault, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
    assert _run(vault, "get", "Welcome to the vault").stdout == before
    for args in (("note", "create", "--title", "Big", "--type", "fact", "--scope", "shared", "--body", "y" * 100_000),
                 ("index",)):  # fmt: skip
        done = _run(vault, *args)
        assert done.returncode == 1 and '"disk_full"' in done.stdout, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
    assert not (vault / "shared" / "Big.md").exists()
    assert not [p for p in (vault / "shared").iterdir() if p.name.endswith(".tmp")]  # no half-written note
    filler.unlink()  # room again: everything resumes
    assert _run(vault, "index").returncode == 0
    made = _run(vault, "note", "create", "--title", "Big", "--type", "fact", "--scope", "shared", "--body", "y")
    assert made.returncode == 0, made.stdout
    assert '"Added meanwhile"' in _run(vault, "search", "added meanwhile").stdout
