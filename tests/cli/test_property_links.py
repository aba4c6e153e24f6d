"""Wikilinks in properties (`related: "[[Note]]"`, a list of them) are links, as in Obsidian
1.4+: a rename rewrites them (`note move`, `fix-names`), only their targets, and the link
graph counts them (links in, backlinks, orphans); vaultmem's own writes store them by file
name, as the body's."""

from __future__ import annotations

from pathlib import Path

from tests.cli._util import vault_files, write
from tests.conftest import Cli
from vaultmem.vault.frontmatter import load_yaml, split_document

REF = """---
title: Ref
# links a person keeps
related: "[[Old Title]]"
sources:
  - "[[Other]]"
  - "[[Old Title|alias]]"   # the second source
  - '[[Old Title#Part]]'
note: "see [[Old Title]] in words"
flow: ["[[Old Title]]", plain]
rating: 5
---
Body [[Old Title]].
"""

PROP_ONLY = """---
related: '[[Old Title|the old one]]'
---
No link in the body.
"""

CHILD = """---
parent: "[[Old Title]]"
---
A child.
"""


def _linked_vault(vault: Path) -> None:
    write(vault, "shared/Old Title.md", "---\ntitle: Old Title\n---\n## Part\nThe target.\n")
    write(vault, "shared/Other.md", "Another note.\n")
    write(vault, "shared/Ref.md", REF)
    write(vault, "shared/Prop only.md", PROP_ONLY)
    write(vault, "shared/Child.md", CHILD)


def test_a_move_rewrites_links_in_properties_and_only_their_targets(vault: Path, cli: Cli) -> None:
    _linked_vault(vault)
    before = vault_files(vault)
    dry = cli.ok("note", "move", "Old Title", "New Title", "--dry-run")
    # a note whose only link to it is a property's is a note whose links change
    assert dry["links_updated"] == ["shared/Child.md", "shared/Prop only.md", "shared/Ref.md"]
    assert vault_files(vault) == before  # a dry run changes nothing
    done = cli.ok("note", "move", "Old Title", "New Title")
    assert done["links_updated"] == dry["links_updated"] and done["skipped"] == []
    # An agent's move writes vault paths (which bare names are unambiguous may depend on
    # notes it cannot see); the person's comments, quotes, order and other keys stay.
    new = "shared/New Title"
    expected = (
        REF.replace('"[[Old Title]]"\nsources', f'"[[{new}]]"\nsources')
        .replace("[[Old Title|alias]]", f"[[{new}|alias]]")
        .replace("[[Old Title#Part]]", f"[[{new}#Part]]")
        .replace('["[[Old Title]]"', f'["[[{new}]]"')
        .replace("Body [[Old Title]]", f"Body [[{new}]]")
    )
    assert (vault / "shared/Ref.md").read_text(encoding="utf-8") == expected
    assert "see [[Old Title]] in words" in expected  # a link inside words is text to Obsidian
    assert (vault / "shared/Prop only.md").read_text(encoding="utf-8") == PROP_ONLY.replace("[[Old Title|", f"[[{new}|")
    assert (vault / "shared/Child.md").read_text(encoding="utf-8") == CHILD.replace("[[Old Title]]", f"[[{new}]]")
    for ref in ("Ref", "Prop only", "Child"):
        assert not cli.ok("links", ref)["dangling"], ref
    assert cli.ok("links", "Child")["parent"]["path"] == "shared/New Title.md"


def test_property_links_are_links_of_the_graph(vault: Path, cli: Cli) -> None:
    _linked_vault(vault)
    doc = cli.ok("get", "Old Title")
    assert {link["path"] for link in doc["links"]["in"]} == {"shared/Ref.md", "shared/Prop only.md"}
    out = cli.ok("links", "Prop only")
    assert [link["path"] for link in out["out"]] == ["shared/Old Title.md"]
    # a parent written as a link is the note's parent, not a second, plain link
    child = cli.ok("links", "Child")
    assert child["out"] == [] and child["parent"]["path"] == "shared/Old Title.md"
    orphans = {o["path"] for o in cli.ok("orphans")["orphans"]}
    assert "shared/Other.md" not in orphans  # linked only from Ref's `sources`
    # a dangling property link is a dangling link
    write(vault, "shared/Dangling.md", '---\nrelated: "[[Nowhere yet]]"\n---\nx\n')
    assert [d["target"] for d in cli.ok("links", "Dangling")["dangling"]] == ["Nowhere yet"]


def test_fix_names_rewrites_property_links_by_file_name(vault: Path, cli: Cli) -> None:
    write(vault, "shared/wine-basics.md", "---\ntitle: Wine basics\n---\nRed.\n")
    ref = write(vault, "shared/Ref.md", '---\nrelated:\n  - "[[wine-basics|wine]]"  # mine\n---\nx\n')
    done = cli.ok("fix-names")
    assert ("shared/wine-basics.md", "shared/Wine basics.md") in {(m["from"], m["to"]) for m in done["moves"]}
    assert "shared/Ref.md" in done["links_updated"]
    assert ref.read_text(encoding="utf-8") == '---\nrelated:\n  - "[[Wine basics|wine]]"  # mine\n---\nx\n'


def test_a_ghosts_move_keeps_hidden_property_links_and_names_none(vault: Path, cli: Cli) -> None:
    """Links are the vault's integrity: bob's move rewrites alice's private property link,
    and tells him nothing of it. Alice's move of her private note never writes its path
    into a shared note's property (every reader of that note would see it)."""
    write(vault, "shared/Roadmap.md", "Plans.\n")
    secret = write(vault, "private/alice/Zebracorn.md", '---\nrelated: "[[Roadmap]]"\n---\nhidden\n')
    moved = cli.ok("note", "move", "Roadmap", "Roadmap 2026", ghost="bob")
    assert moved["links_updated"] == []
    assert secret.read_text(encoding="utf-8") == '---\nrelated: "[[shared/Roadmap 2026]]"\n---\nhidden\n'
    pointer = write(vault, "shared/Pointer.md", '---\nrelated: "[[Zebracorn]]"\n---\nalice wrote it\n')
    text = pointer.read_text(encoding="utf-8")
    cli.ok("note", "move", "Zebracorn", "Zebracorn 2", ghost="alice")
    assert pointer.read_text(encoding="utf-8") == text


def _front(path: Path) -> dict[str, object]:
    fm = split_document(path.read_text(encoding="utf-8")).fm_text
    assert fm is not None
    return load_yaml(fm)


def test_an_agents_property_links_are_written_by_file_name(vault: Path, cli: Cli) -> None:
    """As the links of a body vaultmem writes: a property link by title or id is stored by
    file name, the text shown kept, so that Obsidian follows it to the same note."""
    wine = cli.ok("note", "create", "--title", "Wine: basics", "--type", "fact", "--scope", "shared", "--body", "R.")
    made = cli.ok(
        "note", "create", "--title", "Tasting", "--type", "note", "--scope", "shared",
        "--source", "[[Wine: basics]]", "--body", "See [[Wine: basics]].",
    )  # fmt: skip
    path = vault / made["path"]
    assert _front(path)["source"] == "[[shared/Wine basics|Wine: basics]]"
    assert path.read_text(encoding="utf-8").endswith("See [[shared/Wine basics|Wine: basics]].\n")
    cli.ok(
        "note", "update", "Tasting", "--set", 'related="[[Wine: basics#Soils]]"',
        "--set", f'others=["[[{wine["id"]}|w]]", "[[Wine basics]]", "see [[Wine: basics]]", 5]',
    )  # fmt: skip
    front = _front(path)
    assert front["related"] == "[[shared/Wine basics#Soils|Wine: basics#Soils]]"
    assert front["others"] == ["[[shared/Wine basics|w]]", "[[Wine basics]]", "see [[Wine: basics]]", 5]
    assert not cli.ok("links", "Tasting")["dangling"]
    # as a shell leaves `--set related="[[Wine: basics]]"` typed without single quotes
    cli.ok("note", "update", "Tasting", "--set", "also=[[Wine: basics]]")
    assert _front(path)["also"] == "[[shared/Wine basics|Wine: basics]]"
