"""First run and long work (issue 15, acceptance 6): a notice while the embedding model is
prepared the first time, a progress bar that shows within a second, and `index`'s summary
on a terminal."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration._vaults import VAULTMEM, make_vault, note


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_model_preparation_is_announced_once_with_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The slow export is replaced by a stand-in; the announcement is the real code path."""
    from vaultmem.cli.notices import show_model_notices
    from vaultmem.index import onnx_export

    monkeypatch.setenv("VAULTMEM_CACHE_DIR", str(tmp_path / "cache"))
    model_dir = tmp_path / "all-MiniLM-L6-v2"
    model_dir.mkdir()
    (model_dir / "config.json").write_text("{}")
    loads: list[int] = []

    def fake_export(model: Any, target: Path) -> None:
        time.sleep(0.05)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"onnx")

    monkeypatch.setattr(onnx_export, "export", fake_export)
    monkeypatch.setattr(onnx_export, "ExportedModel", lambda target, model_dir: ("exported", target))
    monkeypatch.setattr(onnx_export, "agrees", lambda exported, reference: 0.0)
    show_model_notices()

    first = onnx_export.open_exported(model_dir, lambda: loads.append(1))
    assert first is not None and loads == [1]
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("vaultmem: preparing the embedding model all-MiniLM-L6-v2 for first use")
    assert lines[1].startswith("vaultmem: embedding model ready in ") and lines[1].endswith(" s")
    assert len(lines) == 2

    again = onnx_export.open_exported(model_dir, lambda: loads.append(1))
    assert again is not None and loads == [1]  # the export is kept: no second preparation
    assert capsys.readouterr().err == ""


def test_progress_shows_within_a_second_before_the_first_step(monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultmem.cli import output

    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setenv("COLUMNS", "80")
    with output.progress_hook(True) as hook:
        assert hook is not None
        time.sleep(output.SCANNING_AFTER_S + 0.4)
        shown_early = stream.getvalue()
        hook("reading notes", 1, 2)
        time.sleep(0.2)
    assert output.SCANNING_AFTER_S < 1
    assert "scanning the vault" in shown_early
    assert "reading notes" in stream.getvalue()


def test_quick_work_shows_no_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultmem.cli import output

    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    with output.progress_hook(True):
        pass
    assert "scanning" not in stream.getvalue()


def _run_in_terminal(argv: list[str], cwd: Path) -> str:
    """Run a command with stdout and stderr on a pseudo-terminal; what it drew."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "VAULTMEM_NO_AUTOSTART": "1", "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen(argv, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        proc.wait(timeout=60)
    return out.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_index_prints_its_summary_on_a_terminal(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "vault")
    for i in range(3):
        note(root, f"shared/Note {i}.md", f"Body {i}.\n", title=f"Note {i}", type="fact")
    drawn = _run_in_terminal([str(VAULTMEM), "index"], root)
    assert "added 3, updated 0, deleted 0, moved 0, unchanged 0" in drawn
    again = _run_in_terminal([str(VAULTMEM), "index"], root)
    assert "added 0, updated 0, deleted 0, moved 0, unchanged 3" in again


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_get_raw_shows_a_notes_escape_sequences_on_a_terminal(tmp_path: Path) -> None:
    """Found by an attacker's probe: `get --raw` sent a note's escape sequences to the
    terminal (clear the screen, set its title); to a pipe it is still the file as stored."""
    vault = tmp_path / "v"
    env = {**os.environ, "VAULTMEM_NO_AUTOSTART": "1"}
    subprocess.run([VAULTMEM, "init", str(vault), "--no-examples", "--json"], check=True, capture_output=True, env=env)
    text = "---\ntitle: esc\n---\n\x1b[2J\x1b]0;pwned\x07 body\n"
    (vault / "shared" / "esc.md").write_text(text, encoding="utf-8")
    shown = _run_in_terminal([VAULTMEM, "--vault", str(vault), "get", "esc", "--raw"], tmp_path)
    assert "\x1b" not in shown and "\\x1b[2J" in shown
    piped = subprocess.run(
        [VAULTMEM, "--vault", str(vault), "get", "esc", "--raw"], capture_output=True, text=True, env=env
    )
    assert piped.stdout == text
