"""`python -m vaultmem.daemon --vault ROOT [--rescan-interval S]`: the process `watch --detach`
starts. It logs to .vaultmem/watcher.log and exits with the vaultmem exit code of a failure
(6 when another watcher or indexer holds the vault)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from vaultmem.config import STATE_DIR
from vaultmem.errors import VaultmemError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vaultmem.daemon")
    parser.add_argument("--vault", required=True)
    parser.add_argument("--rescan-interval", type=float, default=60.0)
    args = parser.parse_args(argv)
    from vaultmem.daemon.runner import Settings, Watcher, configure_logging

    root = Path(args.vault).resolve()
    configure_logging(root / STATE_DIR, to_stderr=False)
    try:
        Watcher(root, Settings(rescan_s=args.rescan_interval)).run()
    except VaultmemError as exc:
        logging.getLogger("vaultmem.watcher").error("%s", exc.message)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
