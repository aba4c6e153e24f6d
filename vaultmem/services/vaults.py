"""Creating vaults and registering ghosts."""

from __future__ import annotations

import os
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from vaultmem.config import CONFIG_NAME, STATE_DIR, add_ghost_to_config_text, load_config, validate_ghost_name
from vaultmem.errors import Conflict, InvalidInput
from vaultmem.vault.ids import new_ulid
from vaultmem.vault.store import utc_now

SCOPE_DIRS = ("shared", "private", "project", "diary", "inbox/shared", "reference")
GHOST_DIRS = ("private", "diary", "inbox")
_GHOST_PLACEHOLDER = "_ghost_"


def template_root() -> Traversable:
    return resources.files("vaultmem").joinpath("vault_template")


def _fill(text: str, ghost: str | None) -> str:
    text = text.replace("{{now}}", utc_now())
    while "{{id}}" in text:
        text = text.replace("{{id}}", new_ulid(), 1)
    if ghost is not None:
        text = text.replace("{{ghost}}", ghost)
    return text


def _copy_tree(src: Traversable, dest: Path, rel: str, ghosts: list[str]) -> None:
    for item in sorted(src.iterdir(), key=lambda t: t.name):
        name = item.name
        if name in ("__pycache__", "__init__.py"):
            continue
        if item.is_dir():
            if name == _GHOST_PLACEHOLDER:
                for ghost in ghosts:
                    _copy_ghost_tree(item, dest / ghost, ghost)
            else:
                (dest / name).mkdir(exist_ok=True)
                _copy_tree(item, dest / name, f"{rel}{name}/", ghosts)
        else:
            target = dest / name
            if not target.exists():
                target.write_text(_fill(item.read_text(encoding="utf-8"), None), encoding="utf-8")


def _copy_ghost_tree(src: Traversable, dest: Path, ghost: str) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.is_dir():
            _copy_ghost_tree(item, dest / item.name, ghost)
        elif not (dest / item.name).exists():
            (dest / item.name).write_text(_fill(item.read_text(encoding="utf-8"), ghost), encoding="utf-8")


def ghost_folders(root: Path, ghost: str) -> None:
    for top in GHOST_DIRS:
        (root / top / ghost).mkdir(parents=True, exist_ok=True)


def init_vault(path: Path, ghosts: list[str]) -> dict[str, Any]:
    names: list[str] = []
    for ghost in ghosts:
        validate_ghost_name(ghost)
        if ghost not in names:
            names.append(ghost)
    root = path.expanduser().resolve()
    if (root / CONFIG_NAME).exists():
        raise Conflict(f"{root} is already a vault ({CONFIG_NAME} exists)")
    if root.exists() and not root.is_dir():
        raise InvalidInput(f"{root} exists and is not a folder")
    root.mkdir(parents=True, exist_ok=True)
    for folder in SCOPE_DIRS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    _copy_tree(template_root(), root, "", names)
    config_path = root / CONFIG_NAME
    text = config_path.read_text(encoding="utf-8")
    for ghost in names:
        text = add_ghost_to_config_text(text, ghost)
    config_path.write_text(text, encoding="utf-8")
    for ghost in names:
        ghost_folders(root, ghost)
    hook = root / "hooks" / "pre-commit"
    if hook.exists():
        os.chmod(hook, 0o755)
    (root / STATE_DIR).mkdir(exist_ok=True)
    return {"vault": str(root), "ghosts": names}


def add_ghost(root: Path, ghost: str) -> dict[str, Any]:
    validate_ghost_name(ghost)
    config = load_config(root, env={})
    added = ghost not in config.ghosts
    if added:
        path = root / CONFIG_NAME
        text = path.read_text(encoding="utf-8")
        tmp = path.with_name(f".{CONFIG_NAME}.tmp")
        tmp.write_text(add_ghost_to_config_text(text, ghost), encoding="utf-8")
        os.replace(tmp, path)
    ghost_folders(root, ghost)
    return {"ghosts": list(load_config(root, env={}).ghosts), "added": added}


def list_ghosts(root: Path) -> dict[str, Any]:
    return {"ghosts": list(load_config(root, env={}).ghosts)}
