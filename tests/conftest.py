"""Shared fixtures: real vaults in temporary folders, the CLI through Typer's CliRunner."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.testing
from typer.testing import CliRunner

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


# VAULTMEM_CACHE_DIR of the whole session, set before any fixture starts a process: the
# ONNX export of the model (index/onnx_export.py) is made once per session, here, and never
# in the home directory.
MODEL_CACHE = tempfile.mkdtemp(prefix="vaultmem-test-cache-")
os.environ["VAULTMEM_CACHE_DIR"] = MODEL_CACHE
atexit.register(shutil.rmtree, MODEL_CACHE, True)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never inherit a vault, ghost, colour or Chroma setting from the machine."""
    for name in list(os.environ):
        if name.startswith("VAULTMEM_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VAULTMEM_CACHE_DIR", MODEL_CACHE)
    # No test leaves a watcher behind: read commands start none (tests of autostart unset it).
    monkeypatch.setenv("VAULTMEM_NO_AUTOSTART", "1")
    # LINES too: rich lays out a terminal by its size when both are known (pytest-xdist's
    # workers inherit LINES), by a dumb terminal's 80 columns otherwise.
    for name in ("NO_COLOR", "FORCE_COLOR", "LINES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "100")


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def data(self) -> Any:
        return json.loads(self.stdout)


_built: dict[int, Any] = {}


def _command_once(app: Any) -> Any:
    """Typer rebuilds the click command from every signature on each invoke (~0.1 s, most of
    a test's time); the command is reusable, so build it once per process."""
    key = id(app)
    if key not in _built:
        _built[key] = _build_command(app)
    return _built[key]


_build_command = getattr(typer.testing, "_get_command", None)


class Cli:
    """Runs `vaultmem ARGS` in-process against one vault and parses `--json` output."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.runner = CliRunner()

    def __call__(
        self, *args: str, ghost: str | None = None, input: str | None = None, json_: bool = True, vault: bool = True
    ) -> Result:
        from vaultmem.cli.main import app

        argv = list(args)
        if vault:
            argv += ["--vault", str(self.vault)]
        if ghost is not None:
            argv += ["--ghost", ghost]
        if json_:
            argv.append("--json")
        if _build_command is not None:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(typer.testing, "_get_command", _command_once)
                res = self.runner.invoke(app, argv, input=input, catch_exceptions=False)
        else:
            res = self.runner.invoke(app, argv, input=input, catch_exceptions=False)
        return Result(res.exit_code, res.stdout, res.stderr)

    def ok(self, *args: str, **kw: Any) -> Any:
        res = self(*args, **kw)
        assert res.exit_code == 0, f"exit {res.exit_code}\nstdout: {res.stdout}\nstderr: {res.stderr}"
        return res.data if kw.get("json_", True) else res.stdout


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A fresh vault with ghosts alice and bob, made by `vaultmem init` (embeddings off)."""
    from vaultmem.services.vaults import init_vault

    root = tmp_path / "vault"
    init_vault(root, ["alice", "bob"])
    config = root / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "auto"', 'backend = "none"'))
    return root


def journaled(root: Path) -> list[Any]:
    """The write journal's lines after init's own (its example notes, the person's)."""
    from vaultmem.services.vaults import EXAMPLES_REASON
    from vaultmem.vault.journal import read_all

    return [e for e in read_all(root) if e.reason != EXAMPLES_REASON]


@pytest.fixture
def cli(vault: Path) -> Cli:
    return Cli(vault)


@pytest.fixture
def empty_vault(tmp_path: Path) -> Iterator[Path]:
    """A vault with only a vaultmem.toml (no template notes), ghosts alice and bob."""
    root = tmp_path / "bare"
    root.mkdir()
    (root / "vaultmem.toml").write_text('[vault]\nghosts = ["alice", "bob"]\n\n[embedding]\nbackend = "none"\n')
    yield root
