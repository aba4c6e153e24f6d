"""Issue 4, acceptance 2: every filter of SPEC §5, applied inside both retrievers. Each case
runs in bm25 mode (Whoosh filters), vector mode (Chroma `where` filters) and hybrid; the
expected notes are computed from the table below, not from vaultmem."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests._embedders import HashEmbedder
from tests.conftest import Cli
from tests.integration._vaults import make_vault, note, paths_of

WORD = "lighthouse"

# path -> front matter (every note mentions WORD, so a query for it matches them all)
NOTES: dict[str, dict[str, Any]] = {
    "shared/f1.md": dict(type="fact", tags=["ops", "linux"], trust_score=0.9, confidence=0.8, importance=0.7, created="2026-01-10T09:00:00Z"),
    "shared/f2.md": dict(type="decision", tags=["ops"], trust_score=0.3, confidence=0.2, importance=0.9, created="2026-03-05T12:00:00Z"),
    "shared/f3.md": dict(type="skill", tags=["linux", "Python"], created="2025-12-31T23:00:00Z"),
    "shared/old-fact.md": dict(type="fact", trust_score=0.6, confidence=0.6, importance=0.1, created="2025-06-01T00:00:00Z",
                               expires="2026-01-01T00:00:00Z"),
    "shared/later.md": dict(type="fact", tags=["ops"], trust_score=0.7, confidence=0.9, importance=0.4, created="2026-02-28T23:59:00Z",
                            expires="2099-01-01T00:00:00Z"),
    "diary/alice/2026-02-01.md": dict(type="episode", trust_score=0.8, created="2026-02-01T08:00:00Z"),
    "diary/bob/2026-02-02.md": dict(type="episode", trust_score=0.8, created="2026-02-02T08:00:00Z"),
    "private/alice/pref.md": dict(type="preference", tags=["linux"], trust_score=1.0, confidence=1.0, importance=1.0, created="2026-01-20T00:00:00Z"),
    "project/apollo/p1.md": dict(type="pattern", tags=["ops"], trust_score=0.5, created="2026-01-15T00:00:00Z"),
    "project/zeus/z1.md": dict(type="pattern", tags=["ops"], trust_score=0.5, created="2026-01-16T00:00:00Z"),
    "inbox/shared/c1.md": dict(type="capture", created="2026-01-05T00:00:00Z"),
}  # fmt: skip
PROJECTS = {"apollo": None, "zeus": ["bob"]}
NOW = "2026-11-21"


def visible_to(path: str, ghost: str | None) -> bool:
    top, *rest = path.split("/")
    if top in ("shared", "inbox") and rest[0] != "alice" and rest[0] != "bob":
        return True
    if top == "project":
        members = PROJECTS[rest[0]]
        return ghost is not None and (members is None or ghost in members)
    return ghost == rest[0]


def unit(fm: dict[str, Any], key: str) -> float:
    return float(fm.get(key, 0.5))


@pytest.fixture(scope="module")
def fvault(tmp_path_factory: pytest.TempPathFactory, module_hash: HashEmbedder) -> Path:
    root = make_vault(tmp_path_factory.mktemp("filters") / "v", backend="auto", projects=PROJECTS)
    for i, (rel, fm) in enumerate(NOTES.items()):
        title = rel.rsplit("/", 1)[-1][:-3].replace("-", " ").title()
        note(root, rel, f"# {title}\n\nThe {WORD} keeper's log, entry {i}: storms and ships.\n", title=title, **fm)
    report = Cli(root).ok("index")
    assert report["added"] == len(NOTES) and report["errors"] == []
    return root


Pred = Callable[[str, dict[str, Any]], bool]
CASES: dict[str, tuple[list[str], Pred]] = {
    "no filter": ([], lambda p, fm: True),
    "tag": (["--tag", "ops"], lambda p, fm: "ops" in fm.get("tags", [])),
    "tags all": (["--tag", "ops", "--tag", "linux"], lambda p, fm: {"ops", "linux"} <= set(fm.get("tags", []))),
    "tag any case": (["--tag", "PYTHON"], lambda p, fm: "Python" in fm.get("tags", [])),
    "tag with hash": (["--tag", "#linux"], lambda p, fm: "linux" in fm.get("tags", [])),
    "type": (["--type", "fact"], lambda p, fm: fm["type"] == "fact"),
    "types any": (["--type", "fact", "--type", "decision"], lambda p, fm: fm["type"] in ("fact", "decision")),
    "memory type": (["--memory-type", "episodic"], lambda p, fm: fm["type"] in ("episode", "observation")),
    "memory type procedural": (["--memory-type", "procedural"], lambda p, fm: fm["type"] in ("skill", "pattern")),
    "memory type and type": (["--memory-type", "procedural", "--type", "skill"], lambda p, fm: fm["type"] == "skill"),
    "project": (["--project", "apollo"], lambda p, fm: p.startswith("project/apollo/")),
    "project closed": (["--project", "zeus"], lambda p, fm: p.startswith("project/zeus/")),
    "since": (["--since", "2026-01-15"], lambda p, fm: fm["created"] >= "2026-01-15"),
    "until": (["--until", "2026-01-10"], lambda p, fm: fm["created"] < "2026-01-11"),
    "since until": (["--since", "2026-01-10", "--until", "2026-02-28"], lambda p, fm: "2026-01-10" <= fm["created"] < "2026-03-01"),
    "since time": (["--since", "2026-01-10T10:00:00Z"], lambda p, fm: fm["created"] >= "2026-01-10T10"),
    "min trust": (["--min-trust", "0.6"], lambda p, fm: unit(fm, "trust_score") >= 0.6),
    "min trust neutral": (["--min-trust", "0.5"], lambda p, fm: unit(fm, "trust_score") >= 0.5),
    "min confidence": (["--min-confidence", "0.7"], lambda p, fm: unit(fm, "confidence") >= 0.7),
    "min importance": (["--min-importance", "0.8"], lambda p, fm: unit(fm, "importance") >= 0.8),
    "scope shared": (["--scope", "shared"], lambda p, fm: p.startswith("shared/")),
    "scope private": (["--scope", "private"], lambda p, fm: p.startswith("private/")),
    "combined": (["--tag", "ops", "--type", "fact", "--min-trust", "0.6"],
                 lambda p, fm: "ops" in fm.get("tags", []) and fm["type"] == "fact" and unit(fm, "trust_score") >= 0.6),
    "include expired": (["--include-expired", "--type", "fact"], lambda p, fm: fm["type"] == "fact"),
}  # fmt: skip


def expected(case: str, ghost: str | None) -> set[str]:
    args, pred = CASES[case]
    include_expired = "--include-expired" in args
    return {
        p for p, fm in NOTES.items()
        if visible_to(p, ghost) and pred(p, fm) and (include_expired or fm.get("expires", "9999") > NOW)
    }  # fmt: skip


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
@pytest.mark.parametrize("case", list(CASES))
def test_filter(fvault: Path, case: str, mode: str) -> None:
    for ghost in ("alice", "bob", None):
        args = [WORD, "--mode", mode, "--limit", "50", "--graph-depth", "0", *CASES[case][0]]
        data = Cli(fvault).ok("search", *args, ghost=ghost)
        got = paths_of(data)
        assert len(got) == len(set(got))
        assert set(got) == expected(case, ghost), (case, mode, ghost)
        assert data["mode"] == mode


def test_expired_notes_are_left_out_by_default(fvault: Path) -> None:
    cli = Cli(fvault)
    for mode in ("bm25", "vector", "hybrid"):
        assert "shared/old-fact.md" not in paths_of(cli.ok("search", WORD, "--mode", mode, "--limit", "50"))
        assert "shared/old-fact.md" in paths_of(
            cli.ok("search", WORD, "--mode", mode, "--limit", "50", "--include-expired")
        )
    # a note expiring in the future is there
    assert "shared/later.md" in paths_of(cli.ok("search", WORD, "--limit", "50"))


@pytest.mark.parametrize(
    "args",
    [
        ["--memory-type", "nonsense"],
        ["--since", "last tuesday"],
        ["--until", "2026-13-45"],
        ["--min-trust", "1.5"],
        ["--min-confidence", "-0.1"],
        ["--min-importance", "2"],
        ["--scope", "everywhere"],
        ["--limit", "0"],
        ["--graph-depth", "9"],
        ["--budget-tokens", "0"],
    ],
)
def test_invalid_filter_values_exit_5(fvault: Path, args: list[str]) -> None:
    res = Cli(fvault)("search", WORD, *args, ghost="alice")
    assert res.exit_code == 5, res.stdout
    assert res.data["error"]["code"] == "invalid_input"


def test_an_unknown_mode_is_a_usage_error(fvault: Path) -> None:
    """Bad flag values are usage errors (exit 2), as the README's table says."""
    res = Cli(fvault)("search", WORD, "--mode", "telepathy", ghost="alice")
    assert res.exit_code == 2 and res.data["error"]["code"] == "usage"
