"""Where the tools find the repository, the corpora and their work folder."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The workplace keeps the corpora beside the repository (../shared/corpora); every tool takes
# `--corpora` for any other place.
CORPORA = REPO.parent / "shared" / "corpora"
# Generated vaults, working copies and caches: gitignored, reused between runs.
WORK = REPO / "bench-work"
