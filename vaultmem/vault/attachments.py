"""Files other than notes that links name. Obsidian resolves `![[pic.png]]`,
`[[board.canvas]]` and `[paper](paper.pdf)` to the file by its path or, unique or not, its
name (the one beside the linking note first), so such a link to a file that is there is no
dangling link, in `links`, `lint` and `review` alike.

Only a target whose name has an extension other than `.md` is looked for, and only then is
the vault walked (once per `Attachments`): links to notes never cost a walk. A file in a
folder the reader may not see does not count, so whether another ghost keeps a
`scan.pdf` never shows through a link to one."""

from __future__ import annotations

import os
import posixpath
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from vaultmem.vault.layout import Location, classify

_MAX_SUFFIX = 10  # `.excalidraw`: longer is a sentence with a dot in it, not a file name


def names_a_file(target: str) -> bool:
    """Whether a link target names a file other than a note (it has an extension that is
    not `.md`), the only targets worth a walk of the vault."""
    name = target.strip().rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    return bool(dot and stem and suffix and len(suffix) <= _MAX_SUFFIX and suffix.isalnum() and suffix.lower() != "md")


class Attachments:
    """The files other than notes under `root` that `can_read` allows (by the location of
    their folder, as a note there would be), found on first use."""

    def __init__(self, root: Path, can_read: Callable[[Location], bool]) -> None:
        self.root = root
        self.can_read = can_read
        self._paths: set[str] | None = None
        self._by_name: dict[str, list[str]] = defaultdict(list)

    def _walk(self) -> set[str]:
        if self._paths is None:
            self._paths = set()
            for folder, dirs, files in os.walk(self.root):
                # hidden folders (.git, .obsidian, .trash, vaultmem's state) hold no attachments
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                rel_folder = os.path.relpath(folder, self.root).replace(os.sep, "/")
                rel_folder = "" if rel_folder == "." else rel_folder
                for name in files:
                    if name.startswith(".") or name.lower().endswith(".md"):
                        continue
                    rel = f"{rel_folder}/{name}" if rel_folder else name
                    if self.can_read(classify(posixpath.join(rel_folder, "x.md") if rel_folder else "x.md")):
                        self._paths.add(rel.lower())
                        self._by_name[name.lower()].append(rel)
        return self._paths

    def resolves(self, target: str, source: str) -> bool:
        """Whether `target`, linked from the note at `source`, is a file that is there."""
        if not names_a_file(target):
            return False
        paths = self._walk()
        raw = unquote(target.strip()).lstrip("/")
        low = raw.lower()
        here = source.rsplit("/", 1)[0] if "/" in source else ""
        beside = posixpath.normpath(posixpath.join(here, raw)).lower()
        if low in paths or (not beside.startswith("..") and beside in paths):
            return True
        if "/" in low:
            return any(p.endswith("/" + low) for p in paths)
        return low in self._by_name
