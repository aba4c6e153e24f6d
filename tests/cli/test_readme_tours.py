"""Issue 26, item 1: the README's tours run as written. Every command of the shell blocks of
"A tour for people" and "A tour for agents" runs, in order, in one bash session (its `cd`
and `export` carry on) in a temporary home, with the installed `vaultmem` on PATH; each
must exit 0, and the key outputs must say what the README says they do. (The search
quality of the agents' example with the real model: tests/integration/test_readme_example.py.)"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
TOURS = ("## A tour for people", "## A tour for agents")
MARK = "__vaultmem_readme_command__"

pytestmark = pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git, bash")


def tour(heading: str) -> list[str]:
    """The commands of the first shell block under `heading`: continued lines joined,
    comment-only and blank lines left out."""
    section = README[README.index(heading) :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, f"no shell block under {heading}"
    commands: list[str] = []
    current = ""
    for line in block.group(1).splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line + "\n"
        if not line.rstrip().endswith("\\"):
            commands.append(current.rstrip("\n"))
            current = ""
    return commands


def run_tours(home: Path) -> list[tuple[str, int, str]]:
    """(command, exit code, stdout) of every tour command, run as a person types them."""
    commands = [c for heading in TOURS for c in tour(heading)]
    script = ["cd ~"]
    for i, command in enumerate(commands):
        script.append(f"echo {MARK}{i}")
        script.append(command)
        script.append(f"echo {MARK}exit $?")
    env = {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "EDITOR": "true",
        "VISUAL": "true",  # `vaultmem edit`: an editor that changes nothing
        "VAULTMEM_NO_AUTOSTART": "1",  # no watcher left behind
        "VAULTMEM_EMBEDDING_BACKEND": "none",  # BM25 + graph: the tours, not the model
        "HF_HUB_OFFLINE": "1",
        "GIT_AUTHOR_NAME": "Pat",
        "GIT_AUTHOR_EMAIL": "pat@example.com",
        "GIT_COMMITTER_NAME": "Pat",
        "GIT_COMMITTER_EMAIL": "pat@example.com",
        "LANG": "C.UTF-8",
    }
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=home, env=env, capture_output=True, text=True)
    out: list[tuple[str, int, str]] = []
    for part in proc.stdout.split(MARK)[1:]:
        head, _, rest = part.partition("\n")
        if head.startswith("exit "):
            command, _, text = out.pop()
            out.append((command, int(head[5:]), text))
        else:
            out.append((commands[int(head)], -1, rest))
    return out


def test_the_tours_run_as_written(tmp_path: Path) -> None:
    results = run_tours(tmp_path)
    failed = [(command, code) for command, code, _ in results if code != 0]
    assert not failed, f"README commands that failed: {failed}"
    assert len(results) == sum(len(tour(h)) for h in TOURS)
    said = {command: text for command, _, text in results}

    def output(prefix: str) -> str:
        return next(text for command, text in said.items() if command.startswith(prefix))

    assert "Burgundy wine basics" in output('vaultmem search "which grape')
    assert output('vaultmem get "[[Burgundy wine basics#Soils]]"').count("Limestone and marl.") == 1
    assert "Burgundy wine basics" in output("vaultmem review")
    assert output("vaultmem commit").strip()
    first = json.loads(output('vaultmem search "what does the user like to drink" --limit 5'))
    # BM25 here (the first place with the real model: tests/integration/test_readme_example.py)
    assert "User prefers light reds" in [r["summary"]["title"] for r in first["results"]]
    # the JSON the agents' tour prints beside its commands, as printed
    shown = re.search(r'^# (\{"id":.*\})$', README, re.M)
    fields = re.search(r'"summary":\{([^}]*)\}', README)  # over two comment lines
    assert shown is not None and fields is not None
    printed = json.loads(shown.group(1))
    created = json.loads(output('vaultmem note create --title "User prefers light reds"'))
    assert created.keys() == printed.keys()
    assert (created["path"], created["version"]) == (printed["path"], printed["version"])
    assert list(first["results"][0]["summary"]) == re.sub(r"[#\s]", "", fields.group(1)).split(",")
    assert {"query", "mode", "results", "returned", "tokens_used", "search_time_ms"} <= first.keys()
    document = {"note", "body", "tags", "links", "comments"}  # "NoteDocument: {note, body, tags, links, comments}"
    assert json.loads(output('vaultmem get "User prefers light reds" --json')).keys() == document
    several = json.loads(output('vaultmem get "User prefers light reds.md"'))  # "file name, title; several: an array"
    assert [d["note"]["title"] for d in several] == ["User prefers light reds", "Welcome to the vault"]
    assert {"notes", "total", "deleted"} <= json.loads(output("vaultmem list --changed-since 1d")).keys()
    promoted = json.loads(output('vaultmem inbox promote "raw thought'))
    assert promoted["path"].startswith("private/alice/")
    assert (tmp_path / "memory" / "diary" / "alice").is_dir()
