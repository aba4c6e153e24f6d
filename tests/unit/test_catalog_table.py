"""Table tests of the pure stages of index/catalog.py: `diff_stats` and `pair_moves`.

diff_stats: a file must be read when it is new or its size or mtime differs from the
stored row, or when its mtime is not safely before the last scan (`trusted_before`: git's
"racy clean" rule, a same-size edit in the same tick keeps both); a row whose file is gone
is deleted; the rest are unchanged (no file opened, the stored hash is not consulted). pair_moves: a deleted and an added file are one move
when they share a real (not path-derived) id — the file moved and maybe changed — or else
when their content hashes are identical; each file takes part in at most one move.
"""

from __future__ import annotations

import pytest

from vaultmem.index.catalog import diff_stats, pair_moves
from vaultmem.vault.layout import FileEntry

Row = tuple[int, int, str, str]  # size, mtime_ns, hash, status


def e(path: str, size: int = 10, mtime: int = 1000) -> FileEntry:
    return FileEntry(path, size, mtime)


def row(size: int = 10, mtime: int = 1000, chash: str = "h") -> Row:
    return (size, mtime, chash, "note")


# (walked entries, stored rows) -> (changed paths, deleted paths, unchanged count)
DIFF_CASES = [
    pytest.param([], {}, [], [], 0, id="empty-vault-empty-db"),
    pytest.param([e("a.md")], {}, ["a.md"], [], 0, id="new-file-is-read"),
    pytest.param([e("a.md")], {"a.md": row()}, [], [], 1, id="same-size-and-mtime-unchanged"),
    pytest.param([e("a.md", size=11)], {"a.md": row()}, ["a.md"], [], 0, id="size-differs"),
    pytest.param([e("a.md", mtime=1001)], {"a.md": row()}, ["a.md"], [], 0, id="mtime-differs"),
    pytest.param([e("a.md", size=11, mtime=999)], {"a.md": row()}, ["a.md"], [], 0, id="size-and-mtime-differ"),
    pytest.param([e("a.md")], {"a.md": row(chash="other")}, [], [], 1, id="stored-hash-not-consulted-when-stat-same"),
    pytest.param([e("a.md")], {"a.md": (-1, -1, "h", "note")}, ["a.md"], [], 0, id="forced-recheck-row-is-read"),
    pytest.param([], {"gone.md": row()}, [], ["gone.md"], 0, id="deleted-file"),
    pytest.param([], {"b.md": row(), "a.md": row()}, [], ["a.md", "b.md"], 0, id="every-deleted-file"),
    pytest.param(
        [e("new.md"), e("same.md"), e("edit.md", size=99)],
        {"same.md": row(), "edit.md": row(), "gone.md": row()},
        ["new.md", "edit.md"],
        ["gone.md"],
        1,
        id="new-changed-unchanged-and-deleted-together",
    ),
    pytest.param([e("A.md"), e("a.md")], {"a.md": row()}, ["A.md"], [], 1, id="paths-compare-case-sensitively"),
    pytest.param([e("x/a.md")], {"a.md": row()}, ["x/a.md"], ["a.md"], 0, id="moved-file-is-new-plus-deleted"),
]


# (walked entry, stored row, trusted_before) -> read again?
RACY_CASES = [
    pytest.param(e("a.md", mtime=1000), row(mtime=1000), None, False, id="no-bar-trusts-the-stat"),
    pytest.param(e("a.md", mtime=1000), row(mtime=1000), 1001, False, id="older-than-the-bar-trusted"),
    pytest.param(e("a.md", mtime=1000), row(mtime=1000), 1000, True, id="at-the-bar-read-again"),
    pytest.param(e("a.md", mtime=1000), row(mtime=1000), 999, True, id="after-the-bar-read-again"),
    pytest.param(e("a.md", mtime=1000), row(mtime=1000), -(2**63), True, id="no-scan-recorded-read-again"),
    pytest.param(e("a.md", size=11, mtime=1000), row(mtime=1000), 5000, True, id="size-differs-read-anyway"),
]


@pytest.mark.parametrize(("entry", "known", "bar", "read"), RACY_CASES)
def test_diff_stats_racy_clean(entry: FileEntry, known: Row, bar: int | None, read: bool) -> None:
    diff = diff_stats(iter([entry]), {"a.md": known}, trusted_before=bar)
    assert ([c.relpath for c in diff.changed] == ["a.md"]) is read
    assert diff.unchanged == (0 if read else 1)


@pytest.mark.parametrize(("entries", "known", "changed", "deleted", "unchanged"), DIFF_CASES)
def test_diff_stats(
    entries: list[FileEntry], known: dict[str, Row], changed: list[str], deleted: list[str], unchanged: int
) -> None:
    diff = diff_stats(iter(entries), known)  # a one-pass iterable, as the stat walk is
    assert [c.relpath for c in diff.changed] == changed  # in walk order
    assert sorted(diff.deleted) == deleted
    assert diff.unchanged == unchanged
    by_path = {x.relpath: x for x in entries}
    assert all(c is by_path[c.relpath] for c in diff.changed)  # the walked entries themselves


Side = dict[str, tuple[str | None, bool, str]]  # path -> (id, id_derived, content hash)
REAL, DERIVED = False, True

# (added, deleted) -> (old, new) pairs
MOVE_CASES = [
    pytest.param({}, {}, [], id="nothing-added-or-deleted"),
    pytest.param({"new.md": ("01A", REAL, "h")}, {}, [], id="new-file-only"),
    pytest.param({}, {"old.md": ("01A", REAL, "h")}, [], id="deleted-file-only"),
    pytest.param(
        {"new.md": ("01A", REAL, "h2")}, {"old.md": ("01A", REAL, "h1")}, [("old.md", "new.md")], id="by-id-edited"
    ),
    pytest.param(
        {"new.md": ("01A", REAL, "h")}, {"old.md": ("01A", REAL, "h")}, [("old.md", "new.md")], id="by-id-and-content"
    ),
    pytest.param(
        {"new.md": ("d2", DERIVED, "h")},
        {"old.md": ("d1", DERIVED, "h")},
        [("old.md", "new.md")],
        id="by-identical-content-derived-ids",
    ),
    pytest.param(
        {"new.md": (None, DERIVED, "h")},
        {"old.md": (None, DERIVED, "h")},
        [("old.md", "new.md")],
        id="by-content-no-id",
    ),
    pytest.param(
        {"new.md": ("dX", DERIVED, "h2")}, {"old.md": ("dX", DERIVED, "h1")}, [], id="same-derived-id-is-not-a-match"
    ),
    pytest.param(
        {"new.md": ("01B", REAL, "h2")}, {"old.md": ("01A", REAL, "h1")}, [], id="different-id-different-content"
    ),
    pytest.param(
        {"new.md": ("01A", REAL, "h2")},
        {"a.md": ("01A", REAL, "h1"), "b.md": (None, DERIVED, "h2")},
        [("a.md", "new.md")],
        id="real-id-wins-over-content-of-another-file",
    ),
    pytest.param(
        {"x.md": ("01A", REAL, "hx"), "y.md": ("01B", REAL, "hy")},
        {"a.md": ("01B", REAL, "h1"), "b.md": ("01A", REAL, "h2")},
        [("b.md", "x.md"), ("a.md", "y.md")],
        id="two-moves-by-id-crossed-names",
    ),
    pytest.param(
        {"x.md": ("dx", DERIVED, "h1"), "y.md": ("dy", DERIVED, "h2")},
        {"a.md": ("da", DERIVED, "h2"), "b.md": ("db", DERIVED, "h1")},
        [("b.md", "x.md"), ("a.md", "y.md")],
        id="two-moves-by-content-crossed-names",
    ),
    pytest.param(
        {"x.md": ("01A", REAL, "h2"), "y.md": ("01A", REAL, "h3")},
        {"a.md": ("01A", REAL, "h1")},
        "one-of:a.md",
        id="two-files-claim-one-id-one-move",
    ),
    pytest.param(
        {"x.md": (None, DERIVED, "h"), "y.md": (None, DERIVED, "h")},
        {"a.md": (None, DERIVED, "h")},
        "one-of:a.md",
        id="two-copies-of-one-deleted-file-one-move",
    ),
    pytest.param(
        {"x.md": (None, DERIVED, "h"), "y.md": (None, DERIVED, "h")},
        {"a.md": (None, DERIVED, "h"), "b.md": (None, DERIVED, "h")},
        "bijection",
        id="identical-content-pairs-each-file-once",
    ),
    pytest.param(
        {"new.md": ("01B", REAL, "h2"), "keep.md": (None, DERIVED, "h9")},
        {"old.md": ("01B", REAL, "h1"), "gone.md": (None, DERIVED, "h8")},
        [("old.md", "new.md")],
        id="a-real-add-and-delete-stay-unpaired",
    ),
]


@pytest.mark.parametrize(("added", "deleted", "expected"), MOVE_CASES)
def test_pair_moves(added: Side, deleted: Side, expected: list[tuple[str, str]] | str) -> None:
    pairs = pair_moves(added, deleted)
    olds = [old for old, _ in pairs]
    news = [new for _, new in pairs]
    assert len(set(olds)) == len(olds) and len(set(news)) == len(news)  # each file in one move at most
    assert all(old in deleted and new in added for old, new in pairs)
    if expected == "bijection":
        assert sorted(olds) == sorted(deleted) and sorted(news) == sorted(added)
    elif isinstance(expected, str):
        # which of several equal candidates moved is not part of the rule
        assert olds == [expected.removeprefix("one-of:")] and len(news) == 1
    else:
        assert sorted(pairs) == sorted(expected)
