"""Acceptance 3 and 4: `note create` writes canonical notes; `get` finds them every way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli._util import body_of, front_matter, snapshot, write
from tests.conftest import Cli
from vaultmem.vault.ids import is_ulid
from vaultmem.vault.note import body_hash

# Obsidian's Date & time property (Obsidian Help, "Properties"): `2020-08-21T10:30:00`, no zone
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
BASE_KEYS = ["id", "title", "type", "scope"]
TAIL_KEYS = ["trust_score", "created", "updated", "version", "hash"]


@pytest.mark.parametrize(
    ("scope", "extra", "ghost", "folder", "owner_keys"),
    [
        ("shared", [], None, "shared", []),
        ("private", [], "alice", "private/alice", ["owner"]),
        ("diary", [], "bob", "diary/bob", ["owner"]),
        ("project", ["--project", "example"], "alice", "project/example", ["project"]),
    ],
)
def test_create_writes_canonical_front_matter(
    vault: Path, cli: Cli, scope: str, extra: list[str], ghost: str | None, folder: str, owner_keys: list[str]
) -> None:
    out = cli.ok(
        "note", "create", "--title", "Deploy Steps", "--type", "skill", "--scope", scope, *extra,
        "--tag", "ops", "--tag", "#deploy", "--body", "# Deploy\n\nRun make deploy.", ghost=ghost,
    )  # fmt: skip
    assert set(out) == {"id", "path", "version"}
    assert out["version"] == 1 and is_ulid(out["id"])
    path = vault / out["path"]
    assert out["path"].startswith(folder + "/") and out["path"].endswith(".md")
    # named after the title as Obsidian names files, diary notes too (SPEC §2)
    assert out["path"] == f"{folder}/Deploy Steps.md"
    fm = front_matter(path)
    assert list(fm) == BASE_KEYS + owner_keys + ["tags", *TAIL_KEYS]
    assert fm["id"] == out["id"]
    assert (fm["title"], fm["type"], fm["scope"], fm["tags"]) == ("Deploy Steps", "skill", scope, ["ops", "deploy"])
    if owner_keys == ["owner"]:
        assert fm["owner"] == ghost
    if owner_keys == ["project"]:
        assert fm["project"] == "example"
    assert fm["trust_score"] == 0.5
    assert ISO.match(fm["created"]) and fm["created"] == fm["updated"]
    assert fm["version"] == 1
    text = path.read_text()
    assert text.endswith("Run make deploy.\n") and not text.endswith("\n\n")
    assert "\r" not in text
    assert fm["hash"] == body_hash(body_of(path))


def test_create_all_options_keep_canonical_order(vault: Path, cli: Cli) -> None:
    parent = cli.ok("note", "create", "--title", "Parent", "--type", "topic", "--scope", "shared")
    out = cli.ok(
        "note", "create", "--title", "Child", "--type", "fact", "--scope", "shared", "--parent", "Parent",
        "--tag", "a", "--alias", "Kid", "--alias", "Junior", "--source", "https://example.com",
        "--trust", "0.8", "--confidence", "0.7", "--importance", "0.2", "--ttl-days", "30", "--body", "b",
    )  # fmt: skip
    fm = front_matter(vault / out["path"])
    assert list(fm) == [
        "id", "title", "type", "scope", "parent", "tags", "aliases", "source", "trust_score", "confidence",
        "importance", "created", "updated", "expires", "version", "hash",
    ]  # fmt: skip
    assert fm["parent"] == parent["id"]
    assert fm["aliases"] == ["Kid", "Junior"]
    assert (fm["trust_score"], fm["confidence"], fm["importance"]) == (0.8, 0.7, 0.2)
    assert ISO.match(fm["expires"]) and fm["expires"] > fm["created"]
    doc = cli.ok("get", "Kid")
    assert doc["links"]["parent"]["id"] == parent["id"]


def test_body_from_stdin_and_file(vault: Path, cli: Cli, tmp_path: Path) -> None:
    out = cli.ok(
        "note",
        "create",
        "--title",
        "S",
        "--type",
        "note",
        "--scope",
        "shared",
        "--body",
        "-",
        input="from stdin\r\n\r\n",
    )
    assert body_of(vault / out["path"]) == "from stdin\n"
    src = tmp_path / "body.md"
    src.write_text("from file\n")
    out = cli.ok("note", "create", "--title", "F", "--type", "note", "--scope", "shared", "--body-file", str(src))
    assert body_of(vault / out["path"]) == "from file\n"


@pytest.mark.parametrize("second", ["Deploy Steps", "deploy steps", "DEPLOY STEPS", "  deploy Steps  "])
def test_duplicate_shared_title_any_case_exits_4(vault: Path, cli: Cli, second: str) -> None:
    first = cli.ok("note", "create", "--title", "Deploy Steps", "--type", "note", "--scope", "shared")
    before = snapshot(vault, skip=vault / ".vaultmem")
    res = cli("note", "create", "--title", second, "--type", "note", "--scope", "shared")
    assert res.exit_code == 4
    assert res.data["error"]["code"] == "conflict"
    assert first["path"] in res.data["error"]["message"]
    assert snapshot(vault, skip=vault / ".vaultmem") == before


@pytest.mark.parametrize(("first", "second"), [("Café Notes", "CAFÉ NOTES"), ("Ünïcode", "üNÏCODE"), ("日本", "日本")])
def test_duplicate_non_ascii_title_any_case_exits_4(cli: Cli, first: str, second: str) -> None:
    cli.ok("note", "create", "--title", first, "--type", "note", "--scope", "shared")
    assert cli("note", "create", "--title", second, "--type", "note", "--scope", "shared").exit_code == 4
    assert cli.ok("get", second)["note"]["title"] == first


NFC, NFD = "Caf\u00e9 Notes", "Cafe\u0301 Notes"  # one title, typed composed and decomposed


@pytest.mark.parametrize(("first", "second"), [(NFC, NFD), (NFD, NFC), (NFD, NFD.upper())])
def test_a_title_in_another_unicode_form_is_the_same_title(vault: Path, cli: Cli, first: str, second: str) -> None:
    made = cli.ok("note", "create", "--title", first, "--type", "note", "--scope", "shared")
    assert made["path"] == f"shared/{NFC}.md" and front_matter(vault / made["path"])["title"] == NFC
    assert cli("note", "create", "--title", second, "--type", "note", "--scope", "shared").exit_code == 4


def test_a_hand_written_decomposed_title_clashes_with_a_composed_one(vault: Path, cli: Cli) -> None:
    write(vault, "shared/by hand.md", f"---\ntitle: {NFD}\n---\nTyped on a Mac.\n")
    cli.ok("index")
    assert cli("note", "create", "--title", NFC, "--type", "note", "--scope", "shared").exit_code == 4


def test_same_title_in_other_scopes_is_fine(vault: Path, cli: Cli) -> None:
    cli.ok("note", "create", "--title", "Plan", "--type", "note", "--scope", "shared")
    a = cli.ok("note", "create", "--title", "Plan", "--type", "note", "--scope", "private", ghost="alice")
    b = cli.ok("note", "create", "--title", "plan", "--type", "note", "--scope", "private", ghost="alice")
    # a taken name in any letter case gets Obsidian's " 1" numbering
    assert a["path"] == "private/alice/Plan.md" and b["path"] == "private/alice/plan 1.md"


@pytest.mark.parametrize("scope", ["shared", "private"])
def test_a_project_with_another_scope_is_refused(vault: Path, cli: Cli, scope: str) -> None:
    """--project was dropped in silence: a note meant for a project's members went to
    shared/, seen by everyone; nothing is written now."""
    before = snapshot(vault, skip=vault / ".vaultmem")
    res = cli("note", "create", "--title", "Plan", "--type", "note", "--scope", scope, "--project", "example",
              ghost="alice")  # fmt: skip
    assert res.exit_code == 5 and "--scope project" in res.data["error"]["message"]
    assert snapshot(vault, skip=vault / ".vaultmem") == before


def test_titles_with_the_same_file_name_get_unique_files(cli: Cli) -> None:
    a = cli.ok("note", "create", "--title", "Wine: basics", "--type", "note", "--scope", "shared")
    b = cli.ok("note", "create", "--title", "Wine basics", "--type", "note", "--scope", "shared")
    assert (a["path"], b["path"]) == ("shared/Wine basics.md", "shared/Wine basics 1.md")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--type", "bogus", "--scope", "shared"], 5),
        (["--type", "note", "--scope", "galaxy"], 5),
        (["--type", "note", "--scope", "private"], 5),  # no ghost
        (["--type", "note", "--scope", "project"], 5),  # no --project
        (["--type", "note", "--scope", "shared", "--tag", "two words"], 5),
        (["--type", "note", "--scope", "shared", "--confidence", "-0.1"], 5),
        (["--type", "note", "--scope", "shared", "--ttl-days", "-1"], 5),
        (["--type", "note", "--scope", "shared", "--ttl-days", "nan"], 5),
        (["--type", "note", "--scope", "shared", "--ttl-days", "inf"], 5),
        (["--type", "note", "--scope", "shared", "--parent", "Nope"], 3),
        (["--type", "note", "--scope", "shared", "--body", "x", "--body-file", "y"], 5),
        (["--type", "note", "--scope", "shared", "--trust", "abc"], 2),
        (["--scope", "shared"], 2),
    ],
)
def test_create_rejects_bad_input_and_writes_nothing(vault: Path, cli: Cli, args: list[str], code: int) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    res = cli("note", "create", "--title", "T", *args)
    assert res.exit_code == code, res.stdout
    assert set(res.data) == {"error"} and res.data["error"]["message"]
    assert snapshot(vault, skip=vault / ".vaultmem") == before


# --- get (acceptance 4) ---------------------------------------------------------------------


@pytest.fixture
def made(cli: Cli) -> dict[str, str]:
    return cli.ok(
        "note", "create", "--title", "Deploy Steps", "--type", "skill", "--scope", "shared",
        "--alias", "How To Deploy", "--tag", "ops", "--body", "Run it. See [[Welcome to the vault]] and [[Nowhere]]. #inline",
    )  # fmt: skip


@pytest.mark.parametrize(
    "ref",
    [
        "{id}",
        "{id_lower}",
        "shared/Deploy Steps.md",
        "shared/Deploy Steps",
        "./shared/Deploy Steps.md",
        "Deploy Steps",
        "deploy steps",
        "DEPLOY STEPS",
        "How To Deploy",
        "how to deploy",
    ],
)
def test_get_by_id_path_title_alias(cli: Cli, made: dict[str, str], ref: str) -> None:
    ref = ref.format(id=made["id"], id_lower=made["id"].lower())
    doc = cli.ok("get", ref)
    assert doc["note"]["id"] == made["id"]
    assert doc["note"]["path"] == "shared/Deploy Steps.md"


def test_get_document_shape(cli: Cli, made: dict[str, str]) -> None:
    doc = cli.ok("get", made["id"])
    assert set(doc) >= {"note", "body", "tags", "links", "comments"}
    note = doc["note"]
    for key in (
        "id",
        "title",
        "type",
        "scope",
        "tags",
        "aliases",
        "trust_score",
        "created",
        "updated",
        "version",
        "hash",
        "path",
    ):
        assert key in note, key
    assert doc["body"] == "Run it. See [[Welcome to the vault]] and [[Nowhere]]. #inline\n"
    assert doc["tags"] == ["ops", "inline"]
    assert [link["path"] for link in doc["links"]["out"]] == ["shared/Welcome to the vault.md"]
    assert [d["target"] for d in doc["links"]["dangling"]] == ["Nowhere"]
    assert doc["comments"] == []
    back = cli.ok("get", "Welcome to the vault")
    assert made["id"] in [link["id"] for link in back["links"]["in"]]


def test_get_raw(vault: Path, cli: Cli, made: dict[str, str]) -> None:
    assert cli.ok("get", made["id"], "--raw")["raw"] == (vault / made["path"]).read_text()
    assert cli.ok("get", made["id"], "--raw", json_=False) == (vault / made["path"]).read_text()


def test_get_sees_hand_edits_without_an_index_run(vault: Path, cli: Cli, made: dict[str, str]) -> None:
    cli.ok("get", made["id"])
    path = vault / made["path"]
    path.write_text(path.read_text().replace("Run it.", "Run it twice."))
    assert cli.ok("get", made["id"])["body"].startswith("Run it twice.")
    write(vault, "shared/new-by-hand.md", "---\ntitle: Hand Made\n---\nhello\n")
    assert cli.ok("get", "hand made")["note"]["path"] == "shared/new-by-hand.md"


def test_get_title_without_front_matter_is_file_stem(vault: Path, cli: Cli) -> None:
    write(vault, "Some Folder/My Plain Note.md", "just text\n")
    doc = cli.ok("get", "my plain note")
    assert doc["note"]["path"] == "Some Folder/My Plain Note.md"
    assert doc["note"]["id"].startswith("p-")
    assert cli.ok("get", doc["note"]["id"])["note"]["path"] == "Some Folder/My Plain Note.md"


def test_ambiguous_title_exits_7_with_candidates(vault: Path, cli: Cli) -> None:
    write(vault, "shared/a/twin.md", "---\nid: TWIN-A\ntitle: Twin\n---\na\n")
    write(vault, "project/example/twin.md", "---\nid: TWIN-B\ntitle: twin\n---\nb\n")
    write(vault, "private/bob/twin.md", "---\nid: TWIN-C\ntitle: TWIN\n---\nc\n")
    res = cli("get", "Twin", ghost="alice")
    assert res.exit_code == 7
    err = res.data["error"]
    assert err["code"] == "ambiguous"
    assert sorted((c["id"], c["path"]) for c in err["candidates"]) == [
        ("TWIN-A", "shared/a/twin.md"),
        ("TWIN-B", "project/example/twin.md"),
    ]
    for cid in ("TWIN-A", "TWIN-B", "shared/a/twin.md", "project/example/twin.md"):
        assert cid in err["message"]
    assert "TWIN-C" not in res.stdout and "private/bob" not in res.stdout  # bob's stays invisible
    # by id or path the same notes are unambiguous
    assert cli.ok("get", "TWIN-A", ghost="alice")["note"]["path"] == "shared/a/twin.md"
    assert cli.ok("get", "project/example/twin.md", ghost="alice")["body"] == "b\n"
    # without a ghost, the project note is invisible: only one candidate is left
    assert cli.ok("get", "Twin")["note"]["id"] == "TWIN-A"


def test_ambiguous_alias_exits_7(vault: Path, cli: Cli) -> None:
    write(vault, "shared/x.md", "---\nid: X1\naliases: [Shared Name]\n---\n")
    write(vault, "shared/y.md", "---\nid: Y1\naliases: [shared name]\n---\n")
    res = cli("get", "Shared Name")
    assert res.exit_code == 7
    assert {c["id"] for c in res.data["error"]["candidates"]} == {"X1", "Y1"}


def test_title_beats_alias_and_id_beats_title(vault: Path, cli: Cli) -> None:
    write(vault, "shared/one.md", "---\nid: ONE\ntitle: Alpha\n---\n")
    write(vault, "shared/two.md", "---\nid: TWO\ntitle: Beta\naliases: [Alpha, ONE]\n---\n")
    write(vault, "shared/three.md", "---\nid: THREE\ntitle: TWO\n---\n")
    assert cli.ok("get", "Alpha")["note"]["id"] == "ONE"
    assert cli.ok("get", "ONE")["note"]["id"] == "ONE"
    assert cli.ok("get", "TWO")["note"]["id"] == "TWO"


@pytest.mark.parametrize(
    "ref", ["01ZZZZZZZZZZZZZZZZZZZZZZZZ", "no such title", "shared/nope.md", "", "../vaultmem.toml", "vaultmem.toml"]
)
def test_get_missing_exits_3(cli: Cli, ref: str) -> None:
    res = cli("get", ref)
    assert res.exit_code == 3
    assert res.data == {"error": {"code": "not_found", "message": f"no note matches {ref.strip()!r}"}}


def test_get_broken_front_matter_note_still_readable(vault: Path, cli: Cli) -> None:
    write(vault, "shared/broken.md", "---\ntitle: [oops\n---\nstill here\n")
    doc = cli.ok("get", "shared/broken.md")
    assert doc["body"] == "still here\n"
    assert doc["note"]["title"] == "broken"


def test_human_output_goes_to_stdout_errors_to_stderr(cli: Cli, made: dict[str, str]) -> None:
    res = cli("get", made["id"], json_=False)
    assert res.exit_code == 0 and "Deploy Steps" in res.stdout
    res = cli("get", "nope", json_=False)
    assert res.exit_code == 3
    assert res.stdout == ""
    assert res.stderr.startswith("vaultmem: error: ")


def test_get_by_a_path_in_another_letter_case(vault: Path, cli: Cli) -> None:
    """Paths resolve as links do, as Obsidian resolves them: letter case ignored; a hidden
    note's path in another case is as absent as in its own."""
    made = cli.ok("note", "create", "--title", "Alpha grape", "--type", "note", "--scope", "shared")
    for ref in ("shared/alpha grape.md", "SHARED/Alpha Grape", "[[shared/ALPHA GRAPE]]", "./Shared/alpha grape"):
        assert cli.ok("get", ref)["note"]["id"] == made["id"]
    cli.ok("note", "create", "--title", "Zebracorn", "--type", "note", "--scope", "private", ghost="alice")
    for ref in ("private/alice/Zebracorn", "PRIVATE/ALICE/zebracorn.md"):
        res = cli("get", ref, ghost="bob")
        assert res.exit_code == 3 and "Zebracorn" not in res.stdout.replace(ref, "")
