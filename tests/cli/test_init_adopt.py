"""Issue 9, acceptance 8: `vaultmem init` adopts a folder that already holds notes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli._util import snapshot, write
from tests.conftest import Cli

SECRET = "the-secret-body-text"
SCOPES = ["diary/", "inbox/", "inbox/shared/", "private/", "project/", "reference/", "shared/"]


def _obsidian_vault(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """An existing Obsidian vault; returns every file's bytes, mtime and mode."""
    write(root, "Home.md", f"# Home\n\n{SECRET} [[Ideas]]\n")
    write(root, "Projects/Ideas.md", f"---\ntags: [x]\n---\n{SECRET}\n")
    write(root, "shared/Already shared.md", "plain\n")
    write(root, ".obsidian/app.json", "{}\n")
    write(root, "attachments/pic.png", b"\x89PNG\r\n")
    write(root, ".gitignore", b"node_modules\r\n*.log")  # CRLF, no final newline
    old = 1_600_000_000_000_000_000
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(old, old))
    return _files(root)


def _files(root: Path) -> dict[str, tuple[bytes, int, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_mode)
        for p in root.rglob("*")
        if p.is_file()
    }


def _unchanged(root: Path, before: dict[str, tuple[bytes, int, int]], skip: tuple[str, ...] = ()) -> None:
    after = _files(root)
    for rel, state in before.items():
        if rel not in skip:
            assert after[rel] == state, f"{rel} was modified"


def test_adopt_adds_only_config_folders_and_ignore_rule(tmp_path: Path) -> None:
    root = tmp_path / "obsidian"
    before = _obsidian_vault(root)
    res = Cli(tmp_path)("init", str(root), "--ghost", "alice", vault=False)
    assert res.exit_code == 0, res.stdout
    data = res.data
    assert data["vault"] == str(root.resolve()) and data["ghosts"] == ["alice"]
    assert data["examples"] is False and data["existing_notes"] == 3
    ghost_dirs = ["diary/alice/", "inbox/alice/", "private/alice/"]
    scopes = [folder for folder in SCOPES if folder != "shared/"]  # shared/ was already there
    assert data["added"] == sorted([".gitattributes", ".vaultmem/", "vaultmem.toml", *scopes, *ghost_dirs])
    assert data["appended"] == [".gitignore"]
    assert data["kept"] == ["shared/"]
    # the ignore rule is appended (CRLF kept); nothing else in .gitignore changes
    assert (root / ".gitignore").read_bytes() == b"node_modules\r\n*.log\r\n.vaultmem/\r\n"
    _unchanged(root, before, skip=(".gitignore",))
    # no examples, README or hook: the only new files outside .vaultmem/ are vaultmem.toml and
    # the journal's merge rule
    new_files = {rel for rel in _files(root) if rel not in before and not rel.startswith(".vaultmem")}
    assert new_files == {"vaultmem.toml", ".gitattributes"}
    assert SECRET not in res.stdout + res.stderr


def test_adopt_leaves_a_users_own_hook_alone(tmp_path: Path) -> None:
    root = tmp_path / "v"
    write(root, "Note.md", "x\n")
    write(root, "hooks/pre-commit", "#!/bin/sh\n").chmod(0o644)
    before = _files(root)
    data = Cli(tmp_path).ok("init", str(root), vault=False)
    assert "hooks/pre-commit" not in data["added"] + data["kept"]
    _unchanged(root, before)


def test_adopt_human_output_lists_added_and_kept(tmp_path: Path) -> None:
    root = tmp_path / "obsidian"
    _obsidian_vault(root)
    write(root, ".gitattributes", "*.png binary\n")
    res = Cli(tmp_path)("init", str(root), "--ghost", "alice", vault=False, json_=False)
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert "Kept 3 existing note(s)" in out
    assert "Added: " in out and "vaultmem.toml" in out and "private/alice/" in out
    assert "Appended .vaultmem/ to: .gitignore" in out
    assert "Appended the write journal's merge rule to: .gitattributes" in out  # not ".vaultmem/ to" it
    assert "left alone: shared/" in out
    assert "--examples" in out
    assert SECRET not in out + res.stderr


def test_second_init_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "obsidian"
    _obsidian_vault(root)
    cli = Cli(tmp_path)
    cli.ok("init", str(root), "--ghost", "alice", vault=False)
    tree, files = snapshot(root), _files(root)
    res = cli("init", str(root), "--ghost", "bob", vault=False)
    assert res.exit_code == 4
    assert res.data["error"]["code"] == "conflict"
    assert "ghost add" in res.data["error"]["message"]
    assert snapshot(root) == tree and _files(root) == files
    lines = (root / ".gitignore").read_text().splitlines()
    assert lines.count(".vaultmem/") == 1


@pytest.mark.parametrize("rule", [".vaultmem", ".vaultmem/", "/.vaultmem/", "  .vaultmem/  "])
def test_existing_ignore_rule_is_not_repeated(tmp_path: Path, rule: str) -> None:
    root = tmp_path / "v"
    write(root, "Note.md", "x\n")
    write(root, ".gitignore", f"*.log\n{rule}\n")
    before = _files(root)
    data = Cli(tmp_path).ok("init", str(root), vault=False)
    assert data["appended"] == [] and ".gitignore" in data["kept"]
    assert ".gitignore" not in data["added"]
    _unchanged(root, before)


def test_adopt_without_gitignore_creates_it(tmp_path: Path) -> None:
    root = tmp_path / "v"
    write(root, "Note.md", "x\n")
    data = Cli(tmp_path).ok("init", str(root), vault=False)
    assert ".gitignore" in data["added"] and data["appended"] == []
    assert (root / ".gitignore").read_text().splitlines().count(".vaultmem/") == 1


def test_adopt_with_examples(tmp_path: Path) -> None:
    root = tmp_path / "obsidian"
    _obsidian_vault(root)
    write(root, "README.md", "my own readme\n")
    write(root, "hooks/pre-commit", "#!/bin/sh\nexit 0\n")
    (root / "hooks/pre-commit").chmod(0o644)
    before = _files(root)
    data = Cli(tmp_path).ok("init", str(root), "--ghost", "alice", "--examples", vault=False)
    assert data["examples"] is True and data["existing_notes"] == 4
    assert (root / "shared/Welcome to the vault.md").is_file()
    assert (root / "private/alice/Private notes of alice.md").is_file()
    assert "shared/Welcome to the vault.md" in data["added"]
    assert {"README.md", "hooks/", "hooks/pre-commit", "shared/"} <= set(data["kept"])
    assert "README.md" not in data["added"]
    _unchanged(root, before, skip=(".gitignore",))  # the user's README and hook, mode included
    for rel in data["added"]:
        assert (root / rel).exists(), rel


def test_fresh_init_reports_every_file_it_wrote(tmp_path: Path) -> None:
    root = tmp_path / "new"
    data = Cli(tmp_path).ok("init", str(root), "--ghost", "alice", vault=False)
    assert data["examples"] is True and data["existing_notes"] == 0 and data["kept"] == []
    written = {str(p.relative_to(root)) + ("/" if p.is_dir() else "") for p in root.rglob("*")}
    assert set(data["added"]) == written


def test_no_examples_in_empty_folder(tmp_path: Path) -> None:
    root = tmp_path / "new"
    data = Cli(tmp_path).ok("init", str(root), "--no-examples", vault=False)
    assert data["examples"] is False
    assert {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} == {
        "vaultmem.toml",
        ".gitignore",
        ".gitattributes",
    }


def test_adopted_vault_is_usable(tmp_path: Path) -> None:
    root = tmp_path / "obsidian"
    _obsidian_vault(root)
    cli = Cli(root)
    cli.ok("init", str(root), "--ghost", "alice", vault=False)
    config = root / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "auto"', 'backend = "none"'))
    assert cli.ok("lint")["errors"] == 0
    assert cli.ok("get", "Ideas", ghost="alice")["note"]["path"] == "Projects/Ideas.md"


def test_init_never_writes_through_symlinks_out_of_the_vault(tmp_path: Path) -> None:
    from vaultmem.services.vaults import init_vault

    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "v"
    root.mkdir()
    (root / "shared").symlink_to(outside)
    (root / ".gitignore").symlink_to(outside / "gi")  # dangling
    init_vault(root, ["alice"], examples=True)
    assert list(outside.iterdir()) == []


def test_no_vault_is_made_inside_another_or_around_one(tmp_path: Path) -> None:
    """An attacker's walk: alice made bob's private folder a vault of its own, where bob's
    notes read as shared (get, search, update all worked); a vault of the folder above a
    vault opens every private note the same way. Both are refused, and a vault someone
    made inside another by hand is not opened."""
    cli = Cli(tmp_path)
    outer = tmp_path / "v"
    cli.ok("init", str(outer), "--ghost", "alice", "--ghost", "bob", vault=False)
    inner = Cli(outer)
    inner.ok(
        "note", "create", "--title", "Bob plan", "--type", "fact", "--scope", "private", "--body", "xyl", ghost="bob"
    )
    before = _files(tmp_path)
    for target in (outer / "private" / "bob", outer / "shared" / "new", tmp_path):
        res = cli("init", str(target), "--ghost", "alice", ghost="alice", vault=False)
        assert res.exit_code == 5 and "a vault cannot hold another" in res.data["error"]["message"], res.stdout
    assert _files(tmp_path) == before  # nothing written anywhere
    write(outer, "private/bob/vaultmem.toml", '[vault]\nghosts = ["alice"]\n')  # by hand
    nested = Cli(outer / "private" / "bob")
    for args in (("get", "Bob plan"), ("list",), ("search", "xyl")):
        res = nested(*args, ghost="alice")
        assert res.exit_code == 2 and res.data["error"]["code"] == "no_vault", res.stdout
        assert "xyl" not in res.stdout


def test_a_vault_around_a_vault_never_reads_its_private_notes(tmp_path: Path) -> None:
    """A review of the fix: refusing the inner vault left the outer one (made before the fix,
    or by copying vaultmem.toml up) reading the team vault's private/bob/ as shared notes.
    The outer vault now leaves a vault of its own alone, and the inner one stays usable."""
    cli = Cli(tmp_path)
    team = tmp_path / "home" / "team"
    cli.ok("init", str(team), "--ghost", "alice", "--ghost", "bob", vault=False)
    Cli(team).ok(
        "note", "create", "--title", "Bob secret", "--type", "fact", "--scope", "private", "--body", "zanzibar",
        ghost="bob",
    )  # fmt: skip
    (tmp_path / "home" / "vaultmem.toml").write_text((team / "vaultmem.toml").read_text())  # by hand
    write(tmp_path / "home", "Mine.md", "my own note\n")
    outer = Cli(tmp_path / "home")
    assert outer.ok("query", "zanzibar", ghost="alice")["total_matched"] == 0
    found = outer.ok("search", "zanzibar", "--mode", "bm25", "--min-score", "0", ghost="alice")["results"]
    assert [r["summary"]["path"] for r in found] in ([], ["Mine.md"])
    assert [n["path"] for n in outer.ok("list", ghost="alice")["notes"]] == ["Mine.md"]
    assert Cli(team).ok("get", "Bob secret", ghost="bob")["body"].strip() == "zanzibar"


def test_init_takes_a_folder_holding_python_code(tmp_path: Path) -> None:
    """A virtual environment beside the notes holds vaultmem's own vault_template/: code,
    not a vault of anyone's."""
    root = tmp_path / "proj"
    write(root, "venv/pyvenv.cfg", "home = /usr/bin\n")
    write(root, "venv/lib/site-packages/vaultmem/__init__.py", "")
    write(root, "venv/lib/site-packages/vaultmem/vault_template/vaultmem.toml", "[vault]\nghosts = []\n")
    write(root, "Idea.md", "an idea\n")
    Cli(tmp_path).ok("init", str(root), "--ghost", "alice", vault=False)


def test_a_vault_is_refused_where_any_vault_around_it_keeps_the_place(tmp_path: Path) -> None:
    """A review of the fix: only the nearest vault around was asked, so a second
    vaultmem.toml inside private/bob/ made private/bob/x a shared place of that one."""
    root = tmp_path / "v"
    Cli(tmp_path).ok("init", str(root), "--ghost", "alice", "--ghost", "bob", vault=False)
    made = Cli(root).ok(
        "note", "create", "--title", "Bob secret", "--type", "fact", "--scope", "private", "--body", "zanzibar",
        ghost="bob",
    )  # fmt: skip
    inner = root / "private" / "bob" / "x"
    inner.mkdir()
    (root / made["path"]).rename(inner / "Bob secret.md")
    for folder in (root / "private" / "bob", inner):
        (folder / "vaultmem.toml").write_text((root / "vaultmem.toml").read_text())  # by hand
    res = Cli(inner)("get", "Bob secret", ghost="alice")
    assert res.exit_code == 2 and "zanzibar" not in res.stdout


def test_a_vault_inside_a_shared_folder_keeps_its_history_to_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review of the fix: the outer vault's walk left a vault of its own alone, but what
    git said of its files did not: carol's private note, committed into the outer vault's
    repository, was listed to alice by the outer vault's review."""
    env = {"GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@x", "GIT_COMMITTER_NAME": "P", "GIT_COMMITTER_EMAIL": "p@x"}
    root = tmp_path / "v"
    Cli(tmp_path).ok("init", str(root), "--ghost", "alice", vault=False)
    team = root / "shared" / "team"
    team.mkdir()
    (team / "vaultmem.toml").write_text((root / "vaultmem.toml").read_text())  # by hand
    Cli(team).ok("ghost", "add", "carol")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env={**os.environ, **env})
    Cli(team).ok(
        "note", "create", "--title", "Carol secret", "--type", "fact", "--scope", "private", "--body", "zanzibar",
        ghost="carol",
    )  # fmt: skip
    for key, value in env.items():
        monkeypatch.setenv(key, value)  # the commit's committer
    Cli(team).ok("commit")  # carol's commit: into the outer vault's repository
    for args in (
        ("review", "HEAD"),
        ("review", "HEAD", "--by", "carol"),
        ("review", "HEAD~1..HEAD", "--by", "carol"),
        ("review", "--since", "1d", "--by", "carol"),
    ):
        res = Cli(root)(*args, ghost="alice")
        assert "Carol secret" not in res.stdout and "zanzibar" not in res.stdout, (args, res.stdout)
    assert Cli(team).ok("get", "Carol secret", ghost="carol")["body"].strip() == "zanzibar"
