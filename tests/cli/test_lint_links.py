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


def test_a_ghost_fixes_no_link_it_cannot_judge(cli: Cli, vault: Path) -> None:
    """Which note Obsidian opens by a file name may be one the ghost cannot see: its fix
    pointed a person's [[Foo]] (bob's private Foo.md, in Obsidian) at alice's alias Foo (a
    reviewer's find). A ghost's lint names the link; only a person's --fix writes it."""
    cli.ok("note", "create", "--title", "Foo", "--type", "note", "--scope", "private", "--body", "s", ghost="bob")
    cli.ok(
        "note", "create", "--title", "Bar", "--type", "note", "--scope", "shared", "--alias", "Foo", "--body", "b",
        ghost="alice",
    )  # fmt: skip
    person = write(vault, "shared/P2.md", "---\nid: pn2\ntitle: P2\n---\nmy link [[Foo]]\n")
    warned = [p for p in cli("lint", ghost="alice").data["problems"] if p["code"] == "not_a_file_name"]
    assert [p["path"] for p in warned] == ["shared/P2.md"] and "a person's `lint --fix`" in warned[0]["message"]
    cli.ok("lint", "--fix", ghost="alice")
    assert person.read_text().endswith("my link [[Foo]]\n")
    assert "not_a_file_name" not in _codes(cli)  # the whole vault's view: Obsidian opens bob's Foo.md, as vaultmem


def test_a_fixed_link_in_an_agents_note_keeps_it_the_agents(cli: Cli) -> None:
    """The fix is vaultmem's write: the note's hash and version follow, so the agent may
    still replace its own note unread (it looked edited by hand)."""
    cli.ok(
        "note", "create", "--title", "Linker", "--type", "note", "--scope", "shared", "--body", "see [[Wine: basics]]"
    )
    cli.ok("note", "create", "--title", "Wine: basics", "--type", "note", "--scope", "shared", "--body", "hi")
    cli.ok("lint", "--fix")
    cli.ok("note", "update", "Linker", "--body", "replaced", ghost="alice")


def test_property_links_obsidian_cannot_follow_are_named_and_fixed(cli: Cli, vault: Path) -> None:
    """A property whose whole value is one wikilink is a link to Obsidian (1.4+): one
    written by a title, an id or an alias is named and fixed as the body's are, only its
    target changes, and a note's own names stay as given."""
    wine = cli.ok("note", "create", "--title", "Wine: basics", "--type", "fact", "--scope", "shared", "--body", "P.")
    cli.ok(
        "note", "create", "--title", "Bob: plans", "--type", "fact", "--scope", "private", "--body", "s", ghost="bob"
    )
    front = (
        "---\nid: P1\ntitle: Props\naliases: ['[[Wine: basics]]']\n# a person's links\n"
        'related: "[[Wine: basics]]"  # by title\n'
        "sources:\n  - '[[Wine: basics#Soils]]'\n  - \"[[Wine basics|by file]]\"\n"
        f'parent: "[[{wine["id"]}]]"\n'
        'plans: "[[Bob: plans]]"\n'
        "---\nNo link in the body.\n"
    )
    props = write(vault, "shared/Props.md", front)
    assert _codes(cli)["not_a_file_name"] == ["shared/Props.md"] * 3  # by title, by id, bob's title
    fixed = cli.ok("lint", "--fix")["fixed"]
    assert {"path": "shared/Props.md", "links": "by file name, as Obsidian resolves them"} in fixed
    assert props.read_text(encoding="utf-8") == (
        front.replace('"[[Wine: basics]]"  #', '"[[shared/Wine basics|Wine: basics]]"  #')
        .replace("'[[Wine: basics#Soils]]'", "'[[shared/Wine basics#Soils|Wine: basics#Soils]]'")
        .replace(f"[[{wine['id']}]]", "[[shared/Wine basics]]")
    )
    # bob's private path never lands in a note alice reads: the warning stays, and says why
    left = [p for p in cli("lint").data["problems"] if p["code"] == "not_a_file_name"]
    assert [p["path"] for p in left] == ["shared/Props.md"] and "leaves it" in left[0]["message"]
    assert cli.ok("links", "Props")["parent"]["path"] == wine["path"]
