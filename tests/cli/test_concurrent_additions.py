"""Agents adding to one note at once, as real processes (a newcomer's review): of eight
unread appends seven used to fail with "changed on disk since it was read", and four diary
appends on a new day left three empty, numbered copies of the day's entry beside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli

WRITERS = 6


def _at_once(vault: Path, commands: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    env = {**os.environ, "VAULTMEM_NO_AUTOSTART": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "vaultmem", "--vault", str(vault), "--json", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for argv in commands
    ]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


@pytest.mark.parametrize(
    "addition",
    [
        lambda i: ["note", "update", "Pile", "--append", f"line {i}", "--ghost", "alice"],
        lambda i: ["note", "comment", "Pile", "--text", f"comment {i}", "--ghost", "bob"],
    ],
    ids=["append", "comment"],
)
def test_unread_additions_at_once_all_land(cli: Cli, vault: Path, addition) -> None:  # type: ignore[no-untyped-def]
    made = cli.ok("note", "create", "--title", "Pile", "--type", "note", "--scope", "shared", "--body", "start")
    cli.ok("index")
    runs = _at_once(vault, [addition(i) for i in range(WRITERS)])
    assert [r.returncode for r in runs] == [0] * WRITERS, [r.stdout + r.stderr for r in runs]
    text = (vault / made["path"]).read_text()
    for i in range(WRITERS):
        assert f"line {i}" in text or f"comment {i}" in text
    assert sorted(json.loads(r.stdout)["version"] for r in runs) == list(range(2, WRITERS + 2))  # each its own


def test_a_replace_that_loses_the_race_is_still_a_conflict(cli: Cli, vault: Path) -> None:
    """Only additions read again: a replace made on what another writer changed meanwhile
    would write over it unseen."""
    cli.ok("note", "create", "--title", "Pile", "--type", "note", "--scope", "shared", "--body", "start")
    cli.ok("index")
    runs = _at_once(
        vault, [["note", "update", "Pile", "--body", f"whole {i}", "--ghost", "alice"] for i in range(WRITERS)]
    )
    codes = sorted(r.returncode for r in runs)
    assert set(codes) <= {0, 4} and codes[0] == 0
    for run in runs:
        if run.returncode == 4:
            assert "changed on disk since it was read" in run.stdout


def test_diary_appends_on_a_new_day_make_one_entry(vault: Path) -> None:
    runs = _at_once(vault, [["diary", "--append", f"entry {i}", "--ghost", "alice"] for i in range(WRITERS)])
    assert [r.returncode for r in runs] == [0] * WRITERS, [r.stdout + r.stderr for r in runs]
    days = sorted(p.name for p in (vault / "diary" / "alice").iterdir() if p.name[:4].isdigit())
    assert len(days) == 1, days
    text = (vault / "diary" / "alice" / days[0]).read_text()
    assert all(f"entry {i}" in text for i in range(WRITERS))
    assert sum(json.loads(r.stdout)["created"] for r in runs) == 1
