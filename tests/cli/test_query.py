"""Issue 4, acceptance 7: `query` (QueryMemory, seed 004) — the QueryResult shape,
--min-relevance, --limit, --type, --memory-type, --since/--until, --regex (an invalid pattern
exits 5), excerpts of at most 500 characters, and it works with no index at all."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration._vaults import note

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def qvault(empty_vault: Path) -> Path:
    root = empty_vault
    note(root, "shared/kiln.md", "# Kiln\n\nFiring pottery in a kiln: glaze, bisque, kiln temperature.\n",
         title="Kiln firing", type="skill", tags=["pottery"], created="2026-03-01T10:00:00Z", updated="2026-03-02T10:00:00Z",
         trust_score=0.8, custom_key="kept")  # fmt: skip
    note(root, "shared/glaze.md", "# Glaze\n\nMixing a glaze recipe. Glaze glaze glaze.\n",
         title="Glaze recipes", type="fact", created="2025-05-01T00:00:00Z")  # fmt: skip
    note(root, "shared/wheel.md", "# Wheel\n\nThrowing pots on the wheel; no firing here.\n",
         title="Wheel throwing", type="note", created="2026-06-01T00:00:00Z")  # fmt: skip
    note(root, "diary/alice/2026-07-01.md", "Fired the kiln today, cone 6 glaze came out well.\n",
         title="Kiln day", type="episode", created="2026-07-01T18:00:00Z")  # fmt: skip
    note(root, "shared/long.md", "Long. " + "filler words about nothing in particular " * 40
         + "the rare kiln mention sits here " + "more filler text follows after it " * 40 + "\n",
         title="Long note", type="note", created="2026-01-01T00:00:00Z")  # fmt: skip
    note(root, "shared/expired.md", "Old kiln advice.\n", title="Expired kiln", type="fact",
         created="2024-01-01T00:00:00Z", expires="2025-01-01T00:00:00Z")  # fmt: skip
    return root


@pytest.fixture
def qcli(qvault: Path) -> Cli:
    return Cli(qvault)


def test_query_result_shape(qcli: Cli) -> None:
    data = qcli.ok("query", "kiln glaze", "--min-relevance", "0")
    assert {"matches", "query_summary", "total_searched", "search_time_ms"} <= set(data)
    assert isinstance(data["query_summary"], str) and data["query_summary"]
    assert data["total_searched"] == 4  # expired left out; alice's diary invisible without a ghost
    assert isinstance(data["search_time_ms"], (int, float)) and data["search_time_ms"] >= 0
    assert data["matches"]
    for m in data["matches"]:
        assert {"path", "relevance", "type", "excerpt", "metadata"} <= set(m)
        assert 0.0 <= m["relevance"] <= 1.0
        assert len(m["excerpt"]) <= 500
        assert isinstance(m["metadata"], dict)
    rel = [m["relevance"] for m in data["matches"]]
    assert rel == sorted(rel, reverse=True)
    kiln = next(m for m in data["matches"] if m["path"] == "shared/kiln.md")
    assert kiln["type"] == "skill"
    assert kiln["metadata"]["title"] == "Kiln firing" and kiln["metadata"]["custom_key"] == "kept"
    assert kiln["metadata"]["tags"] == ["pottery"]
    # both keywords, several hits: the best match
    assert data["matches"][0]["path"] in ("shared/kiln.md", "shared/glaze.md")


def test_excerpt_is_around_the_match_and_at_most_500_chars(qcli: Cli) -> None:
    data = qcli.ok("query", "rare kiln mention", "--min-relevance", "0")
    long = next(m for m in data["matches"] if m["path"] == "shared/long.md")
    assert len(long["excerpt"]) <= 500
    assert "rare kiln mention" in long["excerpt"]


def test_min_relevance_and_limit(qcli: Cli) -> None:
    everything = qcli.ok("query", "kiln glaze", "--min-relevance", "0")["matches"]
    assert len(everything) >= 3
    cut = everything[1]["relevance"]
    above = qcli.ok("query", "kiln glaze", "--min-relevance", str(cut))["matches"]
    assert above and all(m["relevance"] >= cut for m in above)
    assert [m["path"] for m in above] == [m["path"] for m in everything if m["relevance"] >= cut]
    assert qcli.ok("query", "kiln glaze", "--min-relevance", "1")["matches"] == []
    limited = qcli.ok("query", "kiln glaze", "--min-relevance", "0", "--limit", "2")
    assert [m["path"] for m in limited["matches"]] == [m["path"] for m in everything[:2]]
    for bad in (("--min-relevance", "1.5"), ("--min-relevance", "-0.1"), ("--limit", "0")):
        res = qcli("query", "kiln", *bad)
        assert res.exit_code == 5, bad


def test_type_and_memory_type(qcli: Cli) -> None:
    def paths(*args: str, ghost: str | None = None) -> set[str]:
        return {
            m["path"] for m in qcli.ok("query", "kiln glaze", "--min-relevance", "0", *args, ghost=ghost)["matches"]
        }

    assert paths("--type", "skill") == {"shared/kiln.md"}
    assert paths("--type", "skill", "--type", "fact") == {"shared/kiln.md", "shared/glaze.md"}
    assert paths("--memory-type", "episodic", ghost="alice") == {"diary/alice/2026-07-01.md"}
    assert paths("--memory-type", "procedural") == {"shared/kiln.md"}
    assert qcli("query", "kiln", "--memory-type", "nonsense").exit_code == 5


def _paths(qcli: Cli, *args: str) -> set[str]:
    found = qcli.ok("query", "kiln glaze firing", "--min-relevance", "0", *args, ghost="alice")["matches"]
    return {m["path"] for m in found}


def test_since_and_until_are_when_a_note_was_made(qcli: Cli) -> None:
    """As in `search` and `list` (issue 23: one meaning): the note's `created`."""
    assert _paths(qcli, "--since", "2026-06-01") == {"diary/alice/2026-07-01.md"} | ({"shared/wheel.md"} & _paths(qcli))
    assert "shared/glaze.md" in _paths(qcli, "--until", "2025-12-31")
    assert "shared/kiln.md" in _paths(qcli, "--until", "2026-03-01")  # made on 03-01 (changed on 03-02)
    assert "shared/kiln.md" not in _paths(qcli, "--until", "2026-02-28")
    assert _paths(qcli, "--since", "2026-03-01", "--until", "2026-03-31") == {"shared/kiln.md"}
    assert qcli("query", "kiln", "--since", "the day before").exit_code == 5
    # relative to now (vault/when.py): these notes were all made long before yesterday
    assert _paths(qcli, "--since", "yesterday") == set()
    assert "shared/kiln.md" in _paths(qcli, "--until", "1d")


def test_changed_since_and_until_count_the_file_too(qcli: Cli) -> None:
    """`--changed-*`: the `updated` field or, if later, the file — a hand edit counts."""
    kiln = qcli.vault / "shared" / "kiln.md"
    old = 1_700_000_000  # 2023: the file is older than its `updated` (2026-03-02)
    os.utime(kiln, (old, old))
    assert "shared/kiln.md" in _paths(qcli, "--changed-until", "2026-03-02")
    assert "shared/kiln.md" not in _paths(qcli, "--changed-until", "2026-03-01")
    assert "shared/kiln.md" not in _paths(qcli, "--changed-since", "yesterday")
    kiln.write_text(kiln.read_text() + "A person's line.\n")  # saved now, in an editor
    assert "shared/kiln.md" in _paths(qcli, "--changed-since", "yesterday")
    assert qcli("query", "kiln", "--changed-since", "soon").exit_code == 5


def test_expired_notes_need_include_expired(qcli: Cli) -> None:
    assert "shared/expired.md" not in [m["path"] for m in qcli.ok("query", "kiln", "--min-relevance", "0")["matches"]]
    with_expired = qcli.ok("query", "kiln", "--min-relevance", "0", "--include-expired")
    assert "shared/expired.md" in [m["path"] for m in with_expired["matches"]]


def test_regex(qcli: Cli) -> None:
    data = qcli.ok("query", r"cone\s+\d+", "--regex", "--min-relevance", "0", ghost="alice")
    assert [m["path"] for m in data["matches"]] == ["diary/alice/2026-07-01.md"]
    assert "cone 6" in data["matches"][0]["excerpt"]
    none = qcli.ok("query", r"^zzz+$", "--regex", "--min-relevance", "0")
    assert none["matches"] == [] and none["total_searched"] == 4
    # without --regex the same text is plain keywords, never a pattern
    assert qcli("query", "kiln (glaze", "--min-relevance", "0").exit_code == 0


@pytest.mark.parametrize("pattern", ["kiln (glaze", "[unclosed", "*star", "(?P<x", "a{2,1}"])
def test_invalid_regex_exits_5(qcli: Cli, pattern: str) -> None:
    res = qcli("query", pattern, "--regex")
    assert res.exit_code == 5
    assert res.data["error"]["code"] == "invalid_input" and "regular expression" in res.data["error"]["message"]
    plain = qcli("query", pattern, "--regex", json_=False)
    assert plain.exit_code == 5 and plain.stderr.startswith("vaultmem: error:") and "Traceback" not in plain.stderr


def test_empty_query_exits_5(qcli: Cli) -> None:
    assert qcli("query", "").exit_code == 5
    assert qcli("query", "  ", "--regex").exit_code == 5


CASE_NOTES = {
    "shared/kelvin.md": ("Absolute zero is 0 \u212aelvin.", "Scales"),  # the Kelvin sign matches k
    "shared/turkish.md": ("\u0130STANBUL and \u0131zmir.", "Cities"),  # İ matches i; ı matches i
    "shared/longs.md": ("A \u017fhock wave.", "Old print"),  # long s matches s
    "shared/greek.md": ("\u039f\u0394\u039f\u03a3 \u03b2\u03b9\u03b2\u03bb\u03af\u03bf.", "Road"),
    "shared/cyrillic.md": ("\u0410\u0420\u0425\u0418\u0412 \u0444\u0430\u0439\u043b\u043e\u0432.", "Archive"),
    "shared/plain.md": ("Kelvin, Istanbul, shock, plain ASCII.", "Plain"),
    "shared/accented.md": ("Caf\u00e9 au lait; heat.", "Caf\u00e9"),
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kelvin", {"shared/kelvin.md", "shared/plain.md"}),
        ("istanbul", {"shared/turkish.md", "shared/plain.md"}),
        ("izmir", {"shared/turkish.md"}),
        ("shock", {"shared/longs.md", "shared/plain.md"}),
        ("\u03bf\u03b4\u03bf\u03c3", {"shared/greek.md"}),  # οδοσ against ΟΔΟΣ
        ("\u0430\u0440\u0445\u0438\u0432", {"shared/cyrillic.md"}),  # архив against АРХИВ
        ("caf\u00e9", {"shared/accented.md"}),
        ("caf\u00e9 heat", {"shared/accented.md"}),
    ],
)
def test_keywords_match_in_any_case_re_allows(empty_vault: Path, text: str, expected: set[str]) -> None:
    """Letters outside ASCII that re.IGNORECASE matches with ASCII ones (K, İ, ı, ſ), and
    letter case outside ASCII: a note is found whether or not its bytes are ASCII."""
    for path, (body, title) in CASE_NOTES.items():
        note(empty_vault, path, body + "\n", title=title, type="note", created="2026-01-01T00:00:00Z")
    data = Cli(empty_vault).ok("query", text, "--min-relevance", "0", "--limit", "20")
    assert {m["path"] for m in data["matches"]} == expected


def test_works_with_no_index_at_all(qvault: Path, qcli: Cli) -> None:
    assert not (qvault / ".vaultmem").exists()
    data = qcli.ok("query", "kiln", "--min-relevance", "0")
    assert "shared/kiln.md" in [m["path"] for m in data["matches"]]
    # and after the derived state is deleted again, with a note added meanwhile
    shutil.rmtree(qvault / ".vaultmem", ignore_errors=True)
    note(qvault, "shared/new.md", "A brand new kiln log.\n", title="New kiln log")
    data = qcli.ok("query", "kiln log", "--min-relevance", "0")
    assert data["matches"][0]["path"] == "shared/new.md"


def test_query_needs_neither_whoosh_chroma_nor_a_model(qvault: Path) -> None:
    """In a fresh process: `query` answers without importing the heavy index libraries."""
    code = (
        "import contextlib, io, json, sys\n"
        "from vaultmem.cli.main import app\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    rc = app(['query', 'kiln', '--vault', sys.argv[1], '--json'], standalone_mode=False)\n"
        "heavy = sorted(m for m in ('chromadb', 'whoosh', 'torch', 'sentence_transformers', 'networkx') if m in sys.modules)\n"
        "print(json.dumps({'rc': rc, 'heavy': heavy, 'out': json.loads(buf.getvalue())}))\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("VAULTMEM_") or k in ("VAULTMEM_CACHE_DIR", "VAULTMEM_NO_AUTOSTART")
    }
    res = subprocess.run(
        [sys.executable, "-c", code, str(qvault)], capture_output=True, text=True, env=env, cwd=REPO, timeout=120
    )
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert got["rc"] == 0 and got["heavy"] == []
    assert got["out"]["matches"]


def test_human_output(qcli: Cli) -> None:
    res = qcli("query", "kiln", json_=False)
    assert res.exit_code == 0
    assert "Kiln firing" in res.stdout and "shared/kiln.md" in res.stdout
    with pytest.raises(json.JSONDecodeError):
        json.loads(res.stdout)


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("C++", ["shared/code.md"]),  # its word alone, `c`, matched every word starting with c
        ("C#", ["shared/code.md"]),
        ("🍣", ["shared/code.md"]),  # no word at all: matched nothing, silently
        ("¿¿??", []),
    ],
)
def test_a_query_of_symbols_is_matched_as_written(qvault: Path, query: str, found: list[str]) -> None:
    note(qvault, "shared/code.md", "Templates in C++ and events in C#; 🍣 on Fridays.\n", title="Code", type="note")
    data = Cli(qvault).ok("query", query)
    assert [m["path"] for m in data["matches"]] == found
