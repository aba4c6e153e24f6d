"""Properties Obsidian understands (issue 26, item 4), through the CLI: a person's property
edits in Obsidian's format survive every vaultmem write byte for byte, the times vaultmem
writes are Obsidian's Date & time form and sort as dates, comments are a List property, and
an older vault (`Z` times, nested comments) still reads, searches, lints and is fixed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli._util import front_matter
from tests.conftest import Cli
from vaultmem.vault.comments import read as comments_of
from vaultmem.vault.dates import parse_iso
from vaultmem.vault.frontmatter import split_document

# Obsidian Help, "Editing and formatting/Properties.md": Date & time is `2020-08-21T10:30:00`.
OBSIDIAN_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")

# What a person adds in Obsidian's Properties view, as Obsidian writes it: a Date & time, a
# Date, a List (of links and text), a Text that looks like a date, a Number, a Checkbox.
OBSIDIAN_LINES = [
    "meeting: 2026-11-24T10:30:00",
    "due: 2026-12-01",
    "related:",
    '  - "[[Burgundy wine]]"',
    "  - plain item",
    'label: "2026-11-24"',
    "rating: 4.5",
    "done: true",
]
OBSIDIAN_KEYS = ["meeting", "due", "related", "label", "rating", "done"]


def _fm_lines(path: Path) -> list[str]:
    return (split_document(path.read_text(encoding="utf-8")).fm_text or "").splitlines()


def _person_edits(path: Path) -> None:
    """Save the note as Obsidian would after the person set the properties above."""
    text = path.read_text(encoding="utf-8")
    split = split_document(text)
    assert split.fm_text is not None
    new_fm = split.fm_text + "\n".join(OBSIDIAN_LINES) + "\n"
    path.write_text(f"---\n{new_fm}---\n{split.body}", encoding="utf-8")


def test_a_persons_properties_survive_every_vaultmem_write(vault: Path, cli: Cli) -> None:
    made = cli.ok("note", "create", "--title", "Cellar", "--type", "note", "--scope", "shared", "--body", "Reds.")
    path = vault / made["path"]
    _person_edits(path)
    writes = [
        ("note", "update", made["id"], "--append", "Buy more."),
        ("note", "comment", made["id"], "--text", "Checked: 2 cases, 'quoted' #not-a-tag\nsecond line"),
        ("note", "validate", made["id"], "--by", "alice/gpt-x"),
        ("note", "update", made["id"], "--add-tag", "wine"),
        # a replace of a field, on a note holding a person's properties: with the version read
        ("note", "update", made["id"], "--set", "trust_score=0.7", "--expect-version", "{read}"),
        ("note", "comment", made["id"], "--text", "again"),
    ]
    for argv in writes:
        read = str(cli.ok("get", made["id"], ghost="alice")["note"]["version"])
        cli.ok(*(a.format(read=read) if a == "{read}" else a for a in argv), ghost="alice")
        lines = _fm_lines(path)
        start = lines.index(OBSIDIAN_LINES[0])
        assert lines[start : start + len(OBSIDIAN_LINES)] == OBSIDIAN_LINES, argv
    doc = cli.ok("get", made["id"], ghost="alice")
    note = doc["note"]
    assert (note["meeting"], note["due"], note["label"]) == ("2026-11-24T10:30:00", "2026-12-01", "2026-11-24")
    assert (note["related"], note["rating"], note["done"]) == (["[[Burgundy wine]]", "plain item"], 4.5, True)
    # comments: the same JSON shape for agents; in the file, a List property of texts
    assert [(c["by"], c["model"], c["text"]) for c in doc["comments"]] == [
        ("alice", None, "Checked: 2 cases, 'quoted' #not-a-tag\nsecond line"),
        ("alice", None, "again"),
    ]
    fm = front_matter(path)
    assert all(isinstance(item, str) for item in fm["comments"])
    # every time vaultmem wrote is Obsidian's Date & time form
    times = [fm["created"], fm["updated"], fm["last_validated_at"], *(c["at"] for c in doc["comments"])]
    assert all(OBSIDIAN_DATETIME.match(t) for t in times), times


def test_times_vaultmem_writes_sort_as_dates(vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultmem import clock
    from vaultmem.vault import ids as ulids

    # ids made at the fixed times below must not leave the process's ULID clock in the
    # future for later tests (monkeypatch puts the last issued id back afterwards)
    monkeypatch.setattr(ulids, "_last", (0, 0))

    ids = []
    for n, seconds in enumerate([1_800_000_000, 1_700_000_000, 1_790_000_000]):
        clock.fix(seconds)
        try:
            ids.append(cli.ok("note", "create", "--title", f"N{n}", "--type", "note", "--scope", "shared")["id"])
        finally:
            clock.fix(None)
    created = [cli.ok("get", i)["note"]["created"] for i in ids]
    assert all(OBSIDIAN_DATETIME.match(c) for c in created)
    # Obsidian sorts by the text; the text order is the time order
    assert sorted(created) == sorted(created, key=lambda c: parse_iso(c))  # type: ignore[arg-type, return-value]
    listed = cli.ok("list", "--sort", "created", "--scope", "shared")["notes"]
    order = [n["id"] for n in listed if n["id"] in ids]
    assert order == [ids[0], ids[2], ids[1]]


OLD_NOTE = """---
id: 01JG0OLDOLDOLDOLDOLDOLDOLD
title: Old cellar
type: note
scope: shared
created: 2026-01-10T09:00:00Z
updated: 2026-01-11T09:00:00Z
version: 1
comments:
  - at: '2026-01-11T09:00:00Z'
    by: alice
    model: gpt-x
    text: 'Old: nested'
  - at: '2026-01-12T09:00:00+02:00'
    by: bob
    model: null
    text: |-
      two
      lines
---
Old notes about Chablis.
"""


@pytest.fixture
def old_vault(vault: Path) -> Path:
    (vault / "shared" / "Old cellar.md").write_text(OLD_NOTE, encoding="utf-8")
    return vault


def test_an_older_vault_reads_searches_lints_and_is_fixed(old_vault: Path, cli: Cli) -> None:
    path = old_vault / "shared" / "Old cellar.md"
    doc = cli.ok("get", "Old cellar")
    assert doc["note"]["created"] == "2026-01-10T09:00:00Z"  # as the file says
    assert doc["comments"] == [
        {"at": "2026-01-11T09:00:00Z", "by": "alice", "model": "gpt-x", "text": "Old: nested"},
        {"at": "2026-01-12T09:00:00+02:00", "by": "bob", "model": None, "text": "two\nlines"},
    ]
    hits = cli.ok("search", "Chablis", "--mode", "bm25")["results"]
    assert any(r["summary"]["title"] == "Old cellar" for r in hits)
    assert cli.ok("query", "Chablis", "--since", "2026-01-10T09:00:00")["matches"]
    assert not cli.ok("query", "Chablis", "--since", "2026-01-10T09:00:01")["matches"]
    report = cli.ok("lint")
    codes = sorted(p["code"] for p in report["problems"] if p["path"] == "shared/Old cellar.md")
    assert codes == ["nested_comments", "zoned_date"]
    before = path.read_text(encoding="utf-8")
    fixed = cli.ok("lint", "--fix")
    assert {"path": "shared/Old cellar.md", "comments": "2 as a list of texts"} in fixed["fixed"]
    assert {"path": "shared/Old cellar.md", "dates": "created, updated"} in fixed["fixed"]
    assert not [p for p in fixed["problems"] if p["path"] == "shared/Old cellar.md"]
    after = path.read_text(encoding="utf-8")
    # only the comments and the dates' form changed, and they say the same
    expected = before.replace("2026-01-10T09:00:00Z", "2026-01-10T09:00:00").replace(
        "2026-01-11T09:00:00Z\nversion", "2026-01-11T09:00:00\nversion"
    )
    assert after.replace(after[after.index("comments:") : after.index("---\nOld")], "") == expected.replace(
        expected[expected.index("comments:") : expected.index("---\nOld")], ""
    )
    assert front_matter(path)["comments"] == [
        "2026-01-11T09:00:00 alice/gpt-x: Old: nested",
        "2026-01-12T07:00:00 bob: two\nlines",
    ]
    assert [c.key() for c in comments_of(front_matter(path)["comments"])] == [
        c.key() for c in comments_of([{"at": "2026-01-11T09:00:00Z", "by": "alice", "text": "Old: nested"},
                                      {"at": "2026-01-12T09:00:00+02:00", "by": "bob", "text": "two\nlines"}])
    ]  # fmt: skip
    again = cli.ok("get", "Old cellar")["comments"]
    assert [(c["by"], c["text"]) for c in again] == [("alice", "Old: nested"), ("bob", "two\nlines")]


def test_a_comment_on_an_old_note_rewrites_its_comments_once(old_vault: Path, cli: Cli) -> None:
    path = old_vault / "shared" / "Old cellar.md"
    out = cli.ok("note", "comment", "Old cellar", "--text", "new one", ghost="bob")
    assert [c["text"] for c in out["comments"]] == ["Old: nested", "two\nlines", "new one"]
    fm = front_matter(path)
    assert all(isinstance(c, str) for c in fm["comments"]) and len(fm["comments"]) == 3
    assert fm["created"] == "2026-01-10T09:00:00Z"  # not a key the comment touched
    assert OBSIDIAN_DATETIME.match(fm["updated"])


@pytest.mark.parametrize(("key", "value"), [("hash", "sha256:edited-in-obsidian"), ("version", "7"), ("version", "0")])
def test_editing_bookkeeping_by_hand_is_a_new_version_never_an_overwrite(
    vault: Path, cli: Cli, key: str, value: str
) -> None:
    """`hash` and `version` stay visible (README); a person changing them in Obsidian makes a
    new version, so an agent holding the old one gets a conflict, never a silent write."""
    made = cli.ok("note", "create", "--title", "Kept", "--type", "note", "--scope", "shared", "--body", "Words.")
    path = vault / made["path"]
    text = path.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith(f"{key}: "))
    path.write_text(text.replace(line, f"{key}: {value}"), encoding="utf-8")
    now = cli.ok("get", made["id"])["note"]["version"]
    assert now != 1
    stale = cli("note", "update", made["id"], "--body", "Agent text.", "--expect-version", "1", ghost="alice")
    assert stale.exit_code != 0 and "conflict" in stale.stdout + stale.stderr
    assert "Words." in path.read_text(encoding="utf-8")
    cli.ok("note", "update", made["id"], "--append", "More.", "--expect-version", str(now), ghost="alice")
    assert front_matter(path)["version"] == now + 1  # the file catches up at vaultmem's next write


@pytest.mark.parametrize(
    ("written", "fixed"),
    [
        ("2026-01-10T09:00:00Z", "2026-01-10T09:00:00"),
        ("2026-01-10T09:00:00+02:00", "2026-01-10T07:00:00"),  # to UTC, the vault's convention
        ("2026-01-10T23:30:00-01:00", "2026-01-11T00:30:00"),
        ("2026-01-10T09:00:00", None),  # already Obsidian's Date & time
        ("2026-01-10", None),  # a Date property: a person's choice, kept
    ],
)
def test_lint_fix_writes_zoned_dates_in_obsidians_form(vault: Path, cli: Cli, written: str, fixed: str | None) -> None:
    path = vault / "shared" / "Dated.md"
    path.write_text(
        f"---\ntitle: Dated\ntype: note\ncreated: {written}\nwhen: 2026-01-10T09:00:00Z\n---\nBody.\n", encoding="utf-8"
    )
    codes = [p["code"] for p in cli.ok("lint")["problems"] if p["path"] == "shared/Dated.md"]
    assert ("zoned_date" in codes) is (fixed is not None)
    cli.ok("lint", "--fix")
    fm = front_matter(path)
    assert fm["created"] == (fixed or written)
    assert fm["when"] == "2026-01-10T09:00:00Z"  # a person's own property: not vaultmem's to rewrite
    assert "zoned_date" not in [p["code"] for p in cli.ok("lint")["problems"] if p["path"] == "shared/Dated.md"]
