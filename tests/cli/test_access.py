"""Acceptance 5: a private note is invisible to everyone but its owner, everywhere (SPEC §3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli._util import snapshot, write
from tests.conftest import Cli

SECRET_TITLE = "Zanzibar Launch Codes"
SECRET_BODY = "the password is hunter2"
MISSING_ID = "01JZZZZZZZZZZZZZZZZZZZZZZZ"


@pytest.fixture
def secret(cli: Cli) -> dict[str, str]:
    return cli.ok(
        "note", "create", "--title", SECRET_TITLE, "--type", "fact", "--scope", "private",
        "--alias", "Zed Codes", "--body", SECRET_BODY, ghost="alice",
    )  # fmt: skip


def _refs(secret: dict[str, str]) -> list[str]:
    return [secret["id"], secret["path"], secret["path"][:-3], SECRET_TITLE, SECRET_TITLE.lower(), "Zed Codes"]


def test_owner_reads_it(cli: Cli, secret: dict[str, str]) -> None:
    for ref in _refs(secret):
        doc = cli.ok("get", ref, ghost="alice")
        assert doc["note"]["id"] == secret["id"]
        assert doc["body"] == SECRET_BODY + "\n"


@pytest.mark.parametrize("ghost", ["bob", None])
def test_others_get_exactly_not_found(cli: Cli, secret: dict[str, str], ghost: str | None) -> None:
    for ref in _refs(secret):
        res = cli("get", ref, ghost=ghost)
        assert res.exit_code == 3
        # exactly the document a reference to nothing gets
        assert res.data == {"error": {"code": "not_found", "message": f"no note matches {ref!r}"}}
        assert SECRET_BODY not in res.stdout + res.stderr
        if SECRET_TITLE.lower() not in ref.lower():  # only what the caller typed is echoed
            assert SECRET_TITLE not in res.stdout + res.stderr
    missing = cli("get", MISSING_ID, ghost=ghost)
    hidden = cli("get", secret["id"], ghost=ghost)
    assert (hidden.exit_code, hidden.stderr) == (missing.exit_code, missing.stderr)
    assert hidden.stdout.replace(secret["id"], "X") == missing.stdout.replace(MISSING_ID, "X")


@pytest.mark.parametrize("ghost", ["bob", None])
@pytest.mark.parametrize(
    "command",
    [
        ["note", "update", "{ref}", "--body", "pwned"],
        ["note", "update", "{ref}", "--set", "x=1"],
        ["note", "validate", "{ref}", "--by", "bob/gpt-x", "--trust", "0.1"],
        ["note", "comment", "{ref}", "--text", "pwned"],
        ["note", "delete", "{ref}"],
        ["inbox", "promote", "{ref}", "--title", "Stolen", "--type", "fact", "--scope", "shared"],
    ],
)
def test_others_cannot_write_it_and_learn_nothing(
    vault: Path, cli: Cli, secret: dict[str, str], ghost: str | None, command: list[str]
) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    for ref in (secret["id"], SECRET_TITLE):
        res = cli(*[part.format(ref=ref) for part in command], ghost=ghost)
        assert res.exit_code == 3, res.stdout
        assert res.data == {"error": {"code": "not_found", "message": f"no note matches {ref!r}"}}
    assert snapshot(vault, skip=vault / ".vaultmem") == before


def test_hidden_note_neither_found_as_parent_nor_makes_ambiguity(vault: Path, cli: Cli, secret: dict[str, str]) -> None:
    res = cli(
        "note",
        "create",
        "--title",
        "Child",
        "--type",
        "note",
        "--scope",
        "shared",
        "--parent",
        secret["id"],
        ghost="bob",
    )
    assert res.exit_code == 3
    assert SECRET_TITLE not in res.stdout
    # bob's own note with the same title is unambiguous for bob, ambiguous for nobody else
    write(vault, "shared/zanzibar.md", f"---\nid: PUBLIC-Z\ntitle: {SECRET_TITLE}\n---\npublic\n")
    assert cli.ok("get", SECRET_TITLE, ghost="bob")["note"]["id"] == "PUBLIC-Z"
    assert cli.ok("get", SECRET_TITLE)["note"]["id"] == "PUBLIC-Z"
    assert cli("get", SECRET_TITLE, ghost="alice").exit_code == 7


def test_links_to_hidden_notes_look_dangling(vault: Path, cli: Cli, secret: dict[str, str]) -> None:
    write(vault, "shared/pointer.md", f"---\nid: PTR\ntitle: Pointer\n---\nsee [[{SECRET_TITLE}]]\n")
    write(vault, "private/alice/back.md", "---\nid: BACK\ntitle: Back\n---\nsee [[Pointer]]\n")
    for ghost in ("bob", None):
        doc = cli.ok("get", "PTR", ghost=ghost)
        assert doc["links"]["out"] == []
        assert doc["links"]["in"] == []  # alice's private back-link is invisible too
        assert [d["target"] for d in doc["links"]["dangling"]] == [SECRET_TITLE]
        assert secret["id"] not in str(doc) and "private/alice" not in str(doc)
    doc = cli.ok("get", "PTR", ghost="alice")
    assert [link["id"] for link in doc["links"]["out"]] == [secret["id"]]
    assert [link["id"] for link in doc["links"]["in"]] == ["BACK"]


def test_inbox_list_shows_only_visible_captures(cli: Cli) -> None:
    cli.ok("capture", "alice private thought", ghost="alice")
    cli.ok("capture", "bob private thought", ghost="bob")
    cli.ok("capture", "shared thought", "--scope", "shared", ghost="bob")
    seen = {c["excerpt"] for c in cli.ok("inbox", "list", ghost="bob")["captures"]}
    assert "bob private thought" in seen and "shared thought" in seen
    assert "alice private thought" not in seen
    nobody = {c["excerpt"] for c in cli.ok("inbox", "list")["captures"]}
    assert "shared thought" in nobody
    assert not any("private thought" in e for e in nobody)


def test_symlink_into_a_private_folder_does_not_leak(vault: Path, cli: Cli, secret: dict[str, str]) -> None:
    (vault / "shared/peek.md").symlink_to(vault / secret["path"])
    for ghost in ("bob", None):
        for ref in ("shared/peek.md", "peek"):
            res = cli("get", ref, ghost=ghost)
            assert res.exit_code == 3
            assert SECRET_BODY not in res.stdout
    # the lint report names the path and the problem, never the content
    out = cli("lint")
    assert SECRET_BODY not in out.stdout
    assert any(p["path"] == "shared/peek.md" for p in out.data["problems"])


def test_a_ghost_validates_as_itself(cli: Cli) -> None:
    """Identity comes from --ghost, never from a value: alice's `--by bob/gpt-x` recorded bob
    as the validator (found by an attacker's walk). A person (no ghost) names the validator."""
    made = cli.ok("note", "create", "--title", "Shared fact", "--type", "fact", "--scope", "shared", "--body", "x")
    before = cli.ok("get", made["id"], ghost="alice")
    res = cli("note", "validate", made["id"], "--by", "bob/gpt-x", "--trust", "0.9", ghost="alice")
    assert res.exit_code == 5 and "alice/MODEL" in res.data["error"]["message"]
    assert cli.ok("get", made["id"], ghost="alice") == before
    version = before["note"]["version"]
    assert cli.ok("note", "validate", made["id"], "--by", "alice/gpt-x", ghost="alice")["version"] > version
    cli.ok("note", "validate", made["id"], "--by", "bob/gpt-x")
    assert "last_validated_by: bob/gpt-x" in (cli.vault / made["path"]).read_text()
