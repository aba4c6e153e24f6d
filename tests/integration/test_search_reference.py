"""Issue 4, acceptance 8: `reference search TOPIC QUESTION` picks the best topic note, then
returns only files that topic lists (paths and globs inside the vault; docs and source code,
not only markdown), ranked, with the topic's summary. (Files the caller may not see: see
test_search_leak.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration._vaults import SUMMARY_KEYS, make_vault, note


def _build(root: Path) -> None:
    note(root, "reference/python.md", "Where the Python build and test tooling is documented.\n",
         title="Python tooling", type="topic", summary="How we build and test the Python code",
         files=["src/*.py", "docs/python/*.md"])  # fmt: skip
    note(root, "reference/garden.md", "Roses, tomatoes and the compost heap.\n\nSecond paragraph.\n",
         title="Garden care", type="topic",
         files=["docs/garden/**/*.md", "../outside.md", "/etc/hostname", "docs/garden/missing.md", "docs/../../escape.md"])  # fmt: skip
    (root.parent / "outside.md").write_text("Outside the vault: pytest roses tomatoes.\n")
    (root / "src").mkdir()
    (root / "src/build.py").write_text(
        '"""Build helpers."""\n\n\ndef build_wheel(out_dir):\n    """Build the wheel into out_dir with setuptools."""\n'
        "    return run(['python', '-m', 'build', '--wheel', out_dir])\n"
    )
    (root / "src/runner.py").write_text(
        "# Test runner wrapper.\n\ndef run_tests(stop_first=False):\n    args = ['pytest']\n"
        "    if stop_first:\n        args.append('-x')  # stop at the first failing test\n    return args\n"
    )
    note(root, "docs/python/testing.md", "# Testing\n\nRun pytest with -x to stop at the first failure. "
         "Use -k to select tests by name.\n", title="Testing guide")  # fmt: skip
    note(root, "docs/python/style.md", "# Style\n\nFormat code with ruff; keep functions small.\n", title="Style guide")
    note(root, "docs/garden/roses.md", "# Roses\n\nPrune roses in late winter, above an outward bud.\n", title="Roses")
    note(root, "docs/garden/veg/tomatoes.md", "# Tomatoes\n\nPinch out tomato side shoots; water at the base.\n",
         title="Tomatoes")  # fmt: skip
    note(
        root, "shared/unrelated.md", "Pytest first failure stop: a note no topic lists.\n", title="Unlisted pytest note"
    )


@pytest.fixture(scope="module")
def rcli(tmp_path_factory: pytest.TempPathFactory, module_hash: object) -> Cli:
    root = make_vault(tmp_path_factory.mktemp("ref") / "ref", backend="auto")
    _build(root)
    return Cli(root)


@pytest.fixture
def rcli_fresh(tmp_path: Path, hash_embedder: object) -> Cli:
    root = make_vault(tmp_path / "ref", backend="auto")
    _build(root)
    return Cli(root)


@pytest.fixture(scope="module")
def rcli_bm25(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    root = make_vault(tmp_path_factory.mktemp("refb") / "refb", backend="none")
    _build(root)
    return Cli(root)


PYTHON_FILES = {"src/build.py", "src/runner.py", "docs/python/testing.md", "docs/python/style.md"}
GARDEN_FILES = {"docs/garden/roses.md", "docs/garden/veg/tomatoes.md"}


def test_only_the_chosen_topics_files_ranked_with_its_summary(rcli: Cli) -> None:
    data = rcli.ok("reference", "search", "python tooling", "how do I stop pytest at the first failure")
    topic = data["topic"]
    assert topic["path"] == "reference/python.md" and topic["title"] == "Python tooling"
    assert topic["summary"] == "How we build and test the Python code"
    assert topic["files"] == len(PYTHON_FILES)
    paths = [r["summary"]["path"] for r in data["results"]]
    assert paths and set(paths) <= PYTHON_FILES
    assert paths[0] == "docs/python/testing.md"
    scores = [r["summary"]["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)
    for r in data["results"]:
        assert set(r["summary"]) >= SUMMARY_KEYS
    assert data["returned"] == len(data["results"]) and data["mode"] == "hybrid"


def test_source_code_is_searched(rcli: Cli) -> None:
    data = rcli.ok("reference", "search", "python", "build the wheel with setuptools")
    assert data["results"][0]["summary"]["path"] == "src/build.py"
    assert "wheel" in data["results"][0]["summary"]["snippet"]


def test_globs_stay_inside_the_vault(rcli: Cli) -> None:
    data = rcli.ok("reference", "search", "garden care", "pruning roses and pytest tomatoes", "--limit", "20")
    assert data["topic"]["path"] == "reference/garden.md"
    assert data["topic"]["files"] == len(GARDEN_FILES)
    assert {r["summary"]["path"] for r in data["results"]} == GARDEN_FILES
    assert data["results"][0]["summary"]["path"] == "docs/garden/roses.md"
    # no summary in the front matter: a passage of the topic's body stands in
    assert "Roses, tomatoes" in data["topic"]["summary"]
    assert "Outside the vault" not in str(data)


def test_unlisted_notes_never_appear(rcli: Cli) -> None:
    data = rcli.ok("reference", "search", "python tooling", "pytest first failure stop", "--limit", "50")
    assert "shared/unrelated.md" not in {r["summary"]["path"] for r in data["results"]}
    # while plain search does find it
    assert "shared/unrelated.md" in {
        r["summary"]["path"] for r in rcli.ok("search", "pytest first failure stop")["results"]
    }


def test_limit(rcli: Cli) -> None:
    data = rcli.ok("reference", "search", "python tooling", "pytest wheel ruff", "--limit", "1")
    assert len(data["results"]) == 1


def test_no_matching_topic_is_not_found(rcli_bm25: Cli) -> None:
    # (with vectors the nearest topic always exists; lexically nothing matches here)
    res = rcli_bm25("reference", "search", "quantum chromodynamics", "what is a gluon")
    assert res.exit_code == 3 and res.data["error"]["code"] == "not_found"


def test_without_embeddings_it_runs_bm25(rcli_bm25: Cli) -> None:
    data = rcli_bm25.ok("reference", "search", "python tooling", "stop pytest at the first failure")
    assert data["mode"] == "bm25"
    assert data["results"][0]["summary"]["path"] == "docs/python/testing.md"
    assert {r["summary"]["path"] for r in data["results"]} <= PYTHON_FILES


def test_an_edited_file_is_searched_fresh(rcli_fresh: Cli) -> None:
    rcli_fresh.ok("reference", "search", "python tooling", "ruff")
    (rcli_fresh.vault / "src/runner.py").write_text("# Now about coverage reports with pytest-cov.\n")
    data = rcli_fresh.ok("reference", "search", "python tooling", "coverage reports")
    assert data["results"][0]["summary"]["path"] == "src/runner.py"


def test_human_output(rcli: Cli) -> None:
    res = rcli("reference", "search", "python tooling", "stop pytest at the first failure", json_=False)
    assert res.exit_code == 0
    assert "Python tooling" in res.stdout and "docs/python/testing.md" in res.stdout


@pytest.mark.parametrize("name", ["Escape topic", "escape topic", "reference/escape.md", "Way out"])
def test_a_topic_named_exactly_is_the_one_searched(tmp_path: Path, name: str) -> None:
    """A topic named by its title, path or alias is that topic, however many notes share its
    words: a search alone missed "Escape topic" in a 150-note vault (its title counts in
    part, the default cut hid it)."""
    root = make_vault(tmp_path / "v", backend="none")
    for i in range(40):
        note(root, f"shared/escape {i}.md", f"Escape topic {i}: escape rooms, escape keys, topic {i}.\n",
             title=f"Escape topic {i}", type="topic", files=["docs/other.md"])  # fmt: skip
    note(root, "reference/escape.md", "Where to look.\n", title="Escape topic", type="topic",
         aliases=["Way out"], files=["docs/exits.md"])  # fmt: skip
    note(root, "docs/exits.md", "# Exits\n\nThe fire exit is behind the kitchen.\n", title="Exits")
    note(root, "docs/other.md", "# Other\n\nThe fire exit is not here.\n", title="Other")
    res = Cli(root).ok("reference", "search", name, "where is the fire exit")
    assert res["topic"]["path"] == "reference/escape.md"
    assert [r["summary"]["path"] for r in res["results"]] == ["docs/exits.md"]
