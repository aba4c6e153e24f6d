"""Names compare without letter case and Unicode normal form (index/resolve.py name_key):
`Café` typed as `e` + U+0301 (NFD, macOS keyboards and file names) is the note `Café` (NFC),
in resolution, in what the catalog re-resolves, in moves and in the graph (probe F10). Pure."""

from __future__ import annotations

import unicodedata

import pytest

from vaultmem.index.catalog import names_met_by
from vaultmem.index.graph import LinkGraph
from vaultmem.index.resolve import NameEntry, Resolver, name_key
from vaultmem.index.statedb import Edge
from vaultmem.index.statedb.records import _lower
from vaultmem.services.relinker import Relinker


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (nfc("Café"), nfd("Café"), True),
        (nfc("CAFÉ"), nfd("café"), True),
        ("\u212b", "\u00c5", True),  # ANGSTROM SIGN is canonically Å
        (nfc("한국"), nfd("한국"), True),  # Hangul syllables and their jamo
        (nfd("Crème brûlée"), nfc("crème BRÛLÉE"), True),
        ("Cafe", nfc("Café"), False),  # an accent is no case
        ("\ufb01le", "file", False),  # a ligature is only compatibility-equal: neither Obsidian nor a disk folds it
        ("Ⅸ", "IX", False),
    ],
)
def test_name_key(a: str, b: str, same: bool) -> None:
    assert (name_key(a) == name_key(b)) is same
    assert name_key(a) == _lower(a) and name_key(b) == _lower(b)  # the state db's rule, for `get`


FOLDER = nfd("Naïve")
ENTRIES = [
    NameEntry(f"shared/{nfc('Café')}.md", "01CAFE", "Coffee place", (nfc("Crème brûlée"),)),
    NameEntry(f"shared/{FOLDER}/{nfd('Résumé')}.md", "01RESUME", nfd("Résumé of Zoë")),
    NameEntry("shared/Cafe.md", "01PLAIN", "Plain"),
]


@pytest.mark.parametrize(
    ("target", "source", "relative", "expected"),
    [
        (nfd("Café"), None, False, f"shared/{nfc('Café')}.md"),  # stem
        (nfd("CAFÉ"), None, False, f"shared/{nfc('Café')}.md"),
        (nfd("shared/Café.md"), None, False, f"shared/{nfc('Café')}.md"),  # path
        (nfd("crème BRÛLÉE"), None, False, f"shared/{nfc('Café')}.md"),  # alias
        ("Cafe", None, False, "shared/Cafe.md"),  # no accent: another note
        (nfc("Résumé"), None, False, f"shared/{FOLDER}/{nfd('Résumé')}.md"),  # stem on disk in NFD
        (nfc("Naïve/Résumé"), None, False, f"shared/{FOLDER}/{nfd('Résumé')}.md"),  # folder suffix
        (nfc("résumé of zoë"), None, False, f"shared/{FOLDER}/{nfd('Résumé')}.md"),  # title
        (nfc("Naïve/Résumé.md"), "shared/x.md", True, f"shared/{FOLDER}/{nfd('Résumé')}.md"),  # markdown
        (nfc("../Café.md"), f"shared/{FOLDER}/{nfd('Résumé')}.md", True, f"shared/{nfc('Café')}.md"),
        (nfd("Cafés"), None, False, None),
    ],
)
def test_resolve_in_either_normal_form(target: str, source: str | None, relative: bool, expected: str | None) -> None:
    assert Resolver(ENTRIES).resolve(target, source, relative=relative) == expected


def test_candidates_and_ids_in_either_normal_form() -> None:
    resolver = Resolver([*ENTRIES, NameEntry("shared/x.md", nfc("Zoë-1"), nfc("Résumé of Zoë"))])
    assert resolver.candidates(nfc("Résumé of Zoë")) == [f"shared/{FOLDER}/{nfd('Résumé')}.md", "shared/x.md"]
    assert resolver.is_id(nfd("zoë-1")) and resolver.is_id("01cafe") and not resolver.is_id(nfd("Café"))


@pytest.mark.parametrize(
    ("target", "met"),
    [
        (nfd("Café"), True),
        (nfd("shared/CAFÉ.md"), True),
        (nfd("Crème brûlée"), True),
        (nfd("../Café.md"), True),
        ("Cafe", False),
        (nfd("Cafés"), False),
    ],
)
def test_a_new_note_meets_links_typed_in_either_form(target: str, met: bool) -> None:
    """Which links the catalog resolves again when this note appears (catalog.names_met_by)."""
    assert names_met_by([ENTRIES[0]])(target) is met


NAMES = [
    (f"shared/{nfc('Café')}.md", "01CAFE", nfc("Café"), ()),
    ("shared/Linker.md", "01LINK", "Linker", ()),
    (f"shared/{nfd('Résumé')}.md", "01RESUME", nfd("Résumé"), ()),
]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (f"[[{nfd('Café')}#Menu|the {nfd('café')}]]", f"[[Coffee house#Menu|the {nfd('café')}]]"),
        (f"![[{nfd('shared/Café')}]]", "![[Coffee house]]"),
        ("[c](Cafe%CC%81.md)", "[c](Coffee%20house.md)"),  # e + U+0301, percent-encoded
        (f"[[{nfd('Café')}|x]] [[{nfc('Résumé')}]]", f"[[Coffee house|x]] [[{nfc('Résumé')}]]"),  # not moved: as typed
        (f"[[{nfd('cafe')}]]", f"[[{nfd('cafe')}]]"),  # dangling: as typed
    ],
)
def test_a_move_rewrites_links_typed_in_either_form(body: str, expected: str) -> None:
    relinker = Relinker.build(NAMES, {f"shared/{nfc('Café')}.md": "shared/Coffee house.md"}, short=True)
    assert relinker.rewrite("shared/Linker.md", body) == expected


def test_a_name_dangling_in_both_forms_is_one_graph_node() -> None:
    graph = LinkGraph([Edge("a.md", None, "link", nfc("Café")), Edge("b.md", None, "link", nfd("CAFÉ"))])
    assert [n for n in graph.g.nodes if n.startswith("dangling:")] == [f"dangling:{nfc('café')}"]
