"""Notes without an `id:` keep their (derived) id when their folder is renamed: agents
holding the id can still `get` it. A rebuild from nothing derives ids from paths again."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import Cli


def _vault(root: Path) -> Cli:
    root.mkdir()
    (root / "vaultmem.toml").write_text('[vault]\nghosts = ["alice"]\n\n[embedding]\nbackend = "none"\n')
    folder = root / "shared" / "Guides"
    folder.mkdir(parents=True)
    (folder / "Setup.md").write_text("# Setup\n\nInstall the tool, then see [[Usage]].\n")
    (folder / "Usage.md").write_text("# Usage\n\nRun it every morning.\n")
    return Cli(root)


def _id(cli: Cli, ref: str) -> str:
    return str(cli.ok("get", ref)["note"]["id"])


def test_renamed_folder_keeps_derived_ids(tmp_path: Path) -> None:
    root = tmp_path / "v"
    cli = _vault(root)
    before = {name: _id(cli, f"shared/Guides/{name}.md") for name in ("Setup", "Usage")}
    (root / "shared" / "Guides").rename(root / "shared" / "Manuals")
    report = cli.ok("index")
    assert report["moved"] == 2 and report["added"] == 0 and report["deleted"] == 0
    after = {name: _id(cli, f"shared/Manuals/{name}.md") for name in ("Setup", "Usage")}
    assert after == before
    # The old id still finds the note, the link between them still resolves.
    assert cli.ok("get", before["Setup"])["note"]["path"] == "shared/Manuals/Setup.md"
    assert [n["path"] for n in cli.ok("get", before["Usage"])["links"]["in"]] == ["shared/Manuals/Setup.md"]
    # An edit keeps the carried id.
    (root / "shared" / "Manuals" / "Setup.md").write_text("# Setup\n\nInstall it twice.\n")
    assert _id(cli, "shared/Manuals/Setup.md") == before["Setup"]


def test_new_file_at_an_old_path_gets_its_own_id(tmp_path: Path) -> None:
    root = tmp_path / "v"
    cli = _vault(root)
    old = _id(cli, "shared/Guides/Setup.md")
    (root / "shared" / "Guides").rename(root / "shared" / "Manuals")
    cli.ok("index")
    (root / "shared" / "Guides").mkdir()
    (root / "shared" / "Guides" / "Setup.md").write_text("# A different setup note\n")
    newcomer = _id(cli, "shared/Guides/Setup.md")
    assert newcomer != old and _id(cli, "shared/Manuals/Setup.md") == old
    assert cli("lint").exit_code == 0  # the files themselves hold no duplicate ids


def test_rebuild_from_nothing_derives_ids_from_paths(tmp_path: Path) -> None:
    root = tmp_path / "v"
    cli = _vault(root)
    old = _id(cli, "shared/Guides/Setup.md")
    (root / "shared" / "Guides").rename(root / "shared" / "Manuals")
    cli.ok("index")
    shutil.rmtree(root / ".vaultmem")
    assert _id(cli, "shared/Manuals/Setup.md") != old
