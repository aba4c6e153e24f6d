"""SPEC §6 output contract: one JSON document on stdout, talk on stderr, the exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli


def _one_json_document(stdout: str) -> Any:
    text = stdout.strip()
    doc, end = json.JSONDecoder().raw_decode(text)
    assert end == len(text), "stdout must hold exactly one JSON document"
    json.loads(stdout, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    return doc


@pytest.mark.parametrize(
    ("args", "ghost"),
    [
        (["ghost", "list"], None),
        (["note", "create", "--title", "C1", "--type", "note", "--scope", "shared"], None),
        (["get", "Welcome to the vault"], None),
        (["get", "Welcome to the vault", "--raw"], None),
        (["capture", "hello"], "alice"),
        (["inbox", "list"], "alice"),
        (["lint"], None),
        (["note", "validate", "Welcome to the vault", "--by", "alice/x"], None),
        (["note", "comment", "Welcome to the vault", "--text", "hi"], "alice"),
        (["note", "update", "Welcome to the vault", "--add-tag", "x"], None),
    ],
)
def test_json_mode_prints_exactly_one_document(cli: Cli, args: list[str], ghost: str | None) -> None:
    res = cli(*args, ghost=ghost)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert isinstance(_one_json_document(res.stdout), dict)
    assert "{" not in res.stderr


def test_global_options_before_the_command(vault: Path, cli: Cli) -> None:
    res = cli(
        "--vault", str(vault), "--ghost", "alice", "--json", "get", "Private notes of alice", vault=False, json_=False
    )
    assert res.exit_code == 0
    assert _one_json_document(res.stdout)["note"]["owner"] == "alice"
    # a command's own flag wins over the global one
    res = cli("--ghost", "bob", "get", "Private notes of alice", ghost="alice")
    assert res.exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["note", "create", "--type", "note", "--scope", "shared"],  # missing --title
        ["get"],  # missing REF
        ["get", "x", "--bogus"],
        ["note", "create", "--title", "t", "--type", "note", "--scope", "shared", "--trust", "abc"],
        ["note", "update", "x", "--expect-version", "two"],
        ["nosuchcommand"],
    ],
)
def test_usage_errors_exit_2(cli: Cli, args: list[str]) -> None:
    res = cli(*args)
    assert res.exit_code == 2
    assert _one_json_document(res.stdout) == {"error": {"code": "usage", "message": res.data["error"]["message"]}}
    assert res.data["error"]["message"]
    human = cli(*args, json_=False)
    assert human.exit_code == 2 and human.stdout == ""
    assert human.stderr.startswith("vaultmem: error: ")


def test_json_asked_by_joined_short_flags_answers_errors_in_json(cli: Cli) -> None:
    """`-js shared` is `-j -s shared`: a found note printed JSON, a missing one printed only
    `vaultmem: error:` on stderr and nothing on stdout."""
    found = cli("get", "Welcome to the vault", "-js", "shared", json_=False)
    assert found.exit_code == 0 and _one_json_document(found.stdout)["note"]["title"] == "Welcome to the vault"
    for args in (["get", "nonexistent", "-js", "shared"], ["query", "x", "-jn", "0"], ["get", "x", "-jz"]):
        res = cli(*args, json_=False)
        assert res.exit_code in (2, 3, 5), res
        assert _one_json_document(res.stdout)["error"]["message"], args
        assert "vaultmem: error" not in res.stderr


@pytest.mark.parametrize("args", [["get", "x", "-sj"], ["capture", "--", "--json"], ["get", "--", "--json"]])
def test_json_words_that_are_values_are_not_the_flag(cli: Cli, args: list[str]) -> None:
    """`-sj` is --scope j; after `--` every word is text: errors stay talk on stderr."""
    res = cli("--vault", str(cli.vault), *args, vault=False, json_=False)  # nothing after the `--`
    assert res.exit_code in (3, 5) and res.stdout == ""
    assert res.stderr.startswith("vaultmem: error: ")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["get", "x", "--json"], True),
        (["-j", "get", "x"], True),
        (["get", "x", "-js", "shared"], True),
        (["query", "x", "-jn5"], True),
        (["search", "x", "--format", "json"], True),
        (["search", "x", "--format=json"], True),
        (["get", "x", "-sj"], False),
        (["get", "x", "-n", "5"], False),
        (["capture", "--", "--json"], False),
        (["capture", "--", "-j"], False),
    ],
)
def test_asks_for_json(argv: list[str], expected: bool) -> None:
    from vaultmem.cli.main import asks_for_json

    assert asks_for_json(argv) is expected


def test_bare_group_shows_help(cli: Cli) -> None:
    res = cli("note", vault=False, json_=False)
    assert res.exit_code == 2
    assert "create" in res.stderr and res.stdout == ""


def test_help_and_version(cli: Cli) -> None:
    res = cli("--help", vault=False, json_=False)
    assert res.exit_code == 0 and "Usage" in res.stdout
    for command in (["note", "create"], ["get"], ["capture"], ["lint"], ["write"], ["inbox", "promote"], ["init"]):
        res = cli(*command, "--help", vault=False, json_=False)
        assert res.exit_code == 0 and "--json" in res.stdout, command
    res = cli("--version", vault=False, json_=False)
    assert res.exit_code == 0 and res.stdout.startswith("vaultmem ")


def test_no_vault_is_a_usage_error(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = cli("get", "x", vault=False)
    assert res.exit_code == 2
    assert res.data["error"]["code"] == "no_vault"
    res = cli("get", "x", "--vault", str(tmp_path), vault=False)
    assert res.exit_code == 2


def test_vault_found_from_environment_and_working_directory(
    vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTMEM_VAULT", str(vault))
    assert cli("get", "Welcome to the vault", vault=False).exit_code == 0
    monkeypatch.delenv("VAULTMEM_VAULT")
    monkeypatch.chdir(vault / "shared")
    assert cli("get", "Welcome to the vault", vault=False).exit_code == 0
    monkeypatch.setenv("VAULTMEM_GHOST", "alice")
    assert cli("get", "Private notes of alice", vault=False).exit_code == 0


def test_config_warnings_go_to_stderr(vault: Path, cli: Cli) -> None:
    config = vault / "vaultmem.toml"
    config.write_text(config.read_text() + "\n[future]\nshiny = true\n")
    res = cli("get", "Welcome to the vault")
    assert res.exit_code == 0
    _one_json_document(res.stdout)
    assert "warning: unknown section [future]" in res.stderr


def test_broken_config_is_invalid_input(vault: Path, cli: Cli) -> None:
    (vault / "vaultmem.toml").write_text("[vault\n")
    res = cli("get", "x")
    assert res.exit_code == 5
    assert res.data["error"]["code"] == "invalid_input"


def test_internal_failure_is_exit_1_with_a_json_error(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultmem.services import documents

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(documents, "get_note", boom)
    res = cli("get", "x")
    assert res.exit_code == 1
    assert res.data["error"]["code"] == "internal"
    assert "disk on fire" in res.data["error"]["message"]
    assert "Traceback" in res.stderr


def test_json_output_is_strict_even_for_odd_front_matter(vault: Path, cli: Cli) -> None:
    (vault / "shared/odd.md").write_text(
        "---\nid: ODD\nnan: .nan\ninf: -.inf\nwhen: 2026-01-01\nset: !!set {b, a}\n---\n"
    )
    doc = _one_json_document(cli("get", "ODD").stdout)
    assert (doc["note"]["nan"], doc["note"]["inf"], doc["note"]["when"], doc["note"]["set"]) == (
        ".nan",
        "-.inf",
        "2026-01-01",
        ["a", "b"],
    )


def test_no_color_and_plain_output_for_people(vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    res = cli("get", "Welcome to the vault", json_=False)
    assert res.exit_code == 0
    assert "\x1b[" not in res.stdout
    assert "Welcome to the vault" in res.stdout


def test_human_output_prints_markup_looking_data_literally(vault: Path, cli: Cli) -> None:
    """Titles, tags, paths and comments are text, never rich markup ("[/]" used to crash)."""
    made = cli.ok(
        "note", "create", "--title", "[/] weird [bold]", "--type", "note", "--scope", "shared", "--tag", "[red]"
    )
    cli.ok("note", "comment", made["id"], "--text", "[/i] hi", ghost="alice")
    (vault / "shared/[red]odd.md").write_text("---\nid: ODD\n---\nsee [[nowhere]]\n")
    for args in (
        ["get", made["id"]],
        ["note", "validate", made["id"], "--by", "alice/x"],
        ["lint"],
        ["note", "delete", "ODD"],
    ):
        res = cli(*args, json_=False)
        assert res.exit_code == 0, (args, res.stderr)
        assert "Traceback" not in res.stderr
    shown = cli("get", made["id"], json_=False).stdout
    assert "[/] weird [bold]" in shown and "[red]" in shown and "[/i] hi" in shown
