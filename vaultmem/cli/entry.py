"""Console-script entry point.

When a watcher runs for the vault, the commands it answers (search, get, query, reference,
status, index) go to it over its socket before anything heavy is imported: this process
then costs an interpreter start and one round trip. Anything else, or any failure to reach
a watcher, runs the command here as usual. A read command that finds no watcher first
starts one (cli/autostart.py; off with VAULTMEM_NO_AUTOSTART=1 or `[watch] autostart = false`).
"""

from __future__ import annotations


def main() -> None:
    import sys

    from vaultmem.daemon.client import forward

    code = forward(sys.argv[1:])
    if code is None:
        # No watcher answered: a read command starts one (cli/autostart.py), unless turned off.
        from vaultmem.cli.autostart import start_and_forward

        code = start_and_forward(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from vaultmem.cli.main import app

    app()
