"""ReaderLinks (index/graph.py): links re-resolved among what one reader sees. Pure."""

from __future__ import annotations

from vaultmem.index.graph import LinkGraph, reader_links
from vaultmem.index.resolve import NameEntry, Resolver
from vaultmem.index.statedb import Edge

NAMES = [
    NameEntry("shared/Hub.md", "H", "Hub"),
    NameEntry("shared/Runbook.md", "R", "Runbook", ("Deploy",)),
    NameEntry("private/bob/Deploy.md", "B", "Deploy"),
]
EDGES = [
    Edge("shared/Hub.md", "private/bob/Deploy.md", "link", "Deploy"),  # bob's file name won globally
    Edge("shared/Hub.md", None, "link", "Nowhere"),
    Edge("private/bob/Deploy.md", "shared/Hub.md", "link", "Hub"),
]


def _view(hidden: set[str]):  # type: ignore[no-untyped-def]
    def visible(path: str) -> bool:
        return path not in hidden

    calls = []

    def resolver() -> Resolver:
        calls.append(1)
        return Resolver(n for n in NAMES if visible(n.path))

    return reader_links(EDGES, visible, resolver), calls


def test_a_reader_who_sees_everything_keeps_the_index_resolution_and_builds_nothing() -> None:
    view, calls = _view(set())
    assert view.moved == {} and view.redirected == {} and calls == []
    assert [view.dst(e) for e in EDGES] == [e.dst for e in EDGES]


def test_a_link_to_a_hidden_note_resolves_among_the_visible() -> None:
    view, calls = _view({"private/bob/Deploy.md"})
    assert calls == [1]
    assert view.dst(EDGES[0]) == "shared/Runbook.md"  # the alias, as if bob's note did not exist
    assert view.moved == {"shared/Hub.md": [("shared/Runbook.md", "link")]}
    assert view.arrived == {"shared/Runbook.md": [("shared/Hub.md", "link")]}
    graph = LinkGraph(EDGES)

    def visible(p: str) -> bool:
        return p != "private/bob/Deploy.md"

    assert graph.expand("shared/Hub.md", "links_out", 1, visible, 5, view) == [("shared/Runbook.md", 1)]
    assert graph.expand("shared/Runbook.md", "links_in", 1, visible, 5, view) == [("shared/Hub.md", 1)]
    # without the reader's view the hidden winner is skipped and nothing takes its place
    assert graph.expand("shared/Hub.md", "links_out", 1, visible, 5) == []
