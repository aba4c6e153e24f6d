"""Issue 22, item 1: on a case-insensitive disk (macOS, Windows: where most Obsidian users
are) scope is decided by the folder a file is in, never by how a user spells its path.

The vault lives on a real case-insensitive, case-preserving file system the test mounts
itself: tests/_casefold_fs.py, a FUSE passthrough (libfuse 2 and `fusepy`; `.ci/run`
installs libfuse when it is missing). Its derived state is kept on the local disk
($VAULTMEM_STATE_DIR), as for any vault on a file system SQLite cannot map.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli

pytestmark = pytest.mark.slow  # mounts a FUSE file system

FS = Path(__file__).resolve().parents[1] / "_casefold_fs.py"


def _fuse_missing() -> str | None:
    try:
        import fuse  # type: ignore[import-untyped]  # noqa: F401
    except (ImportError, OSError) as exc:  # OSError: libfuse.so.2 is not installed
        return f"no FUSE binding ({exc})"
    if not os.path.exists("/dev/fuse") or shutil.which("fusermount") is None:
        return "no /dev/fuse or fusermount on this machine"
    return None


@pytest.fixture
def folded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A vault (ghosts alice and bob) on a case-insensitive file system."""
    missing = _fuse_missing()
    if missing:
        pytest.skip(missing)
    backing, mountpoint = tmp_path / "backing", tmp_path / "mnt"
    backing.mkdir()
    mountpoint.mkdir()
    proc = subprocess.Popen(
        [sys.executable, str(FS), str(backing), str(mountpoint)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 20
        while not os.path.ismount(mountpoint):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.skip(f"mounting the case-insensitive file system failed: {proc.stderr.read()[-300:]!r}")
            time.sleep(0.05)
        monkeypatch.setenv("VAULTMEM_STATE_DIR", str(tmp_path / "state"))
        root = mountpoint / "vault"
        root.mkdir()
        (root / "vaultmem.toml").write_text('[vault]\nghosts = ["alice", "bob"]\n\n[embedding]\nbackend = "none"\n')
        assert (mountpoint / "VAULT" / "VAULTMEM.TOML").exists()  # it is case-insensitive
        yield root
    finally:
        subprocess.run(["fusermount", "-u", "-z", str(mountpoint)], capture_output=True)
        proc.terminate()
        proc.wait(timeout=20)


def test_reference_search_classifies_a_listed_file_by_its_folder_not_its_spelling(folded: Path) -> None:
    cli = Cli(folded)
    made = cli.ok("note", "create", "--title", "Secret", "--type", "fact", "--scope", "private",
                  "--body", "The zanzibar vault code is 4471.", ghost="alice")  # fmt: skip
    name = made["path"].rsplit("/", 1)[1]
    (folded / "reference").mkdir()
    (folded / "reference" / "Vault topic.md").write_text(
        "---\ntitle: Vault topic\ntype: topic\nfiles:\n"
        f"  - Private/alice/{name}\n  - PRIVATE/ALICE/*.md\n  - private/Alice/{name.upper()}\n"
        "  - .VAULTMEM/*\n---\nWhere the codes are.\n"
    )
    cli.ok("index")
    bob = cli("reference", "search", "Vault topic", "zanzibar vault code", ghost="bob")
    assert bob.exit_code == 0, bob.stdout
    assert "4471" not in bob.stdout and "zanzibar" not in bob.stdout.replace("zanzibar vault code", "")
    assert bob.data["results"] == [] and bob.data["topic"]["files"] == 0
    alice = cli.ok("reference", "search", "Vault topic", "zanzibar vault code", ghost="alice")
    assert [r["summary"]["path"] for r in alice["results"]] == [made["path"]]  # her file, spelled as on disk


def test_a_move_into_another_ghosts_folder_is_refused_whatever_its_spelling(folded: Path) -> None:
    cli = Cli(folded)
    shared = cli.ok(
        "note", "create", "--title", "Plan", "--type", "fact", "--scope", "shared", "--body", "x", ghost="bob"
    )
    mine = cli.ok(
        "note", "create", "--title", "Bobs", "--type", "fact", "--scope", "private", "--body", "x", ghost="bob"
    )
    cli.ok("note", "create", "--title", "Hers", "--type", "fact", "--scope", "private", "--body", "y", ghost="alice")
    # spelled otherwise, alice's folder looked like a shared one: bob moved notes into it
    for target in ("Private/alice/Moved.md", "PRIVATE/ALICE/", "private/Alice/Moved"):
        res = cli("note", "move", shared["id"], target, ghost="bob")
        assert res.exit_code == 5 and "you may write" in res.data["error"]["message"], (target, res.stdout)
    assert sorted(p.name for p in (folded / "private" / "alice").iterdir()) == ["Hers.md"]
    # into his own folder in another spelling: it lands where the disk has his folder
    moved = cli.ok("note", "move", mine["id"], "PRIVATE/BOB/Renamed.md", ghost="bob")
    assert moved["moves"][0]["to"] == "private/bob/Renamed.md"
    assert cli.ok("get", mine["id"], ghost="bob")["note"]["path"] == "private/bob/Renamed.md"


def test_a_path_in_another_spelling_finds_no_hidden_note(folded: Path) -> None:
    cli = Cli(folded)
    made = cli.ok(
        "note", "create", "--title", "Secret", "--type", "fact", "--scope", "private", "--body", "z", ghost="alice"
    )
    for ref in (made["path"].upper(), "Private/alice/" + made["path"].rsplit("/", 1)[1], made["path"]):
        res = cli("get", ref, ghost="bob")
        assert res.exit_code == 3, (ref, res.stdout)


def test_a_scope_folder_a_person_made_in_another_case_stays_private(folded: Path) -> None:
    """A person made `Private/` in Finder before any ghost wrote: the ghost's private notes
    land in it (the disk folds `private/` onto it) and the walk reports `Private/alice/...`.
    They are alice's, never shared; and a project closed in vaultmem.toml stays closed in
    the folder a person spelled `Project/Closed/`."""
    (folded / "vaultmem.toml").write_text(
        '[vault]\nghosts = ["alice", "bob"]\n\n[embedding]\nbackend = "none"\n\n'
        '[projects.closed]\nmembers = ["alice"]\n'
    )
    (folded / "Private").mkdir()
    (folded / "Project" / "Closed").mkdir(parents=True)
    (folded / "Project" / "Closed" / "Plan.md").write_text("# Plan\n\nThe quetzal budget is 90k.\n")
    cli = Cli(folded)
    made = cli.ok("note", "create", "--title", "Secret", "--type", "fact", "--scope", "private",
                  "--body", "The zanzibar vault code is 4471.", ghost="alice")  # fmt: skip
    assert sorted(p.name for p in folded.iterdir() if p.name.lower() == "private") == ["Private"]
    cli.ok("index")
    for query in ("zanzibar vault code", "quetzal budget"):
        bob = cli("search", query, "--mode", "bm25", ghost="bob")
        assert bob.exit_code == 0 and bob.data["results"] == [], bob.stdout
    listed = cli.ok("list", ghost="bob")
    assert "zanzibar" not in json.dumps(listed).lower() and "Secret" not in json.dumps(listed)
    assert cli("get", made["id"], ghost="bob").exit_code == 3
    hers = cli.ok("search", "zanzibar vault code", "--mode", "bm25", ghost="alice")["results"]
    assert [r["summary"]["id"] for r in hers] == [made["id"]]
    assert len(cli.ok("search", "quetzal budget", "--mode", "bm25", ghost="alice")["results"]) == 1
