"""Writes that check a name is free and take it, run at once by real processes (vault/
writers.py naming_turn), found by an attacker's probe: two `note create --title Topic` both
wrote one (then `get Topic` was ambiguous, exit 7), two `write`s of one memory both wrote
it, two promotions of one capture both wrote a note. However the processes interleave, one
takes the name and the other is told so; nothing here depends on timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli


def at_once(vault: Path, *commands: tuple[list[str], str]) -> list[tuple[int, str]]:
    """Each (argv, stdin) as its own `vaultmem` process, started together; (exit, stdout) each."""
    env = {**os.environ, "VAULTMEM_NO_AUTOSTART": "1"}
    base = [sys.executable, "-m", "vaultmem", "--vault", str(vault), "--ghost", "alice", "--json"]
    runs = [
        subprocess.Popen(
            [*base, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for argv, _ in commands
    ]
    outs = [run.communicate(stdin, timeout=300) for run, (_, stdin) in zip(runs, commands, strict=True)]
    return [(run.returncode, out) for run, (out, _) in zip(runs, outs, strict=True)]


def holding(vault: Path, text: str) -> list[str]:
    return sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md") if text in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("round_", range(3))
def test_one_of_two_creates_of_a_title_takes_it(vault: Path, round_: int) -> None:
    create = ["note", "create", "--title", f"Topic {round_}", "--type", "fact", "--scope", "shared"]
    done = at_once(vault, ([*create, "--body", "one"], ""), ([*create, "--body", "two"], ""))
    assert sorted(code for code, _ in done) == [0, 4], done
    assert len(holding(vault, f"title: Topic {round_}\n")) == 1
    assert Cli(vault).ok("get", f"Topic {round_}", ghost="alice")["note"]["title"] == f"Topic {round_}"


def test_a_rename_and_a_create_of_one_title_leave_one_note(vault: Path) -> None:
    made = Cli(vault).ok("note", "create", "--title", "Aim", "--type", "fact", "--scope", "shared", "--body", "x")
    create = ["note", "create", "--title", "Goal", "--type", "fact", "--scope", "shared", "--body", "y"]
    done = at_once(vault, (["note", "update", made["id"], "--title", "Goal"], ""), (create, ""))
    assert sorted(code for code, _ in done) == [0, 4], done
    assert len(holding(vault, "title: Goal\n")) == 1


def test_one_memory_written_twice_at_once_is_one_note(vault: Path) -> None:
    memory = json.dumps([{"type": "semantic", "content": "The office plants are watered on Mondays."}])
    done = at_once(vault, (["write", "-"], memory), (["write", "-"], memory))
    assert [code for code, _ in done] == [0, 0], done
    answers = [json.loads(out) for _, out in done]
    assert sorted(len(a["written"]) for a in answers) == [0, 1]
    assert sorted(len(a["duplicates"]) for a in answers) == [0, 1]
    assert len(holding(vault, "watered on Mondays")) == 1


def test_a_capture_promoted_twice_at_once_is_one_note(vault: Path) -> None:
    capture = Cli(vault).ok("capture", "the capture's words", ghost="alice")
    promote = ["inbox", "promote", capture["id"], "--type", "fact"]
    done = at_once(
        vault,
        ([*promote, "--title", "First", "--scope", "shared"], ""),
        ([*promote, "--title", "Second", "--scope", "private"], ""),
    )
    assert sorted(code for code, _ in done) == [0, 3], done  # the second finds no capture left
    kept = [p for p in holding(vault, "the capture's words") if not p.startswith(".trash/")]
    assert len(kept) == 1, kept
