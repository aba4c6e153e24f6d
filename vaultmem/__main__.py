"""`python -m vaultmem`: the CLI, for callers that have a Python but no `vaultmem` on PATH
(the vault's git hook run by a GUI git or Obsidian Git)."""

from vaultmem.cli.entry import main

main()
