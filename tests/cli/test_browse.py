"""`list`, `links`, `tags`, `orphans` and the friendlier `get` (issue 15, acceptance 1-3, 7):
real vaults on disk, the real CLI through CliRunner, `--json` parsed. Bob never sees, nor
counts, alice's private notes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note

NOW = 1793534400  # 2026-11-01T12:00:00Z
DAY = 86400
A, B, C, D, E, L, M, S = (f"01JG0{c * 21}" for c in "ABCDEHMS")


@pytest.fixture
def clock_fixed() -> Iterator[None]:
    from vaultmem import clock

    clock.fix(NOW)
    try:
        yield
    finally:
        clock.fix(None)


def _age(path: Path, days: float) -> None:
    os.utime(path, (NOW - days * DAY, NOW - days * DAY))


@pytest.fixture
def wine(tmp_path: Path, clock_fixed: None) -> Cli:
    """Shared wine notes that link to each other, a loner, a note in a subfolder, and
    alice's private notes: one links to shared notes, one links nowhere."""
    root = make_vault(tmp_path / "vault")
    common = {"type": "fact", "version": 1}
    files = [
        note(
            root, "shared/Burgundy wine.md",
            "# Burgundy\n\nSee [[Chablis]] and [[Tasting notes#Reds|reds]]. #terroir\n\n## Soils\n\nLimestone.\n",
            id=A, title="Burgundy wine", tags=["wine", "france"], trust_score=0.5, importance=0.2,
            created="2026-01-10T09:00:00Z", updated="2026-02-01T09:00:00Z", **common,
        ),
        note(
            root, "shared/Chablis.md", "Chablis, north of [[Burgundy wine]].\n",
            id=B, title="Chablis", parent=A, tags=["wine"], trust_score=0.9, importance=0.9,
            created="2026-01-11T09:00:00Z", updated="2026-01-11T09:00:00Z", **common,
        ),
        note(
            root, "shared/Tasting notes.md",
            "## Reds\n\nCherry. ![[Chablis]]\n\n### Old reds\n\nLeather.\n\n## Whites\n\nSee [[Missing page]].\n",
            id=C, title="Tasting notes", tags=["Wine/Notes"], created="2026-03-01T09:00:00Z",
            updated="2026-03-02T09:00:00Z", **common,
        ),
        note(
            root, "shared/Lonely.md", "Nobody links here, it links nowhere.\n",
            id=L, title="Lonely", tags=["misc"], created="2026-04-01T09:00:00Z", **common,
        ),
        note(
            root, "shared/docs/Embed files.md", "How files get embedded.\n",
            id=E, title="How embedding works", created="2026-04-02T09:00:00Z", **common,
        ),
        note(
            root, "private/alice/Cellar plan.md", "Buy [[Burgundy wine]] and read [[How embedding works]]. #secret\n",
            id=D, title="Cellar plan", tags=["wine", "cellar"], created="2026-10-31T09:00:00Z",
            updated="2026-10-31T20:00:00Z", **common,
        ),
        note(
            root, "private/alice/Alone.md", "Alice's loner.\n",
            id=M, title="Alone", created="2026-05-01T09:00:00Z", **common,
        ),
        note(
            root, "private/bob/Bob notes.md", "Bob's own note about [[Lonely]].\n",
            id=S, title="Bob notes", created="2026-05-02T09:00:00Z", **common,
        ),
    ]  # fmt: skip
    for path in files:
        _age(path, 400)  # older than every date in them: the front matter decides the order
    return Cli(root)


def _paths(notes: list[dict[str, str]]) -> list[str]:
    return [n["path"] for n in notes]


# --- list ---------------------------------------------------------------------------------------


def test_list_sorts_newest_change_first_and_counts_only_visible_notes(wine: Cli) -> None:
    bob = wine.ok("list", ghost="bob")
    assert bob["total"] == 6 and bob["returned"] == 6
    # `updated` (or created) decides where the files are all equally old
    assert _paths(bob["notes"])[:3] == ["private/bob/Bob notes.md", "shared/docs/Embed files.md", "shared/Lonely.md"]
    assert not any(p.startswith("private/alice") for p in _paths(bob["notes"]))
    alice = wine.ok("list", ghost="alice")
    assert alice["total"] == 7
    assert alice["notes"][0]["path"] == "private/alice/Cellar plan.md"
    first = alice["notes"][0]
    assert {k: first[k] for k in ("id", "title", "type", "scope", "owner", "updated")} == {
        "id": D, "title": "Cellar plan", "type": "fact", "scope": "private", "owner": "alice",
        "updated": "2026-10-31T20:00:00Z",
    }  # fmt: skip
    assert first["tags"] == ["wine", "cellar", "secret"]  # front matter, then inline
    nobody = wine.ok("list")
    assert nobody["total"] == 5


def test_list_filters_and_sorts(wine: Cli) -> None:
    tagged = wine.ok("list", "-t", "wine", "--sort", "title", ghost="bob")
    # nested tags match their parent, letter case ignored
    assert _paths(tagged["notes"]) == ["shared/Burgundy wine.md", "shared/Chablis.md", "shared/Tasting notes.md"]
    both = wine.ok("list", "--tag", "wine", "--tag", "france", ghost="bob")
    assert _paths(both["notes"]) == ["shared/Burgundy wine.md"]
    assert wine.ok("list", "--scope", "private", ghost="bob")["total"] == 1
    assert wine.ok("list", "-s", "private", ghost="alice")["total"] == 2
    assert wine.ok("list", "--owner", "alice", ghost="bob")["total"] == 0
    assert _paths(wine.ok("list", "--sort", "trust", "-n", "1", ghost="bob")["notes"]) == ["shared/Chablis.md"]
    by_importance = wine.ok("list", "--sort", "importance", ghost="bob")["notes"]
    assert _paths(by_importance[:2]) == ["shared/Chablis.md", "shared/Burgundy wine.md"]
    created = wine.ok("list", "--since", "2026-03-01", "--until", "2026-04-01", "--sort", "created", ghost="bob")
    assert _paths(created["notes"]) == ["shared/Lonely.md", "shared/Tasting notes.md"]
    assert wine.ok("list", "--type", "note", ghost="bob")["total"] == 0


def test_list_pages_with_a_total(wine: Cli) -> None:
    everything = _paths(wine.ok("list", "--sort", "title", ghost="bob")["notes"])
    page1 = wine.ok("list", "--sort", "title", "-n", "2", ghost="bob")
    page2 = wine.ok("list", "--sort", "title", "--limit", "2", "--offset", "2", ghost="bob")
    assert (page1["total"], page1["returned"], page2["offset"]) == (6, 2, 2)
    assert _paths(page1["notes"]) + _paths(page2["notes"]) == everything[:4]
    beyond = wine.ok("list", "--offset", "50", ghost="bob")
    assert (beyond["total"], beyond["returned"], beyond["notes"]) == (6, 0, [])


def test_list_updated_since_is_what_changed_including_hand_edits_and_deletions(wine: Cli) -> None:
    root = wine.vault
    assert wine.ok("list", "--updated-since", "1d", ghost="bob")["total"] == 0
    alice_recent = wine.ok("list", "--updated-since", "yesterday", ghost="alice")
    assert _paths(alice_recent["notes"]) == ["private/alice/Cellar plan.md"]  # updated 16 h ago
    # a hand edit in an editor leaves `updated` alone; the file time shows it
    lonely = root / "shared/Lonely.md"
    lonely.write_text(lonely.read_text() + "An edit by hand.\n")
    _age(lonely, 2 / 24)
    assert _paths(wine.ok("list", "--updated-since", "3h", ghost="bob")["notes"]) == ["shared/Lonely.md"]
    assert wine.ok("list", "--updated-since", "1h", ghost="bob")["total"] == 0
    # deletions: one through vaultmem (trash, timed), one by hand, one bob cannot see
    wine.ok("note", "delete", "Chablis", ghost="bob")
    (root / "shared/docs/Embed files.md").unlink()
    wine.ok("note", "delete", "Alone", ghost="alice")
    res = wine.ok("list", "--updated-since", "1d", "--include-deleted", ghost="bob")
    deleted = {d["path"]: d for d in res["deleted"]}
    assert set(deleted) == {"shared/Chablis.md", "shared/docs/Embed files.md"}
    assert deleted["shared/Chablis.md"]["deleted_at"] == "2026-11-01T12:00:00Z"
    assert deleted["shared/Chablis.md"]["id"] == B
    assert deleted["shared/docs/Embed files.md"]["deleted_at"] is None
    assert "Chablis" not in _paths(res["notes"])
    assert "deleted" not in wine.ok("list", ghost="bob")
    alice = wine.ok("list", "--include-deleted", "-s", "private", ghost="alice")
    assert _paths(alice["deleted"]) == ["private/alice/Alone.md"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--changed-since", "soon"), "--changed-since must be a date"),
        (("--updated-since", "soon"), "--changed-since must be a date"),  # the name it had before
        (("--since", "2026-13-45"), "--since must be a date"),
        (("--sort", "random"), "unknown sort"),
        (("--scope", "everywhere"), "unknown scope"),
        (("--limit", "-1"), "--limit must be"),
    ],
)
def test_list_refuses_bad_input(wine: Cli, args: tuple[str, ...], message: str) -> None:
    res = wine("list", *args, ghost="bob")
    assert res.exit_code == 5
    assert message in res.data["error"]["message"]


def test_list_through_a_pipe_prints_one_record_per_note(wine: Cli) -> None:
    out = wine.ok("list", "--sort", "title", "-n", "2", ghost="bob", json_=False)
    lines = out.splitlines()
    assert [line.split("\t")[:3] for line in lines] == [
        ["private/bob/Bob notes.md", S, "Bob notes"],
        ["shared/Burgundy wine.md", A, "Burgundy wine"],
    ]


# --- links --------------------------------------------------------------------------------------


def test_links_in_out_parent_children_dangling(wine: Cli) -> None:
    doc = wine.ok("links", "Burgundy wine", ghost="bob")
    assert (doc["note"]["id"], doc["note"]["path"]) == (A, "shared/Burgundy wine.md")
    out = {o["path"]: (o["kind"], o["heading"], o["label"]) for o in doc["out"]}
    assert out == {"shared/Chablis.md": ("link", None, None), "shared/Tasting notes.md": ("link", "Reds", "reds")}
    assert [i["path"] for i in doc["in"]] == ["shared/Chablis.md"]  # alice's plan links here too: hidden
    assert [c["path"] for c in doc["children"]] == ["shared/Chablis.md"]
    assert doc["parent"] is None and doc["dangling"] == []
    chablis = wine.ok("links", "[[Chablis]]", ghost="bob")
    assert chablis["parent"]["id"] == A
    assert sorted((i["path"], i["kind"]) for i in chablis["in"]) == [
        ("shared/Burgundy wine.md", "link"),
        ("shared/Tasting notes.md", "embed"),
    ]
    tasting = wine.ok("links", "Tasting notes", ghost="bob")
    assert tasting["dangling"] == [{"target": "Missing page", "heading": None}]
    assert tasting["in"] == [
        {"id": A, "title": "Burgundy wine", "path": "shared/Burgundy wine.md", "type": "fact", "scope": "shared",
         "kind": "link", "heading": "Reds", "label": "reds"},
    ]  # fmt: skip
    alice = wine.ok("links", "Burgundy wine", ghost="alice")
    assert sorted(i["path"] for i in alice["in"]) == ["private/alice/Cellar plan.md", "shared/Chablis.md"]


def test_links_of_a_hidden_note_is_not_found(wine: Cli) -> None:
    for ref in ("Cellar plan", D, "private/alice/Cellar plan.md"):
        res = wine("links", ref, ghost="bob")
        assert res.exit_code == 3
        assert res.data == {"error": {"code": "not_found", "message": f"no note matches {ref!r}"}}
    human = wine("links", "Chablis", ghost="bob", json_=False)
    assert "shared/Burgundy wine.md" in human.stdout and "Cellar" not in human.stdout


# --- tags ---------------------------------------------------------------------------------------


def test_tags_count_front_matter_and_inline_with_nested_rollup(wine: Cli) -> None:
    bob = {t["tag"]: (t["count"], t["notes"]) for t in wine.ok("tags", ghost="bob")["tags"]}
    assert bob == {
        "wine": (3, 2),  # Burgundy, Chablis, and Tasting notes through wine/notes
        "Wine/Notes": (1, 1),
        "france": (1, 1),
        "terroir": (1, 1),
        "misc": (1, 1),
    }
    alice = {t["tag"]: t["count"] for t in wine.ok("tags", ghost="alice")["tags"]}
    assert alice["wine"] == 4 and alice["secret"] == 1 and alice["cellar"] == 1
    listing = wine.ok("tags", ghost="bob")
    assert listing["total"] == 5 and listing["tags"][0]["tag"] == "wine"
    nested = wine.ok("tags", "wine", "--sort", "name", ghost="bob")
    assert [t["tag"] for t in nested["tags"]] == ["wine", "Wine/Notes"]


# --- orphans ------------------------------------------------------------------------------------


def test_orphans_as_each_reader_sees_them(wine: Cli) -> None:
    bob = wine.ok("orphans", ghost="bob")
    # Embed files is linked only from alice's hidden plan: for bob, nothing links to it
    assert _paths(bob["orphans"]) == ["shared/docs/Embed files.md"]
    assert bob["total"] == 1
    alice = wine.ok("orphans", ghost="alice")
    assert _paths(alice["orphans"]) == ["private/alice/Alone.md", "shared/Lonely.md"]
    nobody = wine.ok("orphans")
    assert _paths(nobody["orphans"]) == ["shared/Lonely.md", "shared/docs/Embed files.md"]


# --- get ----------------------------------------------------------------------------------------


def test_get_by_id_prefix_file_name_and_wikilink(wine: Cli) -> None:
    assert wine.ok("get", A[:8].lower(), ghost="bob")["note"]["id"] == A
    short = wine("get", "01JG0", ghost="bob")  # too short to be a prefix
    assert short.exit_code == 3
    ambiguous = wine("get", "01JG0A", ghost="alice")  # unique: only A starts with it
    assert ambiguous.exit_code == 0
    for ref in ("Embed files.md", "Embed files", "embed FILES.md"):
        assert wine.ok("get", ref, ghost="bob")["note"]["path"] == "shared/docs/Embed files.md"
    doc = wine.ok("get", "[[Tasting notes#Reds|reds]]", ghost="bob")
    assert doc["part"] == {"section": "Reds", "section_line": 1}
    assert doc["body"] == "## Reds\n\nCherry. ![[Chablis]]\n\n### Old reds\n\nLeather.\n"
    assert wine.ok("get", "![[Chablis]]", ghost="bob")["body"] == "Chablis, north of [[Burgundy wine]].\n"


def test_get_by_any_id_fragment_and_a_derived_id(wine: Cli) -> None:
    """Issue 26: notes made in the same minute share a ULID's first characters, so any 6+
    characters of an id name a note, its random part too; and a derived id's prefix
    (`p-9a68a8`: the only ids of an adopted vault) names its note."""
    assert wine.ok("get", A[-8:].lower(), ghost="bob")["note"]["id"] == A
    assert wine.ok("get", A[12:18], ghost="bob")["note"]["id"] == A
    note(wine.vault, "shared/No id.md", "Adopted as it was.\n")
    derived = wine.ok("get", "No id", ghost="bob")["note"]["id"]
    assert derived.startswith("p-")
    assert wine.ok("get", derived[:8], ghost="bob")["note"]["path"] == "shared/No id.md"
    assert wine.ok("get", derived[4:12].upper(), ghost="bob")["note"]["path"] == "shared/No id.md"
    assert wine("get", D[-8:], ghost="bob").exit_code == 3  # alice's note: invisible to bob


def test_get_id_prefix_shared_by_several_is_ambiguous(wine: Cli) -> None:
    note(wine.vault, "shared/Twin.md", "x\n", id=A[:10] + "Z" * 16, title="Twin")
    res = wine("get", A[:8], ghost="bob")
    assert res.exit_code == 7
    assert {c["id"] for c in res.data["error"]["candidates"]} == {A, A[:10] + "Z" * 16}
    hidden = wine("get", D[:8], ghost="bob")  # alice's note: no prefix of it matches for bob
    assert hidden.exit_code == 3
    assert hidden.data == {"error": {"code": "not_found", "message": f"no note matches {D[:8]!r}"}}


def test_get_section_and_lines(wine: Cli) -> None:
    doc = wine.ok("get", "Burgundy wine", "--section", "soils", ghost="bob")
    assert doc["body"] == "## Soils\n\nLimestone.\n"
    lines = wine.ok("get", "Burgundy wine", "--lines", "3:3", ghost="bob")
    assert lines["body"] == "See [[Chablis]] and [[Tasting notes#Reds|reds]]. #terroir\n"
    assert lines["part"] == {"lines": [3, 3], "total_lines": 7}
    both = wine.ok("get", "Tasting notes", "--section", "Reds", "--lines", "5:", ghost="bob")
    assert both["body"] == "### Old reds\n\nLeather.\n"
    missing = wine("get", "Burgundy wine", "--section", "Nope", ghost="bob")
    assert missing.exit_code == 3 and "'Burgundy', 'Soils'" in missing.data["error"]["message"]
    bad = wine("get", "Burgundy wine", "--lines", "x:2", ghost="bob")
    assert bad.exit_code == 5


def test_get_several_refs_is_one_json_array(wine: Cli) -> None:
    docs = wine.ok("get", "Chablis", B[:7], "Lonely.md", ghost="bob")
    assert isinstance(docs, list)
    assert [d["note"]["id"] for d in docs] == [B, B, L]
    res = wine("get", "Chablis", "Cellar plan", ghost="bob")
    assert res.exit_code == 3 and "Cellar plan" in res.data["error"]["message"]
    human = wine.ok("get", "Chablis", "Lonely", ghost="bob", json_=False)
    assert "title\tChablis" in human and "title\tLonely" in human


def test_get_suggests_only_visible_titles(wine: Cli) -> None:
    res = wine("get", "Cellar plans", ghost="bob")
    assert res.exit_code == 3 and "did you mean" not in res.data["error"]["message"]
    res = wine("get", "Chabliss", ghost="bob")
    assert res.data["error"]["suggestions"][0]["title"] == "Chablis"
    mine = wine("get", "Cellar plans", ghost="alice")
    assert "did you mean 'Cellar plan'?" in mine.data["error"]["message"]
