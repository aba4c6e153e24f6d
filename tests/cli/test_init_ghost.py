"""Acceptance 2: `init` builds the vault layout of SPEC §1; `ghost add|list`."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from tests.cli._util import git, snapshot
from tests.conftest import Cli

SCOPE_FOLDERS = ["shared", "private", "project", "diary", "inbox", "inbox/shared", "reference"]


def test_init_creates_every_folder_config_and_gitignore(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "v")
    data = cli.ok("init", str(tmp_path / "v"), "--ghost", "alice", "--ghost", "bob", vault=False)
    root = (tmp_path / "v").resolve()
    assert {k: data[k] for k in ("vault", "ghosts", "examples", "kept")} == {
        "vault": str(root),
        "ghosts": ["alice", "bob"],
        "examples": True,
        "kept": [],
    }
    for folder in SCOPE_FOLDERS:
        assert (root / folder).is_dir(), folder
    for ghost in ("alice", "bob"):
        for top in ("private", "diary", "inbox"):
            assert (root / top / ghost).is_dir(), f"{top}/{ghost}"
    assert (root / ".vaultmem").is_dir()
    config = tomllib.loads((root / "vaultmem.toml").read_text())
    assert config["vault"]["ghosts"] == ["alice", "bob"]
    assert ".vaultmem/" in (root / ".gitignore").read_text().splitlines()
    # the template's extras: a README for humans, an example note per scope, a lint hook
    assert (root / "README.md").is_file()
    assert (root / "shared/Welcome to the vault.md").is_file()
    assert (root / "private/alice/Private notes of alice.md").is_file()
    assert (root / "diary/bob/First diary entry of bob.md").is_file()
    hook = root / "hooks/pre-commit"
    assert hook.is_file() and hook.stat().st_mode & 0o111
    assert "vaultmem lint" in hook.read_text()
    # no placeholders left behind
    for path in root.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert "{{" not in text and "_ghost_" not in str(path), path


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_gitignore_really_ignores_state(tmp_path: Path) -> None:
    Cli(tmp_path).ok("init", str(tmp_path / "v"), "--ghost", "alice", vault=False)
    root = tmp_path / "v"
    git(root, "init", "-q")
    (root / ".vaultmem" / "state.db").write_text("x")
    assert git(root, "check-ignore", ".vaultmem/state.db").strip() == ".vaultmem/state.db"
    assert ".vaultmem/" not in git(root, "status", "--porcelain", "--untracked-files=all")


def test_init_vault_lints_clean_and_is_usable(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "v")
    cli.ok("init", str(tmp_path / "v"), "--ghost", "alice", vault=False)
    result = cli.ok("lint")
    assert result["errors"] == 0 and result["warnings"] == 0
    assert cli.ok("get", "Welcome to the vault")["note"]["path"] == "shared/Welcome to the vault.md"
    assert cli.ok("get", "Private notes of alice", ghost="alice")["note"]["owner"] == "alice"


def test_init_without_ghosts_and_via_global_flag(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    assert cli.ok("init", str(tmp_path / "a"), vault=False)["ghosts"] == []
    assert not (tmp_path / "a/private/_ghost_").exists()
    res = cli("--json", "--ghost", "carol", "init", str(tmp_path / "b"), vault=False, json_=False)
    assert res.exit_code == 0, res.stdout
    assert res.data["ghosts"] == ["carol"]
    assert (tmp_path / "b/private/carol").is_dir()


def test_init_refuses_existing_vault_and_changes_nothing(vault: Path, cli: Cli) -> None:
    before = snapshot(vault)
    res = cli("init", str(vault), vault=False)
    assert res.exit_code == 4
    assert res.data["error"]["code"] == "conflict"
    assert snapshot(vault) == before


def test_init_with_bad_ghost_writes_nothing(tmp_path: Path) -> None:
    res = Cli(tmp_path)("init", str(tmp_path / "v"), "--ghost", "../bob", vault=False)
    assert res.exit_code == 5
    assert not (tmp_path / "v").exists()
    assert list(tmp_path.iterdir()) == []


def test_init_under_a_file_is_invalid_input(tmp_path: Path) -> None:
    """`init notes.txt/vault` exited 1 with a NotADirectoryError traceback."""
    (tmp_path / "notes.txt").write_text("a file\n")
    for target in ("notes.txt/vault", "notes.txt/deeper/vault"):
        res = Cli(tmp_path)("init", str(tmp_path / target), vault=False)
        assert res.exit_code == 5, res.stdout + res.stderr
        assert (
            res.data["error"]["code"] == "invalid_input" and "notes.txt is not a folder" in res.data["error"]["message"]
        )
        assert "Traceback" not in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_init_into_existing_folder_keeps_its_files(tmp_path: Path) -> None:
    root = tmp_path / "obsidian"
    (root / "shared").mkdir(parents=True)
    (root / "shared/Welcome to the vault.md").write_text("mine\n")
    (root / "Notes.md").write_text("my notes\n")
    Cli(tmp_path).ok("init", str(root), "--ghost", "alice", vault=False)
    assert (root / "shared/Welcome to the vault.md").read_text() == "mine\n"
    assert (root / "Notes.md").read_text() == "my notes\n"
    assert (root / "vaultmem.toml").is_file()


def test_ghost_add_and_list(vault: Path, cli: Cli) -> None:
    assert cli.ok("ghost", "list") == {"ghosts": ["alice", "bob"]}
    data = cli.ok("ghost", "add", "carol")
    assert data["ghosts"] == ["alice", "bob", "carol"]
    for top in ("private", "diary", "inbox"):
        assert (vault / top / "carol").is_dir()
    text = (vault / "vaultmem.toml").read_text()
    assert "# Agent identities" in text  # comments survive
    assert cli.ok("ghost", "add", "carol")["ghosts"] == ["alice", "bob", "carol"]  # idempotent
    assert cli.ok("ghost", "list") == {"ghosts": ["alice", "bob", "carol"]}
    assert (
        cli.ok("note", "create", "--title", "c", "--type", "note", "--scope", "private", ghost="carol")["path"]
        == "private/carol/c.md"
    )


def test_ghost_add_as_the_ghost_it_registers(vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """`export VAULTMEM_GHOST=dave` before `ghost add dave`: registering it must not fail
    because it is not registered yet (the error said to run the very command that failed)."""
    monkeypatch.setenv("VAULTMEM_GHOST", "dave")
    assert cli.ok("ghost", "list")["ghosts"] == ["alice", "bob"]
    assert cli.ok("ghost", "add", "dave")["ghosts"] == ["alice", "bob", "dave"]
    assert (
        cli.ok("note", "create", "--title", "d", "--type", "note", "--scope", "private")["path"] == "private/dave/d.md"
    )
    monkeypatch.setenv("VAULTMEM_GHOST", "erin")  # any other command still needs a registered ghost
    assert cli("list").exit_code == 5  # invalid_input


@pytest.mark.parametrize(
    "name", ["../bob", "Bob", "a/b", "_x", "x y", "", "shared", "hand", "person", "hand\n", "bob\n"]
)
def test_ghost_add_invalid_name_exits_5(vault: Path, cli: Cli, name: str) -> None:
    before = snapshot(vault)
    res = cli("ghost", "add", name)
    assert res.exit_code == 5
    assert res.data["error"]["code"] == "invalid_input"
    assert snapshot(vault) == before


@pytest.mark.parametrize("name", ["example\n", "x\n", "ok\r"])
def test_a_project_name_with_a_line_break_is_refused(cli: Cli, name: str) -> None:
    """An attacker's walk: `$` matched before a final newline, so `hand\\n` passed as a ghost
    name (vaultmem.toml, written with it, stopped every command for everyone) and a project
    `example\\n` crashed a create with a traceback."""
    res = cli(
        "note", "create", "--title", "p", "--type", "note", "--scope", "project", "--project", name, ghost="alice"
    )
    assert res.exit_code == 5 and res.data["error"]["code"] == "invalid_input", res.stdout
