"""Acceptance 7: `note update` patches, `--expect-version`, and changes on disk mid-write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli._util import body_of, front_matter, snapshot, write
from tests.conftest import Cli
from vaultmem.services import revisions
from vaultmem.vault.note import body_hash

BODY = "# Deploy\n\nRun make deploy.\n\n## Rollback\n\nold rollback text\n\n## Notes\n\nkeep me\n"


@pytest.fixture
def note(vault: Path, cli: Cli) -> dict[str, Any]:
    out = cli.ok(
        "note",
        "create",
        "--title",
        "Deploy",
        "--type",
        "skill",
        "--scope",
        "shared",
        "--tag",
        "ops",
        "--tag",
        "infra",
        "--body",
        BODY,
    )
    out["file"] = vault / out["path"]
    return out


def _check_hash(path: Path) -> None:
    assert front_matter(path)["hash"] == body_hash(body_of(path))


@pytest.mark.parametrize(
    ("sets", "expected"),
    [
        (["status=final"], {"status": "final"}),
        (["count=3"], {"count": 3}),
        (["flag=true"], {"flag": True}),
        (["items=[a, b]"], {"items": ["a", "b"]}),
        (["url=http://x.y/z?a=b"], {"url": "http://x.y/z?a=b"}),
        (["raw=[unclosed"], {"raw": "[unclosed"}),
        (["trust_score=0.8", "confidence=0.1"], {"trust_score": 0.8, "confidence": 0.1}),
        (["type=fact"], {"type": "fact"}),
        (["title=Deploy Guide"], {"title": "Deploy Guide"}),
        (["tags=[x, y]"], {"tags": ["x", "y"]}),
        (["aliases=[Ship It]"], {"aliases": ["Ship It"]}),
    ],
)
def test_set_key_value(cli: Cli, note: dict[str, Any], sets: list[str], expected: dict[str, Any]) -> None:
    body_before = body_of(note["file"])
    args = [a for s in sets for a in ("--set", s)]
    out = cli.ok("note", "update", note["id"], *args)
    if "title" in expected:  # a new title renames the note named after it (test_obsidian_names.py)
        assert out == {"id": note["id"], "path": "shared/Deploy Guide.md", "version": 2, "moved_from": note["path"]}
        note["file"] = note["file"].with_name("Deploy Guide.md")
    else:
        assert out == {"id": note["id"], "path": note["path"], "version": 2}
    fm = front_matter(note["file"])
    for key, value in expected.items():
        assert fm[key] == value
    assert fm["version"] == 2
    assert body_of(note["file"]) == body_before
    _check_hash(note["file"])


def test_set_empty_value_removes_the_key(cli: Cli, note: dict[str, Any]) -> None:
    cli.ok("note", "update", note["id"], "--set", "status=draft")
    cli.ok("note", "update", note["id"], "--set", "status=", "--set", "trust_score=")
    fm = front_matter(note["file"])
    assert "status" not in fm and "trust_score" not in fm
    assert fm["version"] == 3


@pytest.mark.parametrize(
    "assignment",
    [
        "id=X",
        "scope=private",
        "owner=bob",
        "version=9",
        "hash=x",
        "created=2020-01-01",
        "comments=[]",
        "noequals",
        "bad key=1",
        "=1",
    ],
)
def test_set_refuses_managed_or_malformed_keys(cli: Cli, note: dict[str, Any], assignment: str) -> None:
    before = note["file"].read_bytes()
    res = cli("note", "update", note["id"], "--set", assignment)
    assert res.exit_code == 5
    assert note["file"].read_bytes() == before


@pytest.mark.parametrize(
    "assignment",
    [
        "trust_score=7",
        "trust_score=abc",
        "confidence=-1",
        "importance=true",
        "type=bogus",
        "title=",
        "tags=[two words]",
    ],
)
def test_set_validates_values(cli: Cli, note: dict[str, Any], assignment: str) -> None:
    before = note["file"].read_bytes()
    assert cli("note", "update", note["id"], "--set", assignment).exit_code == 5
    assert note["file"].read_bytes() == before


def test_add_and_remove_tags(cli: Cli, note: dict[str, Any]) -> None:
    cli.ok("note", "update", note["id"], "--add-tag", "new", "--add-tag", "#ops", "--remove-tag", "infra")
    assert front_matter(note["file"])["tags"] == ["ops", "new"]
    cli.ok("note", "update", note["id"], "--remove-tag", "OPS", "--remove-tag", "absent")
    assert front_matter(note["file"])["tags"] == ["new"]
    assert cli.ok("get", note["id"])["tags"] == ["new"]


def test_add_tag_to_hand_written_note_without_tags(vault: Path, cli: Cli) -> None:
    path = write(vault, "shared/bare.md", "---\ntitle: Bare\n---\nx\n")
    cli.ok("note", "update", "Bare", "--add-tag", "t")
    assert front_matter(path)["tags"] == ["t"]
    assert body_of(path) == "x\n"


def test_new_title_must_stay_unique(cli: Cli, note: dict[str, Any]) -> None:
    cli.ok("note", "create", "--title", "Other", "--type", "note", "--scope", "shared")
    before = note["file"].read_bytes()
    res = cli("note", "update", note["id"], "--title", "other")
    assert res.exit_code == 4
    assert note["file"].read_bytes() == before
    moved = cli.ok("note", "update", note["id"], "--title", "DEPLOY")  # its own title in another case is fine
    assert front_matter(note["file"].with_name("DEPLOY.md"))["title"] == "DEPLOY"
    assert moved["path"] == "shared/DEPLOY.md"


def test_body_replaces_the_body(cli: Cli, note: dict[str, Any]) -> None:
    cli.ok("note", "update", note["id"], "--body", "brand new\r\n\n\n")
    assert body_of(note["file"]) == "brand new\n"
    _check_hash(note["file"])


def test_body_from_stdin(cli: Cli, note: dict[str, Any]) -> None:
    cli.ok("note", "update", note["id"], "--body", "-", input="piped body\n")
    assert body_of(note["file"]) == "piped body\n"


def test_append(cli: Cli, note: dict[str, Any]) -> None:
    cli.ok("note", "update", note["id"], "--append", "One more thing.")
    assert body_of(note["file"]) == BODY + "\nOne more thing.\n"
    _check_hash(note["file"])
    cli.ok("note", "update", note["id"], "--append", "-", input="From stdin.\n")
    assert body_of(note["file"]).endswith("One more thing.\n\nFrom stdin.\n")


def test_replace_section(cli: Cli, note: dict[str, Any]) -> None:
    out = cli.ok("note", "update", note["id"], "--replace-section", "Rollback", "--body", "git revert HEAD")
    assert "section_created" not in out
    assert body_of(note["file"]) == BODY.replace("old rollback text", "git revert HEAD")
    _check_hash(note["file"])


def test_replace_missing_section_appends_it(cli: Cli, note: dict[str, Any]) -> None:
    out = cli.ok("note", "update", note["id"], "--replace-section", "Owners", "--body", "alice")
    assert out["section_created"] is True
    assert body_of(note["file"]) == BODY + "\n## Owners\n\nalice\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--append", "x", "--body", "y"],
        ["--append", "x", "--replace-section", "H", "--body", "y"],
        ["--replace-section", "Rollback"],
        ["--body", "x", "--body-file", "/nonexistent"],
    ],
)
def test_conflicting_body_options_exit_5(cli: Cli, note: dict[str, Any], args: list[str]) -> None:
    before = note["file"].read_bytes()
    assert cli("note", "update", note["id"], *args).exit_code == 5
    assert note["file"].read_bytes() == before


def test_update_changes_only_named_keys(cli: Cli, note: dict[str, Any]) -> None:
    before = front_matter(note["file"])
    cli.ok("note", "update", note["id"], "--set", "status=x")
    after = front_matter(note["file"])
    changed = {k for k in after if before.get(k) != after.get(k)}
    assert changed <= {"status", "updated", "version"}
    assert list(after)[: len(before)] == list(before)


# --- versions and conflicts ---------------------------------------------------------------------


def test_expect_version(cli: Cli, note: dict[str, Any]) -> None:
    assert cli.ok("note", "update", note["id"], "--expect-version", "1", "--append", "a")["version"] == 2
    before = note["file"].read_bytes()
    mtime = note["file"].stat().st_mtime_ns
    for stale in ("1", "3", "0"):
        res = cli("note", "update", note["id"], "--expect-version", stale, "--body", "lost?")
        assert res.exit_code == 4
        err = res.data["error"]
        assert err["code"] == "conflict" and err["current_version"] == 2
        assert note["file"].read_bytes() == before
        assert note["file"].stat().st_mtime_ns == mtime
    assert cli.ok("note", "update", note["id"], "--expect-version", "2", "--append", "b")["version"] == 3


def test_expect_version_zero_for_hand_written_note(vault: Path, cli: Cli) -> None:
    path = write(vault, "shared/hand.md", "---\ntitle: Hand\n---\nx\n")
    assert cli("note", "update", "Hand", "--expect-version", "1", "--append", "y").exit_code == 4
    assert cli.ok("note", "update", "Hand", "--expect-version", "0", "--append", "y")["version"] == 1
    assert body_of(path) == "x\n\ny\n"


@pytest.mark.parametrize(
    "command",
    [
        ["note", "update", "{id}", "--body", "mine"],
        ["note", "update", "{id}", "--set", "status=mine"],
        ["note", "validate", "{id}", "--by", "alice/gpt-x", "--trust", "0.9"],
        ["note", "comment", "{id}", "--text", "mine"],
    ],
)
@pytest.mark.parametrize("change", ["edit", "delete"])
def test_file_changed_between_read_and_write_exits_4_and_loses_nothing(
    vault: Path, cli: Cli, note: dict[str, Any], monkeypatch: pytest.MonkeyPatch, command: list[str], change: str
) -> None:
    """Someone saves the file in an editor while vaultmem holds its copy in memory."""
    path: Path = note["file"]
    theirs = path.read_text().replace("Run make deploy.", "Run make deploy --carefully.")
    real_edit = revisions.edit_note_text

    def edit_then_race(*args: Any, **kwargs: Any) -> Any:
        result = real_edit(*args, **kwargs)  # vaultmem has read the file and built its version
        if change == "edit":
            path.write_text(theirs)
        else:
            path.unlink()
        return result

    monkeypatch.setattr(revisions, "edit_note_text", edit_then_race)
    res = cli(*[part.format(id=note["id"]) for part in command])
    if command[1] == "comment" and change == "edit":
        # an addition reads the note again and adds to it: their edit and the comment both
        assert res.exit_code == 0, res.stdout
        assert "Run make deploy --carefully." in path.read_text() and "mine" in path.read_text()
        return
    assert res.exit_code == 4, res.stdout
    assert res.data["error"]["code"] == "conflict"
    if change == "edit":
        assert path.read_text() == theirs  # their edit survives, ours is not half-applied
    else:
        assert not path.exists()
    leftovers = [p.name for p in path.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no temp files left behind


def test_conflict_then_retry_succeeds(vault: Path, cli: Cli, note: dict[str, Any]) -> None:
    path: Path = note["file"]
    path.write_text(path.read_text().replace("keep me", "edited by hand"))
    # A hand edit is a new version (SPEC §2): the agent that read version 1 must not write
    # over the person's words; it is told the version to read again.
    res = cli("note", "update", note["id"], "--expect-version", "1", "--append", "after")
    assert res.exit_code == 4 and res.data["error"]["current_version"] == 2
    assert "edited by hand" in res.data["error"]["message"]
    assert cli.ok("get", note["id"])["note"]["version"] == 2
    out = cli.ok("note", "update", note["id"], "--expect-version", "2", "--append", "after")
    assert out["version"] == 3
    assert "edited by hand" in body_of(path) and body_of(path).endswith("after\n")


@pytest.mark.parametrize(
    "content",
    [
        b"---\ntitle: Broken\nx: [oops\n---\nbody\n",
        b"---\ntitle: caf\xe9\n---\nna\xefve\n",
        b"---\n- a list\n---\nbody\n",
    ],
    ids=["invalid-yaml", "latin-1", "list"],
)
def test_unusable_notes_are_not_rewritten(vault: Path, cli: Cli, content: bytes) -> None:
    path = write(vault, "shared/bad.md", content)
    before = snapshot(vault, skip=vault / ".vaultmem")
    for command in (
        ["note", "update", "shared/bad.md", "--append", "x"],
        ["note", "validate", "shared/bad.md", "--by", "alice/x"],
    ):
        res = cli(*command)
        assert res.exit_code == 5, res.stdout
        assert res.data["error"]["code"] == "invalid_input"
    assert path.read_bytes() == content
    assert snapshot(vault, skip=vault / ".vaultmem") == before


def test_update_missing_note_exits_3(cli: Cli) -> None:
    assert cli("note", "update", "nope", "--append", "x").exit_code == 3


@pytest.mark.parametrize(
    "change",
    [[], ["--add-tag", "ops"], ["--remove-tag", "nowhere"], ["--set", "type=skill"], ["--body", BODY]],
)
def test_an_update_that_changes_nothing_writes_nothing(
    vault: Path, cli: Cli, note: dict[str, Any], change: list[str]
) -> None:
    """No new version for a write that asks for what is there: every other writer holding
    version 1 would get a conflict for nothing."""
    before = note["file"].read_bytes()
    journal = sorted(p.read_text() for p in (vault / ".vaultmem-journal").rglob("*.jsonl"))
    assert cli.ok("note", "update", note["id"], *change, ghost="alice")["version"] == 1
    assert note["file"].read_bytes() == before
    assert sorted(p.read_text() for p in (vault / ".vaultmem-journal").rglob("*.jsonl")) == journal
    assert cli.ok("note", "update", note["id"], "--expect-version", "1", "--append", "more")["version"] == 2


def test_a_ghost_replaces_no_text_a_person_edited_unseen_as_over_mcp(
    vault: Path, cli: Cli, note: dict[str, Any]
) -> None:
    path: Path = note["file"]
    path.write_text(path.read_text().replace("Run make deploy.", "Run make deploy, says Pat."))
    for replace in (["--body", "Agent text."], ["--title", "Deploy 2"], ["--set", "status=done"]):
        res = cli("note", "update", note["id"], *replace, ghost="alice")
        assert res.exit_code == 4 and res.data["error"]["code"] == "conflict", res.stdout
        assert "says Pat" in path.read_text()
    # adding keeps both; the version read after the edit lets it replace; a person may
    assert cli.ok("note", "update", note["id"], "--append", "Agent line.", ghost="alice")["version"] == 3
    assert "says Pat" in path.read_text() and "Agent line." in path.read_text()
    path.write_text(path.read_text().replace("Agent line.", "Agent line, Pat again."))
    assert (
        cli.ok("note", "update", note["id"], "--body", "Agent text.", "--expect-version", "4", ghost="alice")["version"]
        == 5
    )
    path.write_text(path.read_text().replace("Agent text.", "Pat's text."))
    assert cli.ok("note", "update", note["id"], "--body", "Person's own.")["version"] == 7


def test_an_unknown_type_filter_warns(cli: Cli, note: dict[str, Any]) -> None:
    res = cli.ok("search", "deploy", "--type", "skil", "--mode", "bm25")
    assert res["results"] == [] and any("'skil' is not one of this vault's types" in w for w in res["warnings"])
    assert "warnings" not in cli.ok("search", "deploy", "--type", "skill", "--mode", "bm25")
    query = cli("query", "deploy", "--type", "skil")
    assert query.exit_code == 0 and "'skil' is not one of this vault's types" in query.stderr


def test_a_negative_expected_version_is_invalid_input(cli: Cli, note: dict[str, Any]) -> None:
    res = cli("note", "update", note["id"], "--append", "x", "--expect-version", "-3")
    assert res.exit_code == 5 and "0 or more" in res.data["error"]["message"]


@pytest.mark.parametrize(("tag", "ok"), [("1984", False), ("2024/11", False), ("y1984", True), ("2024-11", True)])
def test_a_tag_needs_a_character_that_is_not_a_digit(cli: Cli, note: dict[str, Any], tag: str, ok: bool) -> None:
    """As in Obsidian, where #1984 is no tag (and vaultmem reads none inline either)."""
    res = cli("note", "update", note["id"], "--add-tag", tag)
    assert (res.exit_code == 0) is ok, res.stdout
