"""Golden files: the JSON of every command and the human output of the read commands, on a
fixed vault at a fixed time, checked in under tests/golden/data/.

The JSON is the contract agents program against; a refactor must leave it byte-identical
(timing fields aside). The human transcripts (zk's `tests/*.tesh` is the model) make a
rendering change show as a diff. To accept an intended change, regenerate and review:

    VAULTMEM_UPDATE_GOLDEN=1 .venv/bin/pytest tests/golden -q && git diff tests/golden/data
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._embedders import HashEmbedder, install
from tests.conftest import Cli
from tests.integration._vaults import make_vault, note

DATA = Path(__file__).parent / "data"
UPDATE = os.environ.get("VAULTMEM_UPDATE_GOLDEN") == "1"
NOW = 1793534400  # 2026-11-01T12:00:00Z
TIMING_KEYS = {"search_time_ms", "seconds", "heartbeat", "last_reconcile", "started", "uptime_s"}

A, B, C, D, E, P, Q = (f"01JG0{c * 21}" for c in "ABCDEPQ")


def build(root: Path) -> Path:
    """The fixed vault: every scope, links of every kind, a parent, tags, aliases, a topic
    note, a capture, a hand-written note without front matter and one with broken YAML."""
    make_vault(root, backend="auto", projects={"apollo": ["alice"]})
    common = {"type": "fact", "trust_score": 0.5, "version": 1}
    note(
        root, "shared/Burgundy wine.md",
        "# Burgundy\n\nRed Burgundy is Pinot Noir from the Côte d'Or. See [[Chablis]] and [[Tasting notes#Reds|reds]].\n\n"
        "## Soils\n\nLimestone and marl give the wines their `max_retries` of minerality. #terroir\n",
        id=A, title="Burgundy wine", tags=["wine", "france"], aliases=["Bourgogne"],
        created="2026-01-10T09:00:00Z", updated="2026-02-01T09:00:00Z", **common,
    )  # fmt: skip
    note(
        root, "shared/Chablis.md",
        "Chablis is Chardonnay grown on Kimmeridgian limestone, north of the rest of [[Burgundy wine]].\n",
        id=B, title="Chablis", parent=A, tags=["wine"], created="2026-01-11T09:00:00Z",
        updated="2026-01-11T09:00:00Z", **{**common, "trust_score": 0.9},
    )  # fmt: skip
    note(
        root, "shared/Tasting notes.md",
        "## Reds\n\nPinot Noir: cherry, earth. ![[Chablis]]\n\n## Whites\n\nSee [[Missing page]].\n",
        id=C, title="Tasting notes", tags=["wine/notes"], created="2026-03-01T09:00:00Z",
        updated="2026-03-02T09:00:00Z", type="note", version=2,
    )  # fmt: skip
    note(
        root, "private/alice/Cellar plan.md",
        "Buy two cases of [[Burgundy wine]] for the cellar; budget 400 euros.\n",
        id=D, title="Cellar plan", type="decision", importance=0.8, created="2026-04-01T09:00:00Z",
        updated="2026-04-01T09:00:00Z", version=1,
    )  # fmt: skip
    note(
        root, "private/bob/Bob secret.md", "Bob keeps a note about Pinot Noir prices.\n",
        id=E, title="Bob secret", type="fact", created="2026-04-02T09:00:00Z", version=1,
    )  # fmt: skip
    note(
        root, "project/apollo/Launch checklist.md", "- [ ] fuel\n- [/] half done\n- [x] crew [draft]\n",
        id=P, title="Launch checklist", type="note", created="2026-05-01T09:00:00Z", version=1,
    )  # fmt: skip
    note(
        root, "diary/alice/2026-06-01.md", "Tasted a Chablis premier cru today.\n",
        id=Q, title="2026-06-01", type="episode", created="2026-06-01T20:00:00Z", version=1,
    )  # fmt: skip
    note(
        root, "inbox/alice/Raw thought.md", "Raw thought about decanting old Burgundy.\n",
        id="01JG0" + "R" * 21, title="Raw thought", type="capture", created="2026-06-02T08:00:00Z", version=1,
    )  # fmt: skip
    note(
        root, "reference/Wine docs.md", "Where the wine documents are.\n",
        id="01JG0" + "T" * 21, title="Wine docs", type="topic", files=["docs/*.md"],
    )  # fmt: skip
    (root / "docs").mkdir()
    (root / "docs/serving.md").write_text("# Serving\n\nServe red Burgundy at 16 degrees, Chablis at 10.\n")
    (root / "Loose page.md").write_text("A page without front matter that mentions Pinot.\n")
    (root / "shared/Broken.md").write_text("---\ntitle: [unclosed\n---\nBroken front matter, still text.\n")
    for path in root.rglob("*.md"):
        os.utime(path, (NOW - 86400, NOW - 86400))
    return root


@pytest.fixture(scope="module")
def golden() -> Iterator[Cli]:
    import tempfile

    from vaultmem import clock

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        install(mp, HashEmbedder())
        clock.fix(NOW)
        try:
            root = build(Path(tmp) / "vault")
            cli = Cli(root)
            assert cli("index").exit_code == 0
            yield cli
        finally:
            clock.fix(None)


def _normalize(value: Any, vault: str) -> Any:
    if isinstance(value, dict):
        return {k: ("<timing>" if k in TIMING_KEYS else _normalize(v, vault)) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize(v, vault) for v in value]
    if isinstance(value, str):
        value = value.replace(vault, "<VAULT>")
        return re.sub(r"pid \d+|\"pid\": \d+", "pid <PID>", value)
    if isinstance(value, float):
        return round(value, 6)
    return value


def _check(name: str, text: str) -> None:
    path = DATA / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    # A missing golden file fails everywhere (not only in CI): writing it here would make
    # the test pass on whatever the code now prints, which is what it exists to catch.
    if not path.exists():
        pytest.fail(f"golden file {name} is missing; generate it with VAULTMEM_UPDATE_GOLDEN=1")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from the golden file (see module docstring)"


# Read commands: the same vault and clock, so the same answer every time.
READS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "get_title": (("get", "Burgundy wine"), "alice"),
    "get_raw": (("get", "Chablis", "--raw"), None),
    "get_private": (("get", "Cellar plan"), "alice"),
    "get_loose": (("get", "Loose page.md"), None),
    "get_hidden": (("get", "Bob secret"), "alice"),
    "get_missing": (("get", "Burgundy wines"), "alice"),
    "search_hybrid": (("search", "pinot noir burgundy"), "alice"),
    "search_bm25": (("search", "limestone", "--mode", "bm25"), "bob"),
    "search_vector": (("search", "chardonnay limestone", "--mode", "vector"), None),
    "search_explain": (("search", "pinot", "--explain", "--limit", "3"), "alice"),
    "search_budget": (("search", "wine", "--budget-tokens", "120"), "alice"),
    "search_filters": (("search", "wine", "--tag", "wine", "--type", "fact", "--min-trust", "0.6"), None),
    "search_scope": (("search", "chablis", "--scope", "private_only", "--graph-depth", "2"), "alice"),
    "search_bad": (("search", "wine", "--min-trust", "2"), None),
    "query_text": (("query", "pinot noir"), "alice"),
    "query_regex": (("query", "cha[a-z]+", "--regex", "--type", "fact"), None),
    "query_since": (("query", "wine", "--since", "2026-03-01"), "alice"),
    "reference": (("reference", "search", "wine docs", "what temperature for red burgundy"), None),
    "status": (("status",), None),
    "lint": (("lint",), None),
    "inbox_list": (("inbox", "list"), "alice"),
    "ghost_list": (("ghost", "list"), None),
    "index_noop": (("index",), None),
    "trash_list": (("trash", "list"), "alice"),
    "fix_names_dry": (("fix-names", "--dry-run"), None),
}


@pytest.mark.parametrize("name", list(READS))
def test_json_of_read_commands(golden: Cli, name: str) -> None:
    argv, ghost = READS[name]
    res = golden(*argv, ghost=ghost)
    assert res.exit_code in (0, 1, 3, 5), res.stderr
    doc = {"exit": res.exit_code, "stdout": _normalize(json.loads(res.stdout), str(golden.vault))}
    _check(f"json/{name}.json", json.dumps(doc, ensure_ascii=False, indent=1) + "\n")


HUMAN = ["get_title", "search_hybrid", "search_explain", "query_text", "status", "lint", "inbox_list", "reference"]


@pytest.mark.parametrize("mode", ["pipe", "terminal"])
@pytest.mark.parametrize("name", HUMAN)
def test_human_transcripts(golden: Cli, name: str, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    argv, ghost = READS[name]
    if mode == "terminal":  # a terminal without colours: the table layout, no escapes
        monkeypatch.setenv("FORCE_COLOR", "1")
        monkeypatch.setenv("TERM", "dumb")
    res = golden(*argv, ghost=ghost, json_=False)
    vault = str(golden.vault)
    text = f"$ vaultmem {' '.join(argv)}\n[exit {res.exit_code}]\n{res.stdout}[stderr]\n{res.stderr}"
    text = re.sub(r"\d+(\.\d+)? ms", "<ms> ms", text.replace(vault, "<VAULT>"))
    text = re.sub(r"pid \d+", "pid <PID>", text)
    _check(f"human/{name}.{mode}.txt", text)


# Writes, in order, on a copy of the vault: each output (new ids and times normalised).
WRITES: list[tuple[str, tuple[str, ...], str | None, str | None]] = [
    ("note_create", ("note", "create", "--title", "Wine: basics", "--type", "fact", "--scope", "shared",
                     "--tag", "wine", "--body", "See [[Burgundy wine]]."), "alice", None),
    ("note_update", ("note", "update", "Chablis", "--append", "Grand cru slopes.", "--expect-version", "1"), None, None),
    ("note_update_stale", ("note", "update", "Chablis", "--append", "x", "--expect-version", "1"), None, None),
    ("note_validate", ("note", "validate", "Chablis", "--by", "alice/gpt-x", "--trust", "0.95"), "alice", None),
    ("note_comment", ("note", "comment", "Chablis", "--text", "Checked.", "--model", "gpt-x"), "alice", None),
    ("capture", ("capture", "remember the decanter"), "alice", None),
    ("promote", ("inbox", "promote", "Raw thought", "--title", "Decanting", "--type", "observation",
                 "--scope", "private"), "alice", None),
    ("write", ("write", "-"), "alice",
     '[{"type":"episodic","content":"Opened a 2019 Chablis","ttl_days":30},{"type":"bogus","content":"x"}]'),
    ("note_move", ("note", "move", "Tasting notes", "Tasting journal"), None, None),
    ("note_delete", ("note", "delete", "Chablis"), None, None),
    ("trash_restore", ("trash", "restore", B), None, None),
    ("ghost_add", ("ghost", "add", "carol"), None, None),
    ("lint_after", ("lint",), None, None),
]  # fmt: skip


def test_json_of_write_commands(golden: Cli, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "vault"
    shutil.copytree(golden.vault, root, symlinks=True)
    cli = Cli(root)
    known: dict[str, str] = {}
    for name, argv, ghost, stdin in WRITES:
        res = cli(*argv, ghost=ghost, input=stdin)
        text = json.dumps(_normalize(json.loads(res.stdout), str(root)), ensure_ascii=False, indent=1)

        def new_id(m: re.Match[str]) -> str:
            return known.setdefault(m.group(0), f"<NEW_ID_{len(known) + 1}>")

        text = re.sub(r"\b01(?!JG0)[0-9A-HJKMNP-TV-Z]{24}\b", new_id, text)
        text = re.sub(r"\.trash/\d{8}T\d{6}\d*Z/", ".trash/<STAMP>/", text)
        _check(f"writes/{name}.json", json.dumps({"exit": res.exit_code}) + "\n" + text + "\n")
