"""Resolver.update and `visible` (index/resolve.py): a Resolver changed in place answers as
one built over the entries now, and one Resolver seen through a reader's `visible` answers
as one built over only the entries that reader sees. Pure."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from vaultmem.index.resolve import NameEntry, Resolver

# Paths differing only in case or Unicode normal form (`Café` as é or e + U+0301) collide (one
# note wins them), and can differ in who sees them.
FOLDERS = ["shared", "shared/a", "shared/A", "private/alice", "private/bob", "Private/bob", "PRIVATE/bob", "project/p1"]
STEMS = ["wheel", "Wheel", "hub", "plan", "notes", "Caf\u00e9", "Cafe\u0301"]
TITLES = ["Wheel", "Hub", "Secret plan", "Axle", "wheel", "CAF\u00c9", "cafe\u0301"]
IDS = ["W1", "w1", "H2", "Dup", "dup"]


def _targets() -> list[str]:
    out = [*STEMS, *TITLES, *IDS, "", "nowhere", "../wheel.md", "wheel.md", "a/wheel", "A/Wheel"]
    out += [f"{folder}/{stem}" for folder in FOLDERS for stem in STEMS[:3]]
    return out


TARGETS = _targets()


def _answers(
    resolver: Resolver, sources: Sequence[str | None], visible: Callable[[str], bool] | None = None
) -> dict[tuple[str, str | None, bool], str | None]:
    return {
        (t, s, rel): resolver.resolve(t, s, relative=rel, visible=visible)
        for t in TARGETS
        for s in sources
        for rel in (False, True)
    }


def resolver_tables(resolver: Resolver) -> dict[str, Any]:
    """The tables: ids and paths with their holders in order (which wins depends on it),
    the candidate lists as sets."""
    return {
        "id": (resolver.by_id, resolver.shared_ids),
        "path": (resolver.by_path, resolver.shared_paths),
        **{
            name: {k: sorted(v) for k, v in table.items()}
            for name, table in (
                ("suffix", resolver.by_suffix),
                ("stem", resolver.by_stem),
                ("title", resolver.by_title),
                ("alias", resolver.by_alias),
            )
        },
    }


def _entry(rng: random.Random, path: str) -> NameEntry:
    note_id = rng.choice([*IDS, path, f"id-{rng.randrange(1000)}"])
    aliases = tuple(rng.sample(TITLES, rng.randrange(3)))
    return NameEntry(path, note_id, rng.choice(TITLES), aliases)


@pytest.mark.parametrize("seed", range(8))
def test_updated_in_place_answers_as_built_anew_for_every_reader(seed: int) -> None:
    rng = random.Random(seed)
    # db.names() order: a new path comes last; a changed one keeps its place
    entries: dict[str, NameEntry] = {}
    for _ in range(8):
        path = f"{rng.choice(FOLDERS)}/{rng.choice(STEMS)}{rng.randrange(3)}.md"
        entries[path] = _entry(rng, path)
    resolver = Resolver(entries.values())
    updated = rebuilt = 0
    for step in range(40):
        # as catch_up gives them: the names before and after of every path a change touched
        was = dict(entries)
        touched: set[str] = set()
        for _ in range(rng.randrange(1, 3)):
            op = rng.randrange(3)
            if op == 0 or not entries:
                path = f"{rng.choice(FOLDERS)}/{rng.choice(STEMS)}{rng.randrange(4)}.md"
                entries.setdefault(path, _entry(rng, path))
            elif op == 1:
                path = rng.choice(list(entries))
                del entries[path]
            else:
                path = rng.choice(list(entries))
                entries[path] = _entry(rng, path) if rng.random() < 0.7 else entries[path]
            touched.add(path)
        gone = [was[p] for p in touched if p in was]
        came = [entries[p] for p in touched if p in entries]
        before = resolver_tables(resolver)
        if resolver.update(gone, came):
            updated += 1
        else:
            assert resolver_tables(resolver) == before, f"step {step}: a refused update changed nothing"
            resolver = Resolver(entries.values())
            rebuilt += 1
        fresh = Resolver(entries.values())
        assert resolver_tables(resolver) == resolver_tables(fresh), f"step {step}"
        sources: list[str | None] = [None, *list(entries)[:4], "shared/a/other.md"]
        assert _answers(resolver, sources) == _answers(fresh, sources), f"step {step}"
        for hidden in ("private/bob/", "private/alice/", "project/"):

            def visible(path: str, hidden: str = hidden) -> bool:
                return not path.startswith(hidden)

            alone = Resolver(e for e in entries.values() if visible(e.path))
            assert _answers(resolver, sources, visible) == _answers(alone, sources), f"step {step} without {hidden}"
    assert updated and rebuilt  # both ways were taken


def test_update_refuses_where_order_decides() -> None:
    a = NameEntry("shared/a.md", "X", "A")
    b = NameEntry("shared/b.md", "x", "B")  # its id meets a's lowered id: the first one wins
    resolver = Resolver([a])
    assert not resolver.update([], [b])
    assert resolver.resolve("x") == "shared/a.md"
    both = Resolver([a, b])
    assert not both.update([a], [])  # who wins "x" after a goes depends on what else holds it
    c = NameEntry("shared/c.md", "C", "Wheel")
    assert resolver.update([], [c]) and resolver.resolve("Wheel") == "shared/c.md"
    assert resolver.update([c], []) and resolver.resolve("Wheel") is None and "C" not in resolver.by_id
    assert both.shared_ids == {"x": ["shared/a.md", "shared/b.md"]}
    assert both.resolve("x", visible=lambda p: p != "shared/a.md") == "shared/b.md"  # the first one bob sees
    assert resolver.update([a], [NameEntry("shared/a.md", "Y", "A")])  # a note's own id changes
    assert resolver.resolve("X") is None and resolver.resolve("y") == "shared/a.md"


def test_a_reader_gets_the_last_path_they_see() -> None:
    holders = ["Private/bob/w.md", "PRIVATE/bob/w.md", "private/bob/w.md"]  # one path, in any case
    resolver = Resolver(NameEntry(p, p, "W") for p in holders)
    assert resolver.resolve("private/bob/w") == "private/bob/w.md"  # the last one wins

    def visible(path: str) -> bool:
        return not path.startswith("private/bob/")  # only bob sees his folder; the others are shared

    assert resolver.resolve("private/bob/w", visible=visible) == "PRIVATE/bob/w.md"
    assert resolver.resolve("PRIVATE/BOB/W.md", visible=visible) == Resolver(
        NameEntry(p, p, "W") for p in holders if visible(p)
    ).resolve("PRIVATE/BOB/W.md")
