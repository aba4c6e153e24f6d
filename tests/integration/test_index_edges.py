"""The edge table stays exact whether a reconcile recomputes every note's links or, when
no name changed, only the edited notes' own links."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli


def _vault(root: Path) -> Cli:
    root.mkdir()
    (root / "vaultmem.toml").write_text('[vault]\nghosts = ["alice"]\n\n[embedding]\nbackend = "none"\n')
    (root / "shared").mkdir()
    (root / "shared" / "hub.md").write_text("---\ntitle: Hub\n---\nThe hub.\n")
    (root / "shared" / "spoke.md").write_text("---\ntitle: Spoke\n---\nNo links yet.\n")
    (root / "shared" / "fan.md").write_text("---\ntitle: Fan\n---\nI like [[Wheel]].\n")
    return Cli(root)


def _in(cli: Cli, ref: str) -> list[str]:
    return sorted(n["path"] for n in cli.ok("get", ref)["links"]["in"])


def test_body_edit_updates_only_its_links(tmp_path: Path) -> None:
    root = tmp_path / "v"
    cli = _vault(root)
    assert _in(cli, "Hub") == []
    (root / "shared" / "spoke.md").write_text("---\ntitle: Spoke\n---\nNow see [[Hub]].\n")
    assert _in(cli, "Hub") == ["shared/spoke.md"]
    (root / "shared" / "spoke.md").write_text("---\ntitle: Spoke\n---\nLinks removed.\n")
    assert _in(cli, "Hub") == []


def test_a_new_name_resolves_other_notes_dangling_links(tmp_path: Path) -> None:
    root = tmp_path / "v"
    cli = _vault(root)
    assert cli.ok("get", "Fan")["links"]["dangling"][0]["target"] == "Wheel"
    # Hub takes the alias "Wheel": Fan's link, untouched, now resolves to it.
    (root / "shared" / "hub.md").write_text("---\ntitle: Hub\naliases: [Wheel]\n---\nThe hub.\n")
    assert _in(cli, "Hub") == ["shared/fan.md"]
    assert cli.ok("get", "Fan")["links"]["dangling"] == []
