"""Vaults inside vaults. A folder holding a vaultmem.toml is a vault of its own: the vault
around it does not read it (vault/layout.py walk_notes), so its private notes never read as
the outer vault's shared ones. And a vault in a place the outer vault keeps to one ghost or
project (private/bob/, diary/bob/, inbox/bob/, project/x/) is not opened at all: made there,
its notes (bob's) would read as its own shared notes to anyone it lists (found by an
attacker's walk: `init VAULT/private/bob`, then `--vault VAULT/private/bob`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vaultmem.config import find_vault
from vaultmem.errors import VaultNotFound
from vaultmem.paths import CONFIG_NAME
from vaultmem.vault.layout import classify, kept


def enclosing_vault(root: Path) -> Path | None:
    """The vault that holds the folder `root` (resolved), if any: the nearest ancestor with
    a vaultmem.toml, `root` itself not counted."""
    return next((folder for folder in root.parents if (folder / CONFIG_NAME).is_file()), None)


def kept_by(root: Path) -> Path | None:
    """A vault that keeps the folder `root` (resolved) to one ghost or project, or None:
    some note below `root` would be one ghost's, one project's or nobody's in it. Every
    vault around it is asked, not the nearest alone: a second vaultmem.toml inside
    private/bob/ would otherwise make private/bob/x a shared place of that one."""
    for outer in root.parents:
        if (outer / CONFIG_NAME).is_file() and kept(classify(f"{root.relative_to(outer).as_posix()}/a/b/note.md")):
            return outer
    return None


def opened_vault(flag: str | Path | None, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The vault a command names (config.find_vault), unless it lies where another vault
    keeps its notes to one ghost or project: then no vault at all (exit 2)."""
    root = find_vault(flag, cwd, env)
    outer = kept_by(root)
    if outer is not None:
        raise VaultNotFound(
            f"{root} lies in a folder the vault {outer} keeps to one ghost or project, and is no vault of its own"
        )
    return root
