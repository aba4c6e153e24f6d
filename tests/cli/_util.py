"""Small helpers shared by the CLI tests: reading notes back and snapshotting folders."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

from vaultmem.vault.frontmatter import load_yaml, split_document


def front_matter(path: Path) -> dict[str, Any]:
    split = split_document(path.read_text(encoding="utf-8"))
    assert split.fm_text is not None, f"{path} has no front matter"
    return load_yaml(split.fm_text)


def body_of(path: Path) -> str:
    return split_document(path.read_text(encoding="utf-8")).body


def write(root: Path, relpath: str, text: str | bytes) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def snapshot(root: Path, skip: Path | None = None) -> dict[str, tuple[str, str]]:
    """Every entry under root (not following symlinks): kind and content hash / link target."""
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if skip is not None and (here == skip or skip in here.parents):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = here / name
            rel = str(path.relative_to(root))
            if skip is not None and path == skip:
                continue
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir", "")
            else:
                out[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    return out


def vault_files(root: Path) -> dict[str, bytes]:
    """Every regular file of the vault outside .vaultmem/, with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and ".vaultmem" not in p.relative_to(root).parts
    }


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    res = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return res.stdout


def changed_lines(diff: str) -> tuple[list[str], list[str]]:
    """(removed, added) content lines of a `git diff -U0`, without the +/- marks."""
    removed, added = [], []
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-"):
            removed.append(line[1:])
        elif line.startswith("+"):
            added.append(line[1:])
    return removed, added


def keys_of(lines: list[str]) -> list[str]:
    """Top-level front matter keys named by changed lines (continuation lines are skipped)."""
    return [line.split(":", 1)[0] for line in lines if line and not line.startswith((" ", "-", "\t"))]
