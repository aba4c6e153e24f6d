"""A link typed in another Unicode normal form names the same note (probe F10).

`[[Café]]` typed on a macOS keyboard is often `Cafe` + U+0301 (NFD), and macOS gives file
names in NFD too; Obsidian opens the same note either way. `get` found it, while `links`,
`lint`, `orphans` (the link graph) called the link dangling, and a move left it pointing
nowhere. Every reader now resolves by one rule (index/resolve.py name_key), and the
person's link text keeps its bytes unless a move rewrites its target.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from tests.cli._util import body_of, write
from tests.conftest import Cli

NFC = unicodedata.normalize("NFC", "Café")
NFD = unicodedata.normalize("NFD", "Café")


def _dangling(cli: Cli) -> list[str]:
    return [p["path"] for p in cli("lint").data["problems"] if p["code"] == "dangling_link"]


def _orphans(cli: Cli) -> list[str]:
    return [o["path"] for o in cli.ok("orphans")["orphans"]]


def test_an_nfd_link_reaches_an_nfc_note_everywhere(cli: Cli, vault: Path) -> None:
    assert NFC != NFD
    cafe = cli.ok(
        "note", "create", "--title", NFC, "--type", "fact", "--scope", "shared", "--body", "Coffee.",
        "--alias", unicodedata.normalize("NFC", "Crème"),
    )  # fmt: skip
    text = f"---\nid: L1\ntitle: Linker\n---\nSee [[{NFD}#Menu|the café]] and ![[{NFD}]].\n"
    linker = write(vault, "shared/Linker.md", text)
    assert cli.ok("get", NFD)["note"]["path"] == cafe["path"]  # as before
    assert cli.ok("get", unicodedata.normalize("NFD", "crème"))["note"]["path"] == cafe["path"]  # an alias
    assert cli.ok("get", "Linker")["links"]["dangling"] == []
    links = cli.ok("links", "Linker")
    assert links["dangling"] == []
    assert {o["path"] for o in links["out"]} == {cafe["path"]}
    assert [i["path"] for i in cli.ok("links", cafe["path"])["in"]] == ["shared/Linker.md"]
    assert _dangling(cli) == []
    assert cafe["path"] not in _orphans(cli)
    assert linker.read_bytes() == text.encode()  # reading never respells the person's link

    cli.ok("note", "move", cafe["path"], "Coffee house")
    assert body_of(linker) == "See [[shared/Coffee house#Menu|the café]] and ![[shared/Coffee house]].\n"
    assert _dangling(cli) == []


def test_an_nfc_link_reaches_an_nfd_file_name(cli: Cli, vault: Path) -> None:
    write(vault, f"shared/{NFD}.md", "---\nid: C1\ntype: fact\n---\nCoffee.\n")
    write(vault, "shared/Linker.md", f"---\nid: L1\ntitle: Linker\n---\nSee [[{NFC}]] and [c]({NFC}.md).\n")
    links = cli.ok("links", "Linker")
    assert links["dangling"] == []
    assert {o["id"] for o in links["out"]} == {"C1"}
    assert _dangling(cli) == []
    assert f"shared/{NFD}.md" not in _orphans(cli)
    assert cli.ok("get", f"shared/{NFC}.md")["note"]["id"] == "C1"  # a path typed in the other form


def test_a_note_made_after_the_link_turns_it_resolved(cli: Cli, vault: Path) -> None:
    """The catalog re-resolves only the links a new name could meet (catalog.names_met_by):
    an NFD link must count as meeting the new NFC note."""
    write(vault, "shared/Linker.md", f"---\nid: L1\ntitle: Linker\n---\nSee [[{NFD}]].\n")
    assert [d["target"] for d in cli.ok("links", "Linker")["dangling"]] == [NFD]
    cafe = cli.ok("note", "create", "--title", NFC, "--type", "fact", "--scope", "shared", "--body", "Coffee.")
    links = cli.ok("links", "Linker")
    assert links["dangling"] == [] and [o["path"] for o in links["out"]] == [cafe["path"]]
