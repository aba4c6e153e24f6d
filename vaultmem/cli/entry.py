"""Console-script entry point."""

from __future__ import annotations


def main() -> None:
    from vaultmem.cli.main import app

    app()
