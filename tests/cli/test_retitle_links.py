"""`note update --title` keeps the links that reached the note by its old title (a probe's
find): a note not named after its title keeps its file name, and `[[Old title]]`,
`related: "[[Old title]]"` and `parent: Old title` in other notes dangled, vaultmem's own
command breaking vaultmem's own graph. They are rewritten as `note move` rewrites links,
in the notes the caller may write: a ghost's private note is that ghost's business."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli


def test_a_new_title_keeps_the_links_by_the_old_one(cli: Cli, vault: Path) -> None:
    wine = vault / "shared/wine-notes.md"
    wine.write_text('---\ntitle: "Wine: basics"\naliases: [Vino]\n---\nsoils\n', encoding="utf-8")
    ref = vault / "shared/Ref.md"
    ref.write_text(
        '---\ntitle: Ref\nrelated: "[[Wine: basics]]"\n---\n[[Wine: basics]] [[Vino]] [[wine-notes]]\n',
        encoding="utf-8",
    )
    child = vault / "shared/Child.md"
    child.write_text('---\ntitle: Child\nparent: "Wine: basics"\n---\nc\n', encoding="utf-8")
    mine = vault / "private/alice/Mine.md"  # as alice's person wrote it (a create writes file names)
    mine.write_text("---\ntitle: Mine\n---\nmy [[Wine: basics]]\n", encoding="utf-8")
    mine_before = mine.read_bytes()

    res = cli("note", "update", "Wine: basics", "--title", "Wine: intro", "--expect-version", "0", ghost="bob")

    assert res.exit_code == 0, res.stderr
    assert res.data["path"] == "shared/wine-notes.md"
    assert res.data["links_updated"] == ["shared/Child.md", "shared/Ref.md"]
    # bob may not see alice's note: it is neither named nor rewritten (SPEC §3)
    assert "alice" not in res.stdout + res.stderr and "Mine" not in res.stdout + res.stderr
    assert mine.read_bytes() == mine_before
    assert ref.read_text(encoding="utf-8") == (
        '---\ntitle: Ref\nrelated: "[[shared/wine-notes]]"\n---\n'
        "[[shared/wine-notes|Wine: basics]] [[Vino]] [[wine-notes]]\n"  # by alias, by file name: kept
    )
    assert child.read_text(encoding="utf-8") == '---\ntitle: Child\nparent: "shared/wine-notes"\n---\nc\n'
    out = cli.ok("get", "Ref", ghost="bob")["links"]["out"]
    assert {link["path"] for link in out} == {"shared/wine-notes.md"}
    assert [c["path"] for c in cli.ok("links", "Wine: intro", ghost="bob")["children"]] == ["shared/Child.md"]
    # alice's link by the old title is hers to change: lint shows it, and only it
    dangling = [p for p in cli.ok("lint")["problems"] if p["code"] == "dangling_link"]
    assert [p["path"] for p in dangling] == ["private/alice/Mine.md"]


def test_a_note_renamed_after_its_new_title_keeps_the_links_by_the_old_one(cli: Cli, vault: Path) -> None:
    """Named after its title (`Wine basics.md`, Obsidian's name for `Wine: basics`), the note
    is renamed as `note move` renames it, and the links by its old title follow it as every
    link to a moved note does (another ghost's included): `parent: Wine: basics` dangled."""
    (vault / "shared/Wine basics.md").write_text('---\ntitle: "Wine: basics"\n---\nsoils\n', encoding="utf-8")
    child = vault / "shared/Child.md"
    child.write_text("---\ntitle: Child\nparent: 'Wine: basics'\n---\n[[Wine: basics]]\n", encoding="utf-8")
    mine = vault / "private/alice/Mine.md"
    mine.write_text("---\ntitle: Mine\n---\nmy [[Wine: basics]]\n", encoding="utf-8")

    res = cli.ok("note", "update", "Wine: basics", "--title", "Wine: intro", "--expect-version", "0", ghost="bob")

    assert res["path"] == "shared/Wine intro.md"
    assert child.read_text(encoding="utf-8") == (
        "---\ntitle: Child\nparent: 'shared/Wine intro'\n---\n[[shared/Wine intro|Wine: basics]]\n"
    )
    assert mine.read_text(encoding="utf-8") == "---\ntitle: Mine\n---\nmy [[shared/Wine intro|Wine: basics]]\n"
    assert not [p for p in cli.ok("lint")["problems"] if p["code"] == "dangling_link"]
