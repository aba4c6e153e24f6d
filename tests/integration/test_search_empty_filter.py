"""Whoosh reads an empty filter set as "no filter at all". When nothing a caller may see
matches the filters (a vault whose only notes are another ghost's), search must return
nothing — not every note in the index."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli


def _private_only_vault(root: Path) -> Cli:
    root.mkdir()
    (root / "vaultmem.toml").write_text('[vault]\nghosts = ["alice", "bob"]\n\n[embedding]\nbackend = "none"\n')
    (root / "private" / "alice").mkdir(parents=True)
    (root / "private" / "alice" / "secret.md").write_text(
        "---\nid: S1\ntitle: Lighthouse keeper\ntags: [coast]\n---\nThe lighthouse keeper hides the key.\n"
    )
    return Cli(root)


def test_nothing_visible_means_nothing_found(tmp_path: Path) -> None:
    cli = _private_only_vault(tmp_path / "v")
    assert [
        r["summary"]["path"] for r in cli.ok("search", "lighthouse keeper", "--mode", "bm25", ghost="alice")["results"]
    ]
    for ghost in ("bob", None):
        out = cli("search", "lighthouse keeper", "--mode", "bm25", ghost=ghost)
        assert out.exit_code == 0
        assert out.data["results"] == [] and "lighthouse" not in out.stdout.lower().replace(
            '"query":"lighthouse keeper"', ""
        )


def test_a_filter_that_matches_nothing_finds_nothing(tmp_path: Path) -> None:
    cli = _private_only_vault(tmp_path / "v")
    out = cli.ok("search", "lighthouse", "--mode", "bm25", "--tag", "nonexistent", ghost="alice")
    assert out["results"] == []
