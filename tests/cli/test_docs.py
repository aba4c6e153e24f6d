"""Every command has help, the lazy command table matches the commands, and the README
names every command (the sqlite-utils habit: an undocumented command is a defect)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmem.cli.main import COMMANDS, build_module_commands

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _first_line(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_table_help_matches_the_command(name: str) -> None:
    module, short = COMMANDS[name]
    command = build_module_commands(module)[name]
    assert _first_line(command.help) == short


@pytest.mark.parametrize("module", sorted({m for m, _ in COMMANDS.values()}))
def test_every_registered_command_is_in_the_table(module: str) -> None:
    for name in build_module_commands(module):
        assert COMMANDS.get(name, ("", ""))[0] == module, f"{name} (from cli/{module}.py) missing from COMMANDS"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_readme_documents_every_command(name: str) -> None:
    assert f"vaultmem {name}" in README, f"README.md never shows `vaultmem {name}`"


def test_subcommands_have_help() -> None:
    for module in {m for m, _ in COMMANDS.values()}:
        for name, command in build_module_commands(module).items():
            for sub in getattr(command, "commands", {}).values():
                assert sub.help and sub.help.strip(), f"vaultmem {name} {sub.name} has no help"
