"""Issue 25, item 8: hooks that work where people commit. The vault's example hook checks
what is staged (not the working tree) and runs with PATH unset, as a GUI git or Obsidian Git
runs it; the hooks of .pre-commit-hooks.yaml run through the pre-commit framework."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

REPO = Path(__file__).resolve().parents[2]
GIT = shutil.which("git") or "git"
AWS = "AKIAIOSFODNN7EXAMPLE"
PERSON = {"GIT_AUTHOR_NAME": "Pat", "GIT_AUTHOR_EMAIL": "pat@example.com", "GIT_COMMITTER_NAME": "Pat",
          "GIT_COMMITTER_EMAIL": "pat@example.com"}  # fmt: skip


def bare_git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git as a GUI runs it: by its full path, with no PATH at all."""
    env = {"HOME": str(root), **PERSON, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([GIT, *args], cwd=root, capture_output=True, text=True, env=env)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    Cli(tmp_path).ok("init", str(root), "--ghost", "alice", vault=False)  # with the example hook
    config = root / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "auto"', 'backend = "none"'))
    for args in (["init", "-q"], ["config", "core.hooksPath", "hooks"], ["add", "-A"], ["commit", "-qm", "init"]):
        assert bare_git(root, *args).returncode == 0
    return root


def test_the_example_hook_runs_without_path_and_checks_what_is_staged(vault: Path) -> None:
    note = vault / "shared" / "Deploy.md"
    note.write_text("# Deploy\n\nRun the script.\n")
    assert bare_git(vault, "add", "-A").returncode == 0
    # a secret in the working tree only (not staged): the commit is of the staged content
    note.write_text(f"# Deploy\n\nRun the script with {AWS}.\n")
    done = bare_git(vault, "commit", "-m", "deploy notes")
    assert done.returncode == 0, done.stderr
    assert AWS not in bare_git(vault, "show", "HEAD:shared/Deploy.md").stdout
    # staged, the secret stops the commit, named by kind and line, never shown
    assert bare_git(vault, "add", "-A").returncode == 0
    refused = bare_git(vault, "commit", "-m", "with a key")
    assert refused.returncode != 0
    assert "AWS Access Key" in refused.stdout + refused.stderr and AWS not in refused.stdout + refused.stderr
    assert "deploy notes" in bare_git(vault, "log", "-1", "--format=%s").stdout


def test_a_note_moved_out_of_private_by_hand_stops_the_commit(vault: Path) -> None:
    private = vault / "private" / "alice" / "Plans.md"
    private.write_text("My plans.\n")
    assert bare_git(vault, "add", "-A").returncode == 0
    assert bare_git(vault, "commit", "-m", "plans").returncode == 0
    private.rename(vault / "shared" / "Plans.md")
    assert bare_git(vault, "add", "-A").returncode == 0
    refused = bare_git(vault, "commit", "-m", "oops")
    assert refused.returncode != 0 and "moved from private/alice to shared by hand" in refused.stderr


@pytest.mark.skipif(shutil.which("pre-commit") is None and not (REPO / ".venv/bin/pre-commit").exists(),
                    reason="needs pre-commit")  # fmt: skip
def test_the_manifest_hooks_run_through_pre_commit(vault: Path) -> None:
    """The manifest validates, and its hooks' entries, run by the framework (a local repo
    with the manifest's own entries: installing vaultmem from a clone would need PyPI),
    pass clean staged notes and refuse a staged secret."""
    import yaml

    pre_commit = shutil.which("pre-commit") or str(REPO / ".venv/bin/pre-commit")
    manifest = REPO / ".pre-commit-hooks.yaml"
    assert subprocess.run([pre_commit, "validate-manifest", str(manifest)], capture_output=True).returncode == 0
    hooks = yaml.safe_load(manifest.read_text())
    assert {h["id"] for h in hooks} == {"vaultmem-lint", "vaultmem-review-check"}
    local = [{**{k: v for k, v in h.items() if k != "description"}, "language": "system"} for h in hooks]
    (vault / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    env = {**os.environ, **PERSON, "PRE_COMMIT_HOME": str(vault.parent / "pc-home")}
    env["PATH"] = f"{REPO / '.venv/bin'}{os.pathsep}{env.get('PATH', '')}"

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([pre_commit, "run"], cwd=vault, capture_output=True, text=True, env=env)

    (vault / "shared" / "Clean.md").write_text("A clean note.\n")
    subprocess.run([GIT, "add", "-A"], cwd=vault, check=True, env=env)
    ok = run()
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (vault / "shared" / "Key.md").write_text(f"The key is {AWS}.\n")
    subprocess.run([GIT, "add", "-A"], cwd=vault, check=True, env=env)
    refused = run()
    assert refused.returncode != 0 and "AWS Access Key" in refused.stdout and AWS not in refused.stdout
