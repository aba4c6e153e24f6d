"""Folders decide scope and access (SPEC §1, §3); body edits; per-note schema checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultmem.config import VaultConfig
from vaultmem.vault.layout import Location, can_read, classify, is_note_path, walk_notes
from vaultmem.vault.note import ParsedNote, parse_note
from vaultmem.vault.schema import check_note
from vaultmem.vault.writer import append_text, normalize_body, replace_section

# --- scope from folder --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relpath", "location"),
    [
        ("shared/a.md", Location("shared")),
        ("shared/deep/er/a.md", Location("shared")),
        ("README.md", Location("shared")),
        ("reference/topic.md", Location("shared")),
        ("Some Obsidian Folder/x.md", Location("shared")),
        ("private/alice/a.md", Location("private", owner="alice")),
        ("private/alice/sub/a.md", Location("private", owner="alice")),
        ("diary/bob/2026-01-01.md", Location("diary", owner="bob")),
        ("inbox/alice/c.md", Location("inbox", owner="alice")),
        ("inbox/shared/c.md", Location("inbox")),
        ("project/p1/a.md", Location("project", project="p1")),
        ("private/loose.md", Location("private", placed=False)),
        ("project/loose.md", Location("project", placed=False)),
        ("inbox/loose.md", Location("inbox", placed=False)),
        # A case-insensitive disk's `Private/` is `private/` (macOS, Windows): matched so
        ("Private/alice/a.md", Location("private", owner="alice")),
        ("PRIVATE/Alice/a.md", Location("private", owner="alice")),
        ("Diary/BOB/2026-01-01.md", Location("diary", owner="bob")),
        ("Inbox/Shared/c.md", Location("inbox")),
        ("INBOX/alice/c.md", Location("inbox", owner="alice")),
        ("Project/Atlas/a.md", Location("project", project="Atlas")),
        ("Shared/a.md", Location("shared")),
        ("Private/loose.md", Location("private", placed=False)),
        # ASCII only: KELVIN SIGN folds to "k" in Unicode, and no ghost's name holds it
        ("private/\u212alara/a.md", Location("private", owner="\u212alara")),
        ("pr\u0131vate/alice/a.md", Location("shared")),
        # a note in the trash keeps the place it was deleted from (git's history of a
        # trash path read bob's deleted private note as a shared one)
        (".trash/20261129T105423946342Z/private/bob/a.md", Location("private", owner="bob")),
        (".trash/20261129T105423Z/project/p1/a.md", Location("project", project="p1")),
        (".trash/20261129T105423Z/shared/a.md", Location("shared")),
        (".Trash/20261129T105423Z/Private/Bob/a.md", Location("private", owner="bob")),
        # Obsidian's own delete keeps a name only (a deleted folder's too): anyone's, so nobody's
        (".trash/a.md", Location("shared", placed=False)),
        (".trash/bob/a.md", Location("shared", placed=False)),
        (".trash/private/bob/a.md", Location("shared", placed=False)),
        (".trash/20261129t105423z/private/bob/a.md", Location("shared", placed=False)),
        (".trash/20261129T105423Z/20261129t105423z/private/bob/a.md", Location("shared", placed=False)),
        (".vaultmem/trash/bob/a.md", Location("shared", placed=False)),
        (".vaultmem/trash/20261129T105423Z/diary/bob/a.md", Location("diary", owner="bob")),
        (".trash/20261129T105423Z/private/a.md", Location("private", placed=False)),
        ("shared/.trash/20261129T105423Z/private/bob/a.md", Location("shared")),
    ],
)
def test_classify(relpath: str, location: Location) -> None:
    assert classify(relpath) == location


CONFIG = VaultConfig(ghosts=("alice", "bob"), projects={"open": None, "closed": ("alice",)})


@pytest.mark.parametrize(
    ("relpath", "readers"),
    [
        ("shared/a.md", {None, "alice", "bob"}),
        ("README.md", {None, "alice", "bob"}),
        ("inbox/shared/a.md", {None, "alice", "bob"}),
        ("private/alice/a.md", {"alice"}),
        ("diary/alice/a.md", {"alice"}),
        ("inbox/alice/a.md", {"alice"}),
        ("private/bob/a.md", {"bob"}),
        ("project/open/a.md", {"alice", "bob"}),
        ("project/unlisted/a.md", {"alice", "bob"}),
        ("project/closed/a.md", {"alice"}),
        ("private/loose.md", set()),
        ("Private/alice/a.md", {"alice"}),
        ("PRIVATE/BOB/a.md", {"bob"}),
        ("project/Closed/a.md", {"alice"}),
        ("Project/CLOSED/a.md", {"alice"}),
    ],
)
def test_access_rules(relpath: str, readers: set[str | None]) -> None:
    assert {g for g in (None, "alice", "bob") if can_read(classify(relpath), g, CONFIG)} == readers


@pytest.mark.parametrize(
    ("projects", "readers"),
    [
        ({"Atlas": ("alice",)}, {"alice"}),
        ({"atlas": None, "ATLAS": ("bob",)}, {"bob"}),  # one closed entry closes the folder
        ({"atlas": ("alice", "bob"), "Atlas": ("bob",)}, {"bob"}),  # only whom both list
        ({"atlas": None}, {"alice", "bob"}),
        ({"other": ("alice",)}, {"alice", "bob"}),
        ({"\u0041tlas": ("alice",)}, {"alice"}),
        ({"\u0430tlas": ("alice",)}, {"alice", "bob"}),  # CYRILLIC a: another name on every disk
    ],
)
def test_project_entries_are_matched_without_case(
    projects: dict[str, tuple[str, ...] | None], readers: set[str]
) -> None:
    config = VaultConfig(ghosts=("alice", "bob"), projects=projects)
    for folder in ("project/atlas/a.md", "project/Atlas/a.md", "PROJECT/ATLAS/a.md"):
        assert {g for g in ("alice", "bob") if can_read(classify(folder), g, config)} == readers, folder


@pytest.mark.parametrize(
    ("relpath", "is_note"),
    [
        ("shared/a.md", True),
        ("a.md", True),
        ("shared/a.txt", False),
        ("shared/.a.md", False),
        ("shared/a.md~", False),
        ("shared/a.md.swp", False),
        ("shared/.#a.md", False),
        ("shared/4913", False),
        ("shared/a.md.tmp", False),
        (".vaultmem/trash/x/a.md", False),
        (".git/a.md", False),
        (".obsidian/a.md", False),
        (".trash/a.md", False),
        ("shared/.hidden/a.md", False),
    ],
)
def test_is_note_path(relpath: str, is_note: bool) -> None:
    assert is_note_path(relpath) is is_note


def test_walk_notes_skips_ignored_and_flags_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "v"
    for rel in [
        "shared/a.md",
        "private/alice/b.md",
        ".vaultmem/trash/t/c.md",
        ".obsidian/d.md",
        "shared/.e.md",
        "shared/f.md~",
        "g.txt",
    ]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    (tmp_path / "out").mkdir()
    (tmp_path / "out/o.md").write_text("o")
    (root / "shared/in-link.md").symlink_to(root / "shared/a.md")
    (root / "shared/out-link.md").symlink_to(tmp_path / "out/o.md")
    (root / "shared/dir-link").symlink_to(tmp_path / "out")
    (root / "shared/broken.md").symlink_to(tmp_path / "missing.md")
    (root / "shared/gone.md").symlink_to(root / "shared/missing.md")
    found = {e.relpath: e for e in walk_notes(root)}
    assert set(found) == {
        "shared/a.md",
        "private/alice/b.md",
        "shared/in-link.md",
        "shared/out-link.md",
        "shared/broken.md",
        "shared/gone.md",
    }
    assert found["shared/out-link.md"].symlink and not found["shared/a.md"].symlink
    assert found["shared/gone.md"].size == -1  # inside the vault, nothing there
    # never followed (it leaves the vault): the link's own stat, whatever is at its end
    assert found["shared/broken.md"].size == len(str(tmp_path / "missing.md"))
    assert found["shared/in-link.md"].size == 1  # followed: the size of what it points at


def test_walk_notes_never_follows_a_symlink_into_other_readers_notes(tmp_path: Path) -> None:
    """`shared/peek.md -> private/alice/x.md` is refused by the indexer; its stat must not
    follow alice's note either, or `status` would count her edits as a change (SPEC §3)."""
    root = tmp_path / "v"
    (root / "private/alice").mkdir(parents=True)
    (root / "shared").mkdir()
    secret = root / "private/alice/x.md"
    secret.write_text("zebracorn")
    (root / "shared/peek.md").symlink_to("../private/alice/x.md")
    before = {e.relpath: (e.size, e.mtime_ns) for e in walk_notes(root)}
    secret.write_text("zebracorn launch code 4471, changed by alice")
    os.utime(secret, ns=(before["private/alice/x.md"][1] + 10**9,) * 2)
    after = {e.relpath: (e.size, e.mtime_ns) for e in walk_notes(root)}
    assert after["private/alice/x.md"] != before["private/alice/x.md"]
    assert after["shared/peek.md"] == before["shared/peek.md"]


# --- body edits -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "heading", "content", "expected", "found"),
    [
        ("# A\nx\n## B\ny\n# C\nz\n", "B", "new", "# A\nx\n## B\n\nnew\n\n# C\nz\n", True),
        ("# A\nx\n## B\ny\n### B2\nq\n# C\nz\n", "## B", "new", "# A\nx\n## B\n\nnew\n\n# C\nz\n", True),
        ("intro\n## Notes\nold\n\n## Next\nk\n", "notes", "n1\nn2", "intro\n## Notes\n\nn1\nn2\n\n## Next\nk\n", True),
        ("```\n# B\n```\n# B\nold\n", "B", "new", "```\n# B\n```\n# B\n\nnew\n", True),
        ("# A\nx\n", "Missing", "new", "# A\nx\n\n## Missing\n\nnew\n", False),
        ("", "Missing", "new", "## Missing\n\nnew\n", False),
        ("# A\r\nx\r\n", "A", "y\r\n", "# A\n\ny\n", True),
    ],
)
def test_replace_section(body: str, heading: str, content: str, expected: str, found: bool) -> None:
    assert replace_section(body, heading, content) == (expected, found)


@pytest.mark.parametrize(
    ("body", "text", "expected"),
    [("a\n", "b", "a\n\nb\n"), ("a\n\n\n", "b\n", "a\n\nb\n"), ("", "b", "b\n"), ("a", "\n\nb\n\n", "a\n\nb\n")],
)
def test_append_text(body: str, text: str, expected: str) -> None:
    assert append_text(body, text) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [("x", "x\n"), ("x\n\n\n", "x\n"), ("a\r\nb\r\n", "a\nb\n"), ("a\rb", "a\nb\n"), ("", ""), ("\n\n", "")],
)
def test_normalize_body(body: str, expected: str) -> None:
    assert normalize_body(body) == expected


# --- per-note checks --------------------------------------------------------------------------


def _note(relpath: str, fm: str, body: str = "body\n") -> ParsedNote:
    parsed = parse_note(relpath, f"---\n{fm}---\n{body}".encode())
    assert isinstance(parsed, ParsedNote)
    return parsed


@pytest.mark.parametrize(
    ("relpath", "fm", "codes"),
    [
        ("shared/a.md", "id: X\n", []),
        ("shared/a.md", "title: no id\n", [("warning", "missing_id")]),
        ("shared/a.md", "id: X\nscope: private\n", [("error", "scope_mismatch")]),
        ("private/alice/a.md", "id: X\nscope: private\nowner: bob\n", [("error", "owner_mismatch")]),
        ("project/p/a.md", "id: X\nproject: q\n", [("error", "project_mismatch")]),
        ("shared/a.md", "id: X\ntype: bogus\n", [("error", "unknown_type")]),
        ("shared/a.md", "id: X\ntrust_score: 1.5\n", [("error", "out_of_range")]),
        ("shared/a.md", "id: X\nconfidence: -0.1\n", [("error", "out_of_range")]),
        ("shared/a.md", "id: X\nimportance: high\n", [("error", "out_of_range")]),
        ("shared/a.md", "id: X\ntrust_score: .nan\n", [("error", "out_of_range")]),
        ("shared/a.md", "id: X\nversion: -1\n", [("error", "bad_version")]),
        ("shared/a.md", "id: X\ncreated: yesterday\n", [("warning", "bad_date")]),
        ("shared/a.md", "id: X\nhash: sha256:0000\n", []),  # edited by hand: a new version, not a problem
        ("private/a.md", "id: X\n", [("error", "misplaced")]),
    ],
)
def test_check_note(relpath: str, fm: str, codes: list[tuple[str, str]]) -> None:
    problems = check_note(_note(relpath, fm), VaultConfig())
    assert [(p.severity, p.code) for p in problems] == codes
    assert all(p.path == relpath and p.message for p in problems)


@pytest.mark.parametrize(
    ("link", "target", "refusal"),
    [
        ("shared/ok.md", "shared/sub/real.md", None),
        ("top.md", "shared/real.md", None),
        ("private/alice/ok.md", "private/alice/deep/real.md", None),
        ("shared/peek.md", "private/alice/real.md", "symlink_crosses_scope"),
        ("private/bob/peek.md", "private/alice/real.md", "symlink_crosses_scope"),
        ("project/p/peek.md", "project/q/real.md", "symlink_crosses_scope"),
        ("shared/trash.md", ".vaultmem/trash/t/private/alice/real.md", "symlink_crosses_scope"),
        ("shared/out.md", "../outside.md", "symlink_outside"),
    ],
)
def test_symlink_refusal(tmp_path: Path, link: str, target: str, refusal: str | None) -> None:
    from vaultmem.vault.layout import symlink_refusal

    root = tmp_path / "v"
    real = (root / target).resolve() if not target.startswith("..") else tmp_path / "outside.md"
    real.parent.mkdir(parents=True, exist_ok=True)
    real.write_text("x")
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    (root / link).symlink_to(real)
    result = symlink_refusal(root, link)
    assert (result[0] if result else None) == refusal


@pytest.mark.parametrize(
    ("entry", "folder"),
    [
        ("\u00e4rzte", "project/\u00c4RZTE/a.md"),  # NTFS and APFS fold Unicode case
        ("caf\u00e9", "project/cafe\u0301/a.md"),  # APFS: NFD is the same name
        ("kiwi", "project/\u212aiwi/a.md"),  # KELVIN SIGN: `k` on APFS
        ("kiwi", "project/ki\u200bwi/a.md"),  # HFS+ ignored zero-width marks
        ("clinic", "project/cl\u0131n\u0131c/a.md"),  # DOTLESS I: NTFS's upcase table makes it I
    ],
)
def test_a_closed_project_stays_closed_however_a_disk_spells_it(entry: str, folder: str) -> None:
    config = VaultConfig(ghosts=("alice", "bob"), projects={entry: ("alice",)})
    assert {g for g in ("alice", "bob") if can_read(classify(folder), g, config)} == {"alice"}
