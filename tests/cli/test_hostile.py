"""Acceptance 10: hostile input changes nothing outside the vault."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli._util import front_matter, snapshot, write
from tests.conftest import Cli
from vaultmem.vault.store import MAX_NAME_BYTES


@pytest.fixture
def world(tmp_path: Path, vault: Path) -> Iterator[Path]:
    """Things outside the vault worth attacking; asserts afterwards that none changed."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\ntitle: Outside Secret\n---\ntop secret\n")
    (outside / "victim.md").write_text("do not touch\n")
    (tmp_path / "passwd").write_text("root:x:0:0\n")
    (outside / "empty").mkdir()
    before = snapshot(tmp_path, skip=vault)
    yield outside
    assert snapshot(tmp_path, skip=vault) == before, "something outside the vault changed"


def _check_name(relpath: str, folder: str) -> None:
    assert relpath.startswith(folder + "/")
    name = relpath[len(folder) + 1 :]
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    # dots inside a name are fine (Obsidian keeps them); with no separator and no leading dot
    # the name is one plain file in `folder`, never `.`, `..` or hidden
    assert name.endswith(".md") and name.removesuffix(".md").rstrip(". ") == name.removesuffix(".md")
    assert len(name.encode("utf-8")) <= MAX_NAME_BYTES
    assert all(ord(ch) >= 32 for ch in name)


HOSTILE_TITLES = [
    "../../outside/pwned",
    "../../../../../../tmp/pwned",
    "/etc/passwd",
    "a/b/../../../c",
    "..",
    ".hidden",
    "..\\..\\windows",
    "x" * 300,
    "é" * 300,
    "../" * 60,
    "CON",
    "title: with: colons",
    "- looks like a list",
    "#not-a-heading",
    "'quoted' \"both\"",
    "yes",
    "null",
    "2026-01-01",
]


@pytest.mark.usefixtures("world")
@pytest.mark.parametrize("title", HOSTILE_TITLES, ids=lambda t: repr(t)[:24])
@pytest.mark.parametrize(
    ("scope", "ghost", "folder"), [("shared", None, "shared"), ("private", "alice", "private/alice")]
)
def test_hostile_titles_stay_inside_and_round_trip(
    vault: Path, cli: Cli, title: str, scope: str, ghost: str | None, folder: str
) -> None:
    out = cli.ok("note", "create", "--title", title, "--type", "note", "--scope", scope, ghost=ghost)
    _check_name(out["path"], folder)
    path = vault / out["path"]
    assert path.resolve().parent == (vault / folder).resolve()
    assert front_matter(path)["title"] == title.strip()
    assert cli.ok("get", out["id"], ghost=ghost)["note"]["title"] == title.strip()


@pytest.mark.usefixtures("world")
@pytest.mark.parametrize("title", ["nul\x00byte", "line\nbreak", "bell\x07", "del\x7f", "   ", "x" * 513])
def test_unusable_titles_exit_5_and_write_nothing(vault: Path, cli: Cli, title: str) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    for command in (
        ["note", "create", "--title", title, "--type", "note", "--scope", "shared"],
        ["note", "create", "--title", "ok", "--alias", title, "--type", "note", "--scope", "shared"],
        ["note", "update", "Welcome to the vault", "--title", title],
        ["inbox", "promote", "Example capture", "--title", title, "--type", "fact", "--scope", "shared"],
    ):
        res = cli(*command)
        assert res.exit_code == 5, (command, res.stdout)
        assert res.data["error"]["code"] == "invalid_input"
    assert snapshot(vault, skip=vault / ".vaultmem") == before


@pytest.mark.usefixtures("world")
@pytest.mark.parametrize("ghost", ["../bob", "../../outside", "bob/../alice", "Alice", "/etc", "carol"])
def test_hostile_ghost_exits_5(vault: Path, cli: Cli, ghost: str, monkeypatch: pytest.MonkeyPatch) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    commands = [
        ["note", "create", "--title", "t", "--type", "note", "--scope", "private"],
        ["capture", "text"],
        ["get", "Welcome to the vault"],
        ["write", "-"],
        ["inbox", "list"],
    ]
    for command in commands:
        res = cli(*command, ghost=ghost, input='[{"type": "semantic", "content": "x"}]')
        assert res.exit_code == 5, (command, res.stdout)
        assert res.data["error"]["code"] == "invalid_input"
    monkeypatch.setenv("VAULTMEM_GHOST", ghost)
    assert cli("capture", "text").exit_code == 5
    assert snapshot(vault, skip=vault / ".vaultmem") == before


@pytest.mark.usefixtures("world")
@pytest.mark.parametrize("project", ["../outside", "../../x", "a/b", "..", "Proj"])
def test_hostile_project_exits_5(vault: Path, cli: Cli, project: str) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    res = cli(
        "note", "create", "--title", "t", "--type", "note", "--scope", "project", "--project", project, ghost="alice"
    )
    assert res.exit_code == 5
    assert snapshot(vault, skip=vault / ".vaultmem") == before


@pytest.mark.usefixtures("world")
@pytest.mark.parametrize(
    "command",
    [
        ["note", "create", "--title", "t", "--type", "note", "--scope", "shared", "--trust", "7"],
        ["note", "create", "--title", "t", "--type", "note", "--scope", "shared", "--trust", "-1"],
        ["note", "create", "--title", "t", "--type", "note", "--scope", "shared", "--trust", "inf"],
        ["note", "create", "--title", "t", "--type", "note", "--scope", "shared", "--importance", "nan"],
        ["note", "validate", "Welcome to the vault", "--by", "alice/x", "--trust", "7"],
        ["note", "update", "Welcome to the vault", "--set", "trust_score=7"],
        ["note", "update", "Welcome to the vault", "--set", "trust_score=.nan"],
    ],
)
def test_trust_out_of_range_exits_5(vault: Path, cli: Cli, command: list[str]) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    res = cli(*command)
    assert res.exit_code == 5
    assert res.data["error"]["code"] == "invalid_input"
    assert snapshot(vault, skip=vault / ".vaultmem") == before


def test_symlinked_note_leaving_the_vault_is_refused(vault: Path, cli: Cli, world: Path) -> None:
    (vault / "shared/link.md").symlink_to(world / "secret.md")
    (vault / "shared/victim.md").symlink_to(world / "victim.md")
    for ref in ("shared/link.md", "shared/link", "Outside Secret", "link"):
        res = cli("get", ref)
        assert res.exit_code == 3
        assert "top secret" not in res.stdout
    for command in (
        ["note", "update", "shared/victim.md", "--body", "pwned"],
        ["note", "update", "shared/victim.md", "--set", "x=1"],
        ["note", "validate", "shared/victim.md", "--by", "alice/x", "--trust", "0.1"],
        ["note", "comment", "shared/victim.md", "--text", "pwned"],
        ["note", "delete", "shared/victim.md"],
        ["note", "delete", "shared/link.md"],
    ):
        res = cli(*command, ghost="alice")
        assert res.exit_code == 3, (command, res.stdout)
    lint = cli("lint")
    assert lint.exit_code == 1
    codes = {(p["path"], p["code"]) for p in lint.data["problems"]}
    assert {("shared/link.md", "symlink_outside"), ("shared/victim.md", "symlink_outside")} <= codes
    assert "top secret" not in lint.stdout
    assert cli("lint", "--fix").exit_code == 1
    assert (vault / "shared/link.md").is_symlink() and (vault / "shared/victim.md").is_symlink()


def test_symlinked_folder_leaving_the_vault_is_refused(vault: Path, cli: Cli, world: Path) -> None:
    target = world / "empty"
    (vault / "private/alice/Private notes of alice.md").unlink()
    (vault / "private/alice").rmdir()
    (vault / "private/alice").symlink_to(target)
    (vault / "project/evil").symlink_to(world)
    for command, ghost in (
        (["note", "create", "--title", "t", "--type", "note", "--scope", "private"], "alice"),
        (["note", "create", "--title", "t", "--type", "note", "--scope", "project", "--project", "evil"], "alice"),
        (["write", "-"], "alice"),
    ):
        res = cli(*command, ghost=ghost, input='[{"type": "semantic", "content": "x"}]')
        if command[0] == "write":
            # the one item rejected with its reason; nothing written at all: exit 5 (issue 26)
            assert res.exit_code == 5 and res.data["written"] == [] and len(res.data["rejected"]) == 1
        else:
            assert res.exit_code == 5, (command, res.stdout)
    assert list(target.iterdir()) == []
    # files behind a symlinked folder are not notes at all
    assert cli("get", "Outside Secret", ghost="alice").exit_code == 3
    assert cli("get", "project/evil/secret.md", ghost="alice").exit_code == 3


@pytest.mark.usefixtures("world")
def test_hostile_references_find_nothing(vault: Path, cli: Cli) -> None:
    for ref in (
        "../outside/secret.md",
        "../../passwd",
        "/etc/passwd",
        str(vault / "shared/Welcome to the vault.md"),
        "vaultmem.toml",
        ".vaultmem/state.db",
    ):
        assert cli("get", ref).exit_code == 3
        assert cli("note", "delete", ref).exit_code == 3
        assert (
            cli("note", "create", "--title", "c", "--type", "note", "--scope", "shared", "--parent", ref).exit_code == 3
        )


@pytest.mark.usefixtures("world")
def test_hostile_values_cannot_break_the_front_matter(vault: Path, cli: Cli) -> None:
    evil = "x\n---\nid: EVIL\nscope: private\n---\n"
    out = cli.ok(
        "note", "create", "--title", "Evil values", "--type", "note", "--scope", "shared", "--source", evil,
        "--tag", "---", "--body", "---\nid: FAKE\n---\nbody",
    )  # fmt: skip
    doc = cli.ok("get", out["id"])
    assert doc["note"]["id"] == out["id"] and doc["note"]["scope"] == "shared"
    assert doc["note"]["source"] == evil
    assert doc["body"] == "---\nid: FAKE\n---\nbody\n"
    cli.ok("note", "update", out["id"], "--set", f"custom={evil!r}", "--add-tag", "ok")
    cli.ok("note", "comment", out["id"], "--text", evil)
    doc = cli.ok("get", out["id"])
    assert doc["note"]["id"] == out["id"] and doc["comments"][0]["text"] == evil
    assert cli.ok("lint")["errors"] == 0


@pytest.mark.usefixtures("world")
def test_hand_written_note_claiming_another_scope(vault: Path, cli: Cli) -> None:
    # a shared file cannot make itself private (or owned by bob) by what it says
    write(vault, "shared/claims.md", "---\nid: CLAIM\ntitle: Claims\nscope: private\nowner: bob\n---\nx\n")
    assert cli.ok("get", "CLAIM")["note"]["scope"] == "shared"
    codes = {p["code"] for p in cli("lint").data["problems"] if p["path"] == "shared/claims.md"}
    assert "scope_mismatch" in codes
