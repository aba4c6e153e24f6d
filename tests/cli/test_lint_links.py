"""`lint` names the wikilinks vaultmem resolves and Obsidian does not (by an id, a title
that is not the file name, a bare alias), and `lint --fix` writes them by file name, never
with the path of a note some reader of the linking note may not see (a reviewer's find:
`[[Gamma]]` for an alias counted as resolved, and Obsidian opens nothing there)."""

from __future__ import annotations

from pathlib import Path

from tests.cli._util import write
from tests.conftest import Cli


def _codes(cli: Cli, *args: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in cli("lint", *args).data["problems"]:
        out.setdefault(p["code"], []).append(p["path"])
    return out


def test_links_obsidian_cannot_follow_are_named_and_fixed(cli: Cli, vault: Path) -> None:
    wine = cli.ok("note", "create", "--title", "Wine: basics", "--type", "fact", "--scope", "shared", "--body", "P.")
    secret = cli.ok(
        "note", "create", "--title", "Bob: plans", "--type", "fact", "--scope", "private", "--body", "s", ghost="bob"
    )  # fmt: skip
    body = (
        f"By title [[Wine: basics]], by file [[Wine basics]], by id [[{wine['id']}#Soils]], by alias [[Gamma]],\n"
        "in code `[[Wine: basics]]`, and bob's [[Bob: plans]].\n"
    )
    hand = write(vault, "shared/Hand.md", f"---\nid: H1\ntitle: Hand\naliases: [Gamma]\n---\n{body}")
    assert _codes(cli)["not_a_file_name"] == ["shared/Hand.md"] * 4  # title, id, alias, bob's title
    fixed = cli.ok("lint", "--fix")["fixed"]
    assert {"path": "shared/Hand.md", "links": "by file name, as Obsidian resolves them"} in fixed
    assert hand.read_text() == (
        "---\nid: H1\ntitle: Hand\naliases: [Gamma]\n---\n"
        "By title [[shared/Wine basics|Wine: basics]], by file [[Wine basics]], by id [[shared/Wine basics#Soils]], "
        "by alias [[shared/Hand|Gamma]],\nin code `[[Wine: basics]]`, and bob's [[Bob: plans]].\n"
    )
    # bob's private path never lands in a note alice reads; the warning stays, and says why
    left = [p for p in cli("lint").data["problems"] if p["code"] == "not_a_file_name"]
    assert [p["path"] for p in left] == ["shared/Hand.md"]
    assert secret["path"] in left[0]["message"] and "leaves it" in left[0]["message"]
    # alice sees no such link: bob's title dangles for her, as it did
    assert "not_a_file_name" not in _codes(cli, "--ghost", "alice")


def test_a_ghosts_fix_touches_only_what_it_may_write(cli: Cli, vault: Path) -> None:
    cli.ok("note", "create", "--title", "Wine: basics", "--type", "fact", "--scope", "shared", "--body", "P.")
    bobs = cli.ok(
        "note", "create", "--title", "Mine", "--type", "fact", "--scope", "private", "--body", "x", ghost="bob"
    )  # fmt: skip
    path = vault / bobs["path"]
    path.write_text(path.read_text().replace("x\n", "see [[Wine: basics]]\n"))
    before = path.read_text()
    cli.ok("lint", "--fix", ghost="alice")
    assert path.read_text() == before
    cli.ok("lint", "--fix", ghost="bob")
    assert "[[shared/Wine basics|Wine: basics]]" in path.read_text()
