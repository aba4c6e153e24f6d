"""Git set up for memory that several clones write (issue 27): the note merge driver.

`vaultmem git setup` marks notes (`*.md`) for the `vaultmem` merge driver in the vault's
.gitattributes and defines the driver in the repository's own config, run by the Python
that runs vaultmem now, so that a GUI git or Obsidian Git without `vaultmem` on PATH merges
notes the same way. The driver itself is vault/merge.py `merge_files`.
"""

from __future__ import annotations

import shlex
import sys

from vaultmem.models import GitSetupResult
from vaultmem.services.app import App
from vaultmem.services.vaults import append_attribute
from vaultmem.vault.git import Git
from vaultmem.vault.journal import ATTRIBUTES as JOURNAL_ATTRIBUTES

NOTES_ATTRIBUTE = "*.md merge=vaultmem"


def driver_command() -> str:
    return f"{shlex.quote(sys.executable)} -m vaultmem merge-driver %O %A %B %P"


def git_setup(app: App) -> GitSetupResult:
    git = Git.of(app.root)
    attributes = app.root / ".gitattributes"
    if not attributes.exists():
        attributes.write_text("", encoding="utf-8")
    added = [rule for rule in (JOURNAL_ATTRIBUTES, NOTES_ATTRIBUTE) if append_attribute(attributes, rule)]
    git.run("config", "merge.vaultmem.name", "vaultmem notes: front matter by key, bodies three-way")
    git.run("config", "merge.vaultmem.driver", driver_command())
    return GitSetupResult(attributes_added=added, driver=driver_command())
