"""Creating vaults and registering ghosts."""

from __future__ import annotations

import os
import shlex
import sys
import time
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from vaultmem.clock import now_note_time as utc_now
from vaultmem.config import (
    CONFIG_NAME,
    STATE_DIR,
    add_ghost_to_config_text,
    load_config,
    validate_ghost_name,
)
from vaultmem.errors import Conflict, InvalidInput
from vaultmem.index.lock import IndexLock
from vaultmem.models import GhostsResult, InitResult
from vaultmem.paths import StatePaths
from vaultmem.vault import journal
from vaultmem.vault.ids import new_ulid
from vaultmem.vault.journal import ATTRIBUTES as JOURNAL_ATTRIBUTES
from vaultmem.vault.layout import SCOPES, inside_vault, is_ignored_dir, is_note_path, walk_notes
from vaultmem.vault.nesting import enclosing_vault
from vaultmem.vault.store import write_whole

SCOPE_DIRS = (*SCOPES, "inbox/shared", "reference")
GHOST_DIRS = ("private", "diary", "inbox")
_GHOST_PLACEHOLDER = "_ghost_"


EXAMPLES_REASON = "example notes of vaultmem init"  # their journal lines' reason


def template_root() -> Traversable:
    return resources.files("vaultmem").joinpath("vault_template")


def _fill(text: str, ghost: str | None) -> str:
    text = text.replace("{{now}}", utc_now())
    # the Python that runs vaultmem now: the git hook falls back to it where PATH has no `vaultmem`
    text = text.replace("{{python}}", shlex.quote(sys.executable))
    while "{{id}}" in text:
        text = text.replace("{{id}}", new_ulid(), 1)
    if ghost is not None:
        text = text.replace("{{ghost}}", ghost)
    return text


def _write_new(root: Path, target: Path, text: str) -> None:
    """Write a template file unless something is there already (a dangling symlink too),
    and never through a symlinked folder that leaves the vault."""
    if target.exists() or target.is_symlink() or not inside_vault(root, target.parent):
        return
    target.write_text(text, encoding="utf-8")


def _copy_tree(src: Traversable, root: Path, dest: Path, ghosts: list[str]) -> None:
    for item in sorted(src.iterdir(), key=lambda t: t.name):
        name = item.name
        if name in ("__pycache__", "__init__.py"):
            continue
        if item.is_dir():
            if name == _GHOST_PLACEHOLDER:
                for ghost in ghosts:
                    _copy_ghost_tree(item, root, dest / ghost, ghost)
            else:
                (dest / name).mkdir(exist_ok=True)
                _copy_tree(item, root, dest / name, ghosts)
        else:
            _write_new(root, dest / name, _fill(item.read_text(encoding="utf-8"), None))


def _copy_ghost_tree(src: Traversable, root: Path, dest: Path, ghost: str) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.is_dir():
            _copy_ghost_tree(item, root, dest / item.name, ghost)
        else:
            # Example notes are named after their titles, which name the ghost
            target = dest / item.name.replace(_GHOST_PLACEHOLDER, ghost)
            _write_new(root, target, _fill(item.read_text(encoding="utf-8"), ghost))


def ghost_folders(root: Path, ghost: str) -> None:
    for top in GHOST_DIRS:
        (root / top / ghost).mkdir(parents=True, exist_ok=True)


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _template_paths(src: Traversable, rel: str, ghosts: list[str], ghost: str | None = None) -> list[tuple[str, bool]]:
    """The vault-relative paths (and whether each is a folder) that `_copy_tree` writes."""
    out: list[tuple[str, bool]] = []
    for item in src.iterdir():
        name = item.name
        if ghost is None and name in ("__pycache__", "__init__.py"):
            continue
        if item.is_dir() and ghost is None and name == _GHOST_PLACEHOLDER:
            for each in ghosts:
                out.append((f"{rel}{each}", True))
                out += _template_paths(item, f"{rel}{each}/", ghosts, each)
        elif item.is_dir():
            out.append((f"{rel}{name}", True))
            out += _template_paths(item, f"{rel}{name}/", ghosts, ghost)
        else:
            out.append((rel + (name if ghost is None else name.replace(_GHOST_PLACEHOLDER, ghost)), False))
    return out


def append_ignore_rule(path: Path, entry: str) -> bool:
    """Append `entry` (`.vaultmem/`, a file name) to an existing .gitignore, unless a line
    already ignores it (with or without a leading or trailing slash)."""
    name = entry.strip("/")
    rules = {name, f"{name}/", f"/{name}", f"/{name}/"}
    data = path.read_bytes()
    if any(line.strip() in rules for line in data.decode("utf-8", "replace").splitlines()):
        return False
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    with path.open("ab") as fh:  # appends: the lines already there stay byte for byte
        fh.write((newline if data and not data.endswith(b"\n") else b"") + entry.encode() + newline)
    return True


def append_attribute(path: Path, rule: str) -> bool:
    """Append `rule` (a .gitattributes line) to an existing file unless it holds it."""
    data = path.read_bytes()
    if any(line.strip() == rule for line in data.decode("utf-8", "replace").splitlines()):
        return False
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    with path.open("ab") as fh:
        fh.write((newline if data and not data.endswith(b"\n") else b"") + rule.encode() + newline)
    return True


def _planned(names: list[str], examples: bool) -> dict[str, bool]:
    """Every path init may create (vault-relative) and whether it is a folder."""
    planned: dict[str, bool] = dict.fromkeys(SCOPES, True)
    planned.update({folder: True for folder in SCOPE_DIRS})
    planned.update({f"{top}/{ghost}": True for top in GHOST_DIRS for ghost in names})
    planned.update({CONFIG_NAME: False, ".gitignore": False, ".gitattributes": False, STATE_DIR: True})
    if examples:
        planned.update(_template_paths(template_root(), "", names))
    return planned


def _checked_target(path: Path, ghosts: list[str]) -> tuple[Path, list[str]]:
    names: list[str] = []
    for ghost in ghosts:
        validate_ghost_name(ghost)
        if ghost not in names:
            names.append(ghost)
    root = path.expanduser().resolve()
    if (root / CONFIG_NAME).exists():
        raise Conflict(
            f"{root} is already a vault ({CONFIG_NAME} exists); nothing changed. "
            "Register more ghosts with `vaultmem ghost add NAME`."
        )
    if root.exists() and not root.is_dir():
        raise InvalidInput(f"{root} exists and is not a folder")
    # a folder to be made under a file (`init notes.txt/vault`): said, not a traceback
    above = next((p for p in root.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise InvalidInput(f"{root} cannot be made: {above} is not a folder")
    # No vault in a vault, either way: the inner one's notes would be the outer one's too,
    # and a ghost could make another ghost's private folder (private/bob/) a vault of its
    # own, or a vault of the folder above a vault, in which those notes read as shared.
    outer = enclosing_vault(root)
    if outer is not None:
        raise InvalidInput(f"{root} lies inside the vault {outer}, and a vault cannot hold another; nothing changed")
    inner = _vault_within(root)
    if inner is not None:
        raise InvalidInput(f"{root} holds the vault {inner}, and a vault cannot hold another; nothing changed")
    return root, names


def _vault_within(root: Path) -> Path | None:
    """A vault somewhere below `root` in the folders the vault's own walk reads (walk_notes:
    no ignored folder, no symbolic link to a folder), or None. Python's own folders are code,
    not notes: a virtual environment holds vaultmem's package template (vault_template/)."""
    if not root.is_dir():
        return None
    for folder, subfolders, files in os.walk(root):
        if CONFIG_NAME in files and Path(folder) != root:
            return Path(folder)
        if "__init__.py" in files or "pyvenv.cfg" in files:
            subfolders[:] = []
            continue
        subfolders[:] = [name for name in subfolders if not is_ignored_dir(name)]
    return None


def _write_vault(root: Path, names: list[str], examples: bool, hook_is_ours: bool) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for folder in SCOPE_DIRS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    if examples:
        _copy_tree(template_root(), root, root, names)
    else:
        for name in (CONFIG_NAME, ".gitignore", ".gitattributes"):
            text = template_root().joinpath(name).read_text(encoding="utf-8")
            _write_new(root, root / name, _fill(text, None))
    config_path = root / CONFIG_NAME
    text = config_path.read_text(encoding="utf-8")
    for ghost in names:
        text = add_ghost_to_config_text(text, ghost)
    config_path.write_text(text, encoding="utf-8")
    for ghost in names:
        ghost_folders(root, ghost)
    hook = root / "hooks" / "pre-commit"
    if examples and hook_is_ours and hook.is_file():  # only a hook init wrote
        os.chmod(hook, 0o755)
    (root / STATE_DIR).mkdir(mode=0o700, exist_ok=True)


def init_vault(path: Path, ghosts: list[str], examples: bool | None = None) -> InitResult:
    """Create a vault at `path`, or adopt the notes already there.

    `examples=None`: the template's example notes, README and lint hook in a folder without
    notes; none in a folder that already holds notes (an existing Obsidian vault), which gets
    only vaultmem.toml, the scope folders and the `.vaultmem/` ignore rule. Nothing that
    exists is overwritten or changed, except that an existing .gitignore without the rule
    gets it appended. An existing vaultmem.toml is a conflict and changes nothing.
    """
    root, names = _checked_target(path, ghosts)
    existing_notes = sum(1 for _ in walk_notes(root)) if root.is_dir() else 0
    if examples is None:
        examples = existing_notes == 0
    planned = _planned(names, examples)
    before = {rel for rel in planned if _present(root / rel)}
    gitignore = root / ".gitignore"
    appended: list[str] = []
    if gitignore.is_file() and not gitignore.is_symlink() and append_ignore_rule(gitignore, f"{STATE_DIR}/"):
        appended.append(".gitignore")
    attributes = root / ".gitattributes"
    if attributes.is_file() and not attributes.is_symlink() and append_attribute(attributes, JOURNAL_ATTRIBUTES):
        appended.append(".gitattributes")
    _write_vault(root, names, examples, hook_is_ours="hooks/pre-commit" not in before)
    if examples:
        # The example notes are the writes of the person who ran init: journaled as theirs,
        # so that a first `vaultmem commit` does not take them for edits made by hand.
        made = [rel for rel, folder in planned.items() if not folder and rel not in before and is_note_path(rel)]
        at = journal.stamp(time.time())
        journal.record(root, made, at, None, None, EXAMPLES_REASON)
        written = journal.journal_file(root, None, at).relative_to(root)
        planned.update({p.as_posix(): True for p in written.parents if p.name})
        planned[written.as_posix()] = False

    def label(rel: str) -> str:
        return f"{rel}/" if planned[rel] else rel

    return InitResult(
        vault=str(root),
        ghosts=names,
        examples=examples,
        existing_notes=existing_notes,
        added=sorted(label(rel) for rel in planned if rel not in before and _present(root / rel)),
        appended=appended,
        kept=sorted(label(rel) for rel in before if rel not in appended),
    )


CONFIG_LOCK_WAIT_S = 30.0


def add_ghost(root: Path, ghost: str) -> GhostsResult:
    validate_ghost_name(ghost)
    load_config(root, env={})  # a missing or broken vaultmem.toml fails before any lock is made
    # Read-modify-write of vaultmem.toml under a lock: parallel `ghost add`s each keep their
    # ghost (without it, the last rename wins and drops the others' registrations).
    with IndexLock(StatePaths(root).config_lock, role="ghost add", wait_s=CONFIG_LOCK_WAIT_S):
        added = ghost not in load_config(root, env={}).ghosts
        if added:
            path = root / CONFIG_NAME
            _write_config(path, add_ghost_to_config_text(path.read_text(encoding="utf-8"), ghost))
        ghosts = list(load_config(root, env={}).ghosts)
    ghost_folders(root, ghost)
    return GhostsResult(ghosts, added)


def _write_config(path: Path, text: str) -> None:
    """Replace vaultmem.toml whole (store.write_whole: a temp file beside it, fsynced, then
    renamed over it), keeping the file's mode."""
    write_whole(path, text.encode("utf-8"), os.stat(path).st_mode & 0o7777)


def list_ghosts(root: Path) -> GhostsResult:
    return GhostsResult(list(load_config(root, env={}).ghosts))
