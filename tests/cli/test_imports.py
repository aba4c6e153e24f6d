"""Acceptance 13 (and SPEC §7): `vaultmem --help` and `get` never import chromadb or torch.

Runs the installed entry point in a fresh interpreter of the project's environment, then
inspects `sys.modules` of that very process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("chromadb", "torch", "sentence_transformers", "transformers", "onnxruntime")

# What the `vaultmem` console script does, plus a report of what got imported.
WRAPPER = """
import json, os, sys
sys.argv = ["vaultmem", *json.loads(os.environ["VM_ARGS"])]
from vaultmem.cli.entry import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in sys.modules if m.split(".")[0] in json.loads(os.environ["VM_HEAVY"]))
with open(os.environ["VM_REPORT"], "w") as fh:
    json.dump({"code": code, "heavy": heavy}, fh)
"""


def _python() -> str:
    """The interpreter the `vaultmem` console script runs under."""
    script = Path(sys.executable).with_name("vaultmem")
    if script.exists():
        first = script.read_text(errors="replace").splitlines()[0]
        if first.startswith("#!") and Path(first[2:].strip()).exists():
            return first[2:].strip()
    return sys.executable


def _env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("VAULTMEM_") or k in ("VAULTMEM_CACHE_DIR", "VAULTMEM_NO_AUTOSTART")
    }
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HOME=str(tmp_path))
    return env


def _run(tmp_path: Path, *args: str) -> tuple[dict[str, object], subprocess.CompletedProcess[str]]:
    report = tmp_path / "report.json"
    env = _env(tmp_path) | {"VM_ARGS": json.dumps(list(args)), "VM_HEAVY": json.dumps(HEAVY), "VM_REPORT": str(report)}
    proc = subprocess.run([_python(), "-c", WRAPPER], env=env, capture_output=True, text=True, timeout=120)
    return json.loads(report.read_text()), proc


@pytest.fixture(scope="module")
def real_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault made by the installed `vaultmem init`, with the default (auto) embedding setting."""
    tmp = tmp_path_factory.mktemp("imports")
    root = tmp / "v"
    script = Path(_python()).with_name("vaultmem")
    cmd = [str(script)] if script.exists() else [_python(), "-c", "from vaultmem.cli.entry import main; main()"]
    proc = subprocess.run(
        [*cmd, "init", str(root), "--ghost", "alice", "--json"],
        env=_env(tmp),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["vault"] == str(root.resolve())
    return root


def test_help_imports_no_heavy_library(tmp_path: Path) -> None:
    report, proc = _run(tmp_path, "--help")
    assert report["code"] == 0, proc.stderr
    assert "Usage" in proc.stdout
    assert report["heavy"] == []


@pytest.mark.parametrize(
    "args",
    [
        ["get", "Welcome to the vault", "--json"],
        ["get", "Private notes of alice", "--ghost", "alice", "--json"],
        ["get", "Welcome to the vault"],  # the rich rendering for people
        ["get", "no such note", "--json"],
    ],
)
def test_get_imports_no_heavy_library(tmp_path: Path, real_vault: Path, args: list[str]) -> None:
    report, proc = _run(tmp_path, *args, "--vault", str(real_vault))
    assert report["heavy"] == [], report
    if "no such note" in args:
        assert report["code"] == 3
        assert json.loads(proc.stdout)["error"]["code"] == "not_found"
    else:
        assert report["code"] == 0, proc.stderr
        if "--json" in args:
            assert json.loads(proc.stdout)["note"]["title"] in ("Welcome to the vault", "Private notes of alice")


def test_console_script_runs(tmp_path: Path, real_vault: Path) -> None:
    script = Path(_python()).with_name("vaultmem")
    if not script.exists():
        pytest.skip("no installed console script next to the interpreter")
    proc = subprocess.run([str(script), "--version"], env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("vaultmem ")
    proc = subprocess.run(
        [str(script), "get", "Welcome to the vault", "--vault", str(real_vault), "--json"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["note"]["path"] == "shared/Welcome to the vault.md"
    assert proc.stderr == ""
