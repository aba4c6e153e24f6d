"""Issue 9.1: a hand edit is a new version; no write taken before it overwrites it."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import Cli
from vaultmem.vault.note import effective_version, version_now


@pytest.mark.parametrize(
    ("file_version", "body_edited", "previous", "expected"),
    [
        (1, False, None, 1),  # a note as vaultmem wrote it, nothing recorded yet
        (1, True, None, 2),  # its body differs from its hash: edited by hand
        (0, False, None, 0),  # a hand-written note without a version
        (2, False, 1, 2),  # vaultmem wrote version 2 over version 1
        (2, True, 1, 3),  # ... and a person edited its body since
        (1, False, 1, 2),  # same file version, other content: a hand edit (front matter)
        (1, True, 2, 3),  # a second hand edit in a row: one more again
        (5, False, 9, 10),  # an older file version than recorded (a revert): still a new version
    ],
)
def test_effective_version(file_version: int, body_edited: bool, previous: int | None, expected: int) -> None:
    assert effective_version(file_version, body_edited, previous) == expected


@pytest.mark.parametrize(
    ("file_hash", "known", "expected"),
    [
        ("a", [("a", 3)], 3),  # content the index saw
        ("b", [("a", 3), ("b", 4)], 4),  # content vaultmem just wrote, not indexed yet
        ("c", [("a", 3), ("b", 4)], 5),  # anything else: edited by hand after the last known
        ("c", [], 1),  # nothing known: the file's own version
    ],
)
def test_version_now(file_hash: str, known: list[tuple[str, int]], expected: int) -> None:
    assert version_now(file_hash, 1, False, known) == expected


@pytest.fixture
def note(cli: Cli, vault: Path) -> dict[str, Any]:
    made = cli.ok(
        "note", "create", "--title", "Wine basics", "--type", "fact", "--scope", "shared",
        "--tag", "wine", "--body", "Red Burgundy is Pinot Noir.",
    )  # fmt: skip
    return {**made, "file": vault / made["path"]}


def _obsidian_property_edit(path: Path, key: str, value: Any) -> None:
    """Obsidian rewrites the whole front matter block when a property changes: other YAML
    style, same keys; the version stays."""
    text = path.read_text(encoding="utf-8")
    _, fm, body = text.split("---\n", 2)
    data = yaml.safe_load(fm)
    data[key] = value
    path.write_text("---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True) + "---\n" + body)


WRITES = [
    ("note", "update", "{id}", "--append", "agent line"),
    ("note", "validate", "{id}", "--by", "alice/gpt-x", "--trust", "0.9"),
    ("note", "comment", "{id}", "--text", "agent comment"),
    ("note", "delete", "{id}"),
]


@pytest.mark.parametrize("edit", ["body", "property"])
@pytest.mark.parametrize("write", WRITES, ids=lambda w: w[1])
def test_stale_expect_version_after_a_hand_edit_is_a_conflict(
    cli: Cli, note: dict[str, Any], edit: str, write: tuple[str, ...]
) -> None:
    assert cli.ok("get", note["id"])["note"]["version"] == 1
    path: Path = note["file"]
    if edit == "body":
        with path.open("a", encoding="utf-8") as fh:
            fh.write("A person's line.\n")
    else:
        _obsidian_property_edit(path, "tags", ["wine", "france"])
    edited = path.read_bytes()
    assert cli.ok("get", note["id"])["note"]["version"] == 2
    argv = [a.replace("{id}", note["id"]) for a in write]
    res = cli(*argv, "--expect-version", "1")
    assert res.exit_code == 4, res.stdout
    error = res.data["error"]
    assert error["code"] == "conflict" and error["current_version"] == 2
    assert "edited by hand" in error["message"] and "--expect-version 2" in error["message"]
    assert path.read_bytes() == edited  # nothing written, nothing moved
    # Read again, the write goes through, and the person's words are still there.
    out = cli.ok(*argv, "--expect-version", "2")
    if write[1] != "delete":
        assert out["version"] == 3
        text = path.read_text(encoding="utf-8")
        assert ("A person's line." in text) if edit == "body" else ("france" in text)


def test_promote_with_a_stale_version_after_a_hand_edit(cli: Cli, vault: Path) -> None:
    cap = cli.ok("capture", "raw thought about wine", ghost="alice")
    path = vault / cap["path"]
    with path.open("a", encoding="utf-8") as fh:
        fh.write("A person's addition.\n")
    res = cli(
        "inbox", "promote", cap["id"], "--title", "Wine thought", "--type", "observation",
        "--scope", "private", "--expect-version", "1", ghost="alice",
    )  # fmt: skip
    assert res.exit_code == 4 and res.data["error"]["current_version"] == 2
    assert path.exists() and not (vault / "private/alice/Wine thought.md").exists()


def test_each_hand_edit_is_one_more_version(cli: Cli, note: dict[str, Any]) -> None:
    path: Path = note["file"]
    for n in range(2, 5):
        _obsidian_property_edit(path, "importance", n / 10)
        assert cli.ok("get", note["id"])["note"]["version"] == n
    # A write right after vaultmem's own write, before anything indexed it, then a property
    # edit: still a new version (vaultmem remembers what it wrote).
    out = cli.ok("note", "update", note["id"], "--append", "x", "--expect-version", "4")
    assert out["version"] == 5
    _obsidian_property_edit(path, "importance", 0.9)
    res = cli("note", "update", note["id"], "--append", "y", "--expect-version", "5")
    assert res.exit_code == 4 and res.data["error"]["current_version"] == 6


def test_counted_hand_edits_survive_a_full_rebuild(cli: Cli, note: dict[str, Any]) -> None:
    """Two hand edits are two versions, also after `index --full`: a version never goes back."""
    path: Path = note["file"]
    for line in ("Person line 1.", "Person line 2."):
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
        cli.ok("get", note["id"])
    assert cli.ok("get", note["id"])["note"]["version"] == 3
    cli.ok("index", "--full")
    assert cli.ok("get", note["id"])["note"]["version"] == 3
    res = cli("note", "update", note["id"], "--body", "Agent rewrite", "--expect-version", "2")
    assert res.exit_code == 4 and "Person line 2." in path.read_text(encoding="utf-8")


def _lose_state(vault: Path, how: str) -> None:
    """The state db gone (`.vaultmem/` deleted) or damaged (set aside and made anew)."""
    from vaultmem.paths import STATE_DB, StatePaths

    state = StatePaths(vault).dir
    if how == "deleted":
        shutil.rmtree(state)
    else:
        for extra in ("-wal", "-shm"):
            (state / f"{STATE_DB}{extra}").unlink(missing_ok=True)
        (state / STATE_DB).write_bytes(b"not a database" * 100)


@pytest.mark.parametrize("how", ["deleted", "damaged"])
@pytest.mark.parametrize("when", ["lost, then edited", "edited, then lost", "edited, lost, reindexed"])
def test_a_property_edit_is_a_new_version_after_the_state_db_is_lost(
    cli: Cli, vault: Path, note: dict[str, Any], how: str, when: str
) -> None:
    """Probe F1: `hash` covers the body only, so once the state db and its write records
    are gone, only the write journal (in the vault) tells a person's property edit from
    what vaultmem wrote; an agent's write stating the version it read must not pass."""
    path: Path = note["file"]
    cli.ok("note", "update", note["id"], "--set", "importance=0.4")
    assert cli.ok("get", note["id"])["note"]["version"] == 2  # what the agent read
    if when.startswith("lost"):
        _lose_state(vault, how)
    _obsidian_property_edit(path, "trust_score", 0.9)
    if when.startswith("edited"):
        _lose_state(vault, how)
    if when.endswith("reindexed"):
        cli.ok("index")
    edited = path.read_bytes()
    res = cli("note", "update", note["id"], "--set", "trust_score=0.1", "--expect-version", "2")
    assert res.exit_code == 4, res.stdout
    assert res.data["error"]["current_version"] == 3 and "edited by hand" in res.data["error"]["message"]
    assert path.read_bytes() == edited
    assert cli.ok("get", note["id"])["note"]["version"] == 3  # the read and the write agree


@pytest.mark.parametrize("how", ["deleted", "damaged"])
def test_a_note_as_vaultmem_wrote_it_keeps_its_version_after_the_state_db_is_lost(
    cli: Cli, vault: Path, note: dict[str, Any], how: str
) -> None:
    cli.ok("note", "update", note["id"], "--set", "importance=0.4")
    assert cli.ok("get", note["id"])["note"]["version"] == 2
    _lose_state(vault, how)
    assert cli.ok("get", note["id"])["note"]["version"] == 2
    assert cli.ok("note", "update", note["id"], "--set", "trust_score=0.1", "--expect-version", "2")["version"] == 3


def test_a_second_edit_after_a_read_ahead_of_the_index_is_one_more_version(
    cli: Cli, note: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that counts an edit the index has not recorded yet (a watcher still
    debouncing it, or one that does not answer) records what it counted: a second edit
    before the index catches up is one more version, not the one the read reported."""
    from vaultmem.daemon.forwarding import UNRESPONSIVE_ENV

    path: Path = note["file"]
    assert cli.ok("get", note["id"])["note"]["version"] == 1  # indexed
    _obsidian_property_edit(path, "trust_score", 0.9)
    with monkeypatch.context() as mp:
        mp.setenv(UNRESPONSIVE_ENV, "stopped")  # answered from the index as it is
        assert cli.ok("get", note["id"])["note"]["version"] == 2
    _obsidian_property_edit(path, "trust_score", 0.8)
    edited = path.read_bytes()
    res = cli("note", "update", note["id"], "--set", "trust_score=0.1", "--expect-version", "2")
    assert res.exit_code == 4, res.stdout
    assert res.data["error"]["current_version"] == 3
    assert path.read_bytes() == edited


def test_an_edit_racing_the_write_is_never_overwritten(
    cli: Cli, note: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person saves after vaultmem read the note and before it renames its copy in."""
    from vaultmem.services import revisions

    path: Path = note["file"]
    real = revisions.edit_note_text

    def edit_then_person_saves(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        with path.open("a", encoding="utf-8") as fh:
            fh.write("Saved in the editor meanwhile.\n")
        return out

    monkeypatch.setattr(revisions, "edit_note_text", edit_then_person_saves)
    res = cli("note", "update", note["id"], "--append", "agent", "--expect-version", "1")
    assert res.exit_code == 4
    assert "Saved in the editor meanwhile." in path.read_text(encoding="utf-8")
    assert "agent" not in path.read_text(encoding="utf-8").split("---\n", 2)[-1]


@pytest.mark.slow
def test_hand_edits_racing_agent_writes_lose_no_line(vault: Path, cli: Cli, note: dict[str, Any]) -> None:
    """A person saving every few milliseconds (whole-file saves, as editors do) while an
    agent reads the version and writes with --expect-version in a loop: every line the
    person saved is in the file at the end."""
    from vaultmem.errors import Conflict
    from vaultmem.services.app import App
    from vaultmem.services.documents import get_note
    from vaultmem.services.notes import NotePatch, update_note

    path: Path = note["file"]
    person_lines: list[str] = []
    stop = threading.Event()

    def person() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            line = f"person line {n}"
            text = path.read_text(encoding="utf-8")
            tmp = path.with_name(f".{path.name}.swp")
            tmp.write_text(text + line + "\n", encoding="utf-8")
            os.replace(tmp, path)
            person_lines.append(line)
            time.sleep(0.003)

    thread = threading.Thread(target=person)
    thread.start()
    written = conflicts = 0
    deadline = time.monotonic() + 4.0
    try:
        while time.monotonic() < deadline:
            app = App.open(vault, None)
            try:
                version = get_note(app, note["id"]).note["version"]
                update_note(app, note["id"], NotePatch(append=f"agent {written}"), expect_version=version)
                written += 1
            except Conflict:
                conflicts += 1
            finally:
                app.close()
    finally:
        stop.set()
        thread.join()
    text = path.read_text(encoding="utf-8")
    lost = [line for line in person_lines if line not in text]
    print(f"hand-edit race: {len(person_lines)} saves, {written} agent writes, {conflicts} conflicts, {len(lost)} lost")
    assert person_lines and conflicts > 0
    assert lost == []
