"""`edit` and `diary` (issue 15, acceptance 4): a real editor process (a script standing in
for vim) edits the file; the command reports what changed."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from tests.cli._util import body_of, front_matter
from tests.conftest import Cli
from tests.integration._vaults import make_vault, note
from vaultmem.vault.note import body_hash

NOW = 1793534400  # 2026-11-01T12:00:00Z
A = "01JG0" + "A" * 21

# Appends a line to the body and sets `importance` to 0.7 in the front matter.
EDITOR_SCRIPT = """
import sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
head, sep, body = text.partition("\\n---\\n")
head = head.replace("trust_score: 0.5", "trust_score: 0.5\\nimportance: 0.7")
open(path, "w", encoding="utf-8").write(head + sep + body + "Edited in an editor, see [[Nowhere]].\\n")
"""


@pytest.fixture
def clock_fixed() -> Iterator[None]:
    from vaultmem import clock

    clock.fix(NOW)
    try:
        yield
    finally:
        clock.fix(None)


@pytest.fixture
def notes(tmp_path: Path, clock_fixed: None) -> Cli:
    root = make_vault(tmp_path / "vault")
    note(
        root, "shared/Burgundy wine.md", "Red Burgundy.\n", id=A, title="Burgundy wine", type="fact",
        trust_score=0.5, version=1, hash=body_hash("Red Burgundy.\n"),  # as vaultmem wrote it
    )  # fmt: skip
    note(root, "private/alice/Secret.md", "Hidden.\n", id="01JG0" + "S" * 21, title="Secret", type="fact")
    return Cli(root)


def _editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str = EDITOR_SCRIPT) -> Path:
    path = tmp_path / "fake-editor.py"
    path.write_text(script)
    monkeypatch.setenv("VISUAL", f"{sys.executable} {path}")
    return path


def test_edit_runs_the_editor_and_reports_what_changed(
    notes: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _editor(tmp_path, monkeypatch)
    res = notes.ok("edit", "Burgundy wine", ghost="bob")
    assert (res["id"], res["path"], res["changed"], res["created"]) == (A, "shared/Burgundy wine.md", True, False)
    assert res["lines_added"] == 2 and res["lines_removed"] == 0
    assert res["fields_changed"] == ["importance"]
    assert res["version"] == 2  # a hand edit is a new version (SPEC §2)
    assert [(p["code"], p["severity"]) for p in res["problems"]] == [("dangling_link", "warning")]
    path = notes.vault / "shared/Burgundy wine.md"
    assert front_matter(path)["importance"] == 0.7
    assert body_of(path) == "Red Burgundy.\nEdited in an editor, see [[Nowhere]].\n"
    # the index saw it: the new text is there for the next reader
    assert "Edited in an editor" in notes.ok("get", "Burgundy wine")["body"]


def test_edit_without_changes_and_without_editor(notes: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _editor(tmp_path, monkeypatch, "pass\n")
    res = notes.ok("edit", A[:8])
    assert (res["changed"], res["lines_added"], res["fields_changed"], res["version"]) == (False, 0, [], 1)
    human = notes.ok("edit", "Burgundy wine", json_=False)
    assert "shared/Burgundy wine.md" in human and "unchanged" in human
    monkeypatch.delenv("VISUAL")
    monkeypatch.delenv("EDITOR", raising=False)
    res2 = notes("edit", "Burgundy wine")
    assert res2.exit_code == 5 and "$EDITOR" in res2.data["error"]["message"]


def test_edit_a_hidden_note_is_not_found_and_starts_no_editor(
    notes: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    _editor(tmp_path, monkeypatch, f"open({str(marker)!r}, 'w').write('x')\n")
    res = notes("edit", "Secret", ghost="bob")
    assert res.exit_code == 3
    assert res.data == {"error": {"code": "not_found", "message": "no note matches 'Secret'"}}
    assert not marker.exists()


def _today() -> str:
    return datetime.fromtimestamp(NOW).astimezone().date().isoformat()


def test_diary_append_creates_then_adds_timestamped_lines(notes: Cli) -> None:
    first = notes.ok("diary", "--append", "Tasted a 2019 Chablis.", ghost="alice")
    day = _today()
    assert (first["path"], first["created"], first["changed"]) == (f"diary/alice/{day}.md", True, True)
    second = notes.ok("diary", "-a", "Then   a Meursault.", ghost="alice")
    assert (second["created"], second["version"]) == (False, first["version"] + 1)
    path = notes.vault / first["path"]
    hhmm = datetime.fromtimestamp(NOW).astimezone().strftime("%H:%M")
    assert body_of(path) == f"- {hhmm} Tasted a 2019 Chablis.\n- {hhmm} Then a Meursault.\n"
    fm = front_matter(path)
    assert (fm["title"], fm["type"], fm["scope"], fm["owner"]) == (day, "episode", "diary", "alice")
    # bob has his own diary; alice's entry stays hers
    bob = notes.ok("diary", "--append", "Bob's day.", ghost="bob")
    assert bob["path"] == f"diary/bob/{day}.md"
    assert notes("get", first["path"], ghost="bob").exit_code == 3


def test_diary_dates_and_editor(notes: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = notes.ok("diary", "--date", "2026-10-15", "--append", "Harvest.", ghost="alice")
    assert res["path"] == "diary/alice/2026-10-15.md"
    _editor(tmp_path, monkeypatch, "import sys\nopen(sys.argv[1], 'a').write('Written in the editor.\\n')\n")
    opened = notes.ok("diary", "--date", "2026-10-15", ghost="alice")
    assert (opened["created"], opened["changed"], opened["lines_added"]) == (False, True, 1)
    assert body_of(notes.vault / res["path"]).endswith("Harvest.\nWritten in the editor.\n")
    new = notes.ok("diary", "-d", "yesterday", ghost="alice")
    assert new["created"] is True and new["path"].startswith("diary/alice/")
    assert notes("diary", "--append", "x").exit_code == 5  # needs a ghost
    assert notes("diary", "--date", "someday", "--append", "x", ghost="alice").exit_code == 5


def test_note_create_edit_opens_the_new_note(notes: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _editor(tmp_path, monkeypatch, "import sys\nopen(sys.argv[1], 'a').write('More, typed by hand.\\n')\n")
    res = notes.ok(
        "note", "create", "--title", "Chablis", "--type", "fact", "--scope", "shared", "--body", "Chardonnay.",
        "--edit",
    )  # fmt: skip
    assert (res["path"], res["created"], res["changed"], res["lines_added"]) == ("shared/Chablis.md", True, True, 1)
    assert body_of(notes.vault / "shared/Chablis.md") == "Chardonnay.\nMore, typed by hand.\n"


# While "the person" edits, "an agent" writes the same note through vaultmem (a real process),
# then the editor saves what it read plus its own change, as an editor does.
CONCURRENT_SCRIPT = """
import subprocess, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
agent = subprocess.run(
    [sys.executable, "-m", "vaultmem", "--vault", {vault!r}, "--ghost", "alice", "--json",
     "note", "update", "Burgundy wine", {change}],
    capture_output=True, text=True,
)
assert agent.returncode == 0, agent.stdout + agent.stderr
open(path, "w", encoding="utf-8").write(text.replace({old!r}, {person!r}))
"""


def _concurrent(
    notes: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: list[str], person: str, old: str
) -> None:
    script = CONCURRENT_SCRIPT.format(
        vault=str(notes.vault), change=", ".join(map(repr, change)), person=person, old=old
    )
    _editor(tmp_path, monkeypatch, script)


def test_an_agents_write_while_the_editor_is_open_is_merged_not_lost(
    notes: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    person = "trust_score: 0.5\nimportance: 0.7"
    _concurrent(notes, tmp_path, monkeypatch, ["--append", "Agent line."], person, "trust_score: 0.5")
    res = notes("edit", "Burgundy wine", ghost="bob")
    assert res.exit_code == 0, res.stdout + res.stderr
    path = notes.vault / "shared/Burgundy wine.md"
    assert body_of(path) == "Red Burgundy.\n\nAgent line.\n" and front_matter(path)["importance"] == 0.7
    assert res.data["changed"] and "conflict" not in res.stderr
    assert "Agent line." in notes.ok("get", "Burgundy wine")["body"]


def test_both_changing_one_line_keeps_both_between_markers_and_says_so(
    notes: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _concurrent(notes, tmp_path, monkeypatch, ["--body", "White Burgundy."], "Red Burgundy, by hand.", "Red Burgundy.")
    res = notes("edit", "Burgundy wine", ghost="bob")
    assert res.exit_code == 0 and "conflict markers" in res.stderr
    body = body_of(notes.vault / "shared/Burgundy wine.md")
    assert "White Burgundy." in body and "Red Burgundy, by hand." in body and "<<<<<<<" in body
    assert "merge_conflict" in [p["code"] for p in res.data["problems"]]


def test_a_note_deleted_while_open_keeps_the_edit_in_its_copy(
    notes: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = CONCURRENT_SCRIPT.format(
        vault=str(notes.vault), change="", person="My words.", old="Red Burgundy."
    ).replace('"note", "update", "Burgundy wine", ', '"note", "delete", "Burgundy wine"')
    _editor(tmp_path, monkeypatch, script)
    res = notes("edit", "Burgundy wine", ghost="bob")
    assert res.exit_code == 4, res.stdout + res.stderr
    kept = Path(res.data["error"]["message"].rsplit("the edit is kept in ", 1)[1])
    assert "My words." in kept.read_text()
