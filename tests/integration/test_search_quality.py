"""Search quality with the real all-MiniLM-L6-v2 (loaded once per test session): questions
worded unlike their note are found by the dense retriever and by hybrid search where BM25
finds nothing; exact identifiers are found by BM25 and by hybrid; hybrid gets every case of
this small table right. Filters, snippets and reference search run on real vectors too.

A smoke test of quality on a handful of notes, not the benchmark (tools/evalkit is)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note, paths_of

pytestmark = pytest.mark.slow

NOTES = {
    "shared/kettle.md": (
        "Descaling a kettle",
        "Boil a mix of water and white vinegar, leave it for an hour, rinse twice.",
        ["home"],
    ),
    "shared/bike.md": (
        "Fixing a flat tyre",
        "Lever the tyre off the rim, find the puncture, patch the inner tube.",
        ["outdoors"],
    ),
    "shared/sourdough.md": (
        "Sourdough starter",
        "Feed the starter flour and water daily; it is ready when it doubles.",
        ["home", "food"],
    ),
    "shared/ssh.md": ("SSH keys", "Generate an ed25519 key pair and copy the public key to the server.", ["computers"]),
    "shared/plants.md": (
        "Watering houseplants",
        "Water when the top soil is dry; overwatering rots the roots.",
        ["home"],
    ),
    "shared/taxes.md": ("Filing taxes", "Collect receipts and income statements before the April deadline.", ["admin"]),
    "shared/lockfile.md": (
        "CI install failure",
        "If CI fails with ERR_PNPM_OUTDATED_LOCKFILE, run pnpm install and commit the lockfile.",
        ["computers"],
    ),
    "shared/knots.md": (
        "Bowline knot",
        "Make a small loop, pass the end up through it, round the standing part and back down.",
        ["outdoors"],
    ),
}
# (query, the note that answers it, whether BM25 can see it at all)
PARAPHRASES = [
    ("getting rid of chalky deposits inside an electric jug", "shared/kettle.md"),
    ("mending a leaky bicycle wheel", "shared/bike.md"),
    ("keeping wild yeast alive for baking bread", "shared/sourdough.md"),
    ("logging in to a remote box without typing a password", "shared/ssh.md"),
]
EXACT = [
    ("ERR_PNPM_OUTDATED_LOCKFILE", "shared/lockfile.md"),
    ("ed25519", "shared/ssh.md"),
    ("bowline", "shared/knots.md"),
]


def _fill(root: Path) -> Cli:
    for rel, (title, body, tags) in NOTES.items():
        note(root, rel, f"# {title}\n\n{body}\n", title=title, tags=tags)
    cli = Cli(root)
    report = cli.ok("index")
    assert report["vectors"].startswith("sentence-transformers|all-MiniLM-L6-v2|384|")
    assert report["embedded_notes"] == len(NOTES)
    return cli


@pytest.fixture(scope="module")
def qcli(tmp_path_factory: pytest.TempPathFactory, real_model_available: None) -> Cli:
    """Indexed once for the read-only tests of this module."""
    return _fill(make_vault(tmp_path_factory.mktemp("quality") / "v", backend="auto"))


def _top(cli: Cli, query: str, mode: str, *args: str) -> str | None:
    """The best result, ranking only: the default relevance cut is tested on its own below."""
    got = paths_of(cli.ok("search", query, "--mode", mode, "--limit", "5", "--min-score", "0", *args))
    return got[0] if got else None


def test_hybrid_gets_every_case_and_beats_each_single_retriever(qcli: Cli) -> None:
    table = {mode: 0 for mode in ("bm25", "vector", "hybrid")}
    for query, want in PARAPHRASES + EXACT:
        for mode in table:
            table[mode] += _top(qcli, query, mode) == want
    total = len(PARAPHRASES) + len(EXACT)
    assert table["hybrid"] == total, table
    assert table["bm25"] < total and table["vector"] <= total, table


def test_paraphrases_need_the_dense_retriever(qcli: Cli) -> None:
    for query, want in PARAPHRASES:
        assert _top(qcli, query, "vector") == want, query
        assert _top(qcli, query, "hybrid") == want, query
        assert _top(qcli, query, "bm25") != want, f"{query!r} was meant to share no word with its note"


def test_exact_identifiers_are_found_lexically(qcli: Cli) -> None:
    for query, want in EXACT:
        assert _top(qcli, query, "bm25") == want, query
        assert _top(qcli, query, "hybrid") == want, query


def test_a_dense_only_hit_has_a_snippet_from_its_note(qcli: Cli) -> None:
    data = qcli.ok("search", "mending a leaky bicycle wheel", "--explain", "--min-score", "0")
    top = data["results"][0]
    assert top["summary"]["path"] == "shared/bike.md"
    assert top["explain"]["bm25"] is None and top["explain"]["vector"]["rank"] == 1
    assert "puncture" in top["summary"]["snippet"]


def test_filters_apply_to_real_vectors(qcli: Cli) -> None:
    # the best answer is filtered out; only notes with the tag remain, still ranked by meaning
    got = paths_of(
        qcli.ok(
            "search",
            "getting rid of chalky deposits inside an electric jug",
            "--mode",
            "vector",
            "--tag",
            "outdoors",
            "--min-score",
            "0",
        )
    )
    assert set(got) == {"shared/bike.md", "shared/knots.md"}
    got = paths_of(
        qcli.ok(
            "search",
            "keeping wild yeast alive for baking bread",
            "--mode",
            "vector",
            "--tag",
            "home",
            "--tag",
            "food",
            "--min-score",
            "0",
        )
    )
    assert got == ["shared/sourdough.md"]


OFF_TOPIC = ["who won the football world cup in 1998", "a recipe for banana bread", "the capital of Mongolia"]


def test_the_relevance_cut_leaves_off_topic_questions_empty(qcli: Cli) -> None:
    """The relevance score means the same across queries: the cut (RECOMMENDED_MIN_SCORE)
    leaves out what does not match, so an off-topic question returns no results rather
    than the least bad notes; without it they come back with low scores. In this 8-note
    vault the default waits (CALIBRATED_MIN_NOTES): an exact lookup is still answered."""
    from vaultmem.search.fusion import RECOMMENDED_MIN_SCORE as CUT

    for query in OFF_TOPIC:
        assert qcli.ok("search", query, "--min-score", str(CUT))["results"] == [], query
        kept = qcli.ok("search", query, "--min-score", "0")["results"]
        assert kept and all(0.0 <= r["summary"]["score"] < CUT for r in kept)
    for query, want in PARAPHRASES[:2] + EXACT:
        data = qcli.ok("search", query)
        assert paths_of(data)[:1] == [want] and all(0.0 <= r["summary"]["score"] <= 1.0 for r in data["results"])


SUBJECTS = ["glazing pottery", "tuning a violin", "pruning roses", "sharpening chisels", "brewing green tea",
            "repotting orchids", "waxing skis", "restringing a guitar", "grouting tiles", "caning chairs",
            "binding books", "darning socks", "oiling hinges", "bleeding radiators", "seasoning cast iron",
            "mulching beds", "stropping razors", "wiring a plug", "laying turf", "priming walls",
            "felting wool", "splicing rope"]  # fmt: skip
ASPECTS = ["tools you need for {s}", "common mistakes when {s}", "how long {s} takes",
           "safety advice for {s}", "a checklist for {s}"]  # fmt: skip


def test_the_default_cut_in_a_vault_large_enough(tmp_path: Path, real_model_available: None) -> None:
    """With at least CALIBRATED_MIN_NOTES notes the cut is on by default: off-topic
    questions return nothing, questions the vault answers keep their note, and
    `--min-score 0` turns the cut off."""
    from vaultmem.search.fusion import CALIBRATED_MIN_NOTES

    root = make_vault(tmp_path / "v", backend="auto")
    for i, (subject, aspect) in enumerate((s, a) for s in SUBJECTS for a in ASPECTS):
        title = aspect.format(s=subject).capitalize()
        note(root, f"shared/hobby/{i:03d}.md", f"# {title}\n\nNotes on {aspect.format(s=subject)}.\n", title=title)
    for rel, (title, body, tags) in NOTES.items():
        note(root, rel, f"# {title}\n\n{body}\n", title=title, tags=tags)
    cli = Cli(root)
    assert cli.ok("index")["embedded_notes"] == len(SUBJECTS) * len(ASPECTS) + len(NOTES) >= CALIBRATED_MIN_NOTES
    from vaultmem.search.fusion import CUT_EVERYTHING

    for query in OFF_TOPIC:
        cut = cli("search", query)
        assert cut.exit_code == 0 and cut.data["results"] == [], query
        # said, for an agent that asked in other words than its note's to look further
        assert cut.data["warnings"] == [CUT_EVERYTHING] and CUT_EVERYTHING in cut.stderr
        uncut = cli.ok("search", query, "--min-score", "0")
        assert uncut["results"] and CUT_EVERYTHING not in uncut.get("warnings", []), query
    for query, want in [*EXACT, ("how do I descale my kettle", "shared/kettle.md")]:
        found = cli.ok("search", query)
        assert paths_of(found)[:1] == [want] and CUT_EVERYTHING not in found.get("warnings", []), query
    # A question that clears the cut keeps its results down to CUT_FLOOR_SHARE of it
    # (fusion.cut_twice); a plain --min-score at the cut leaves those out.
    from vaultmem.search.fusion import CUT_FLOOR_SHARE
    from vaultmem.search.fusion import RECOMMENDED_MIN_SCORE as CUT

    query = "mistakes people make with plants"
    kept = cli.ok("search", query, "--limit", "20")["results"]
    plain = paths_of(cli.ok("search", query, "--limit", "20", "--min-score", str(CUT)))
    floor = paths_of(cli.ok("search", query, "--limit", "20", "--min-score", str(CUT * CUT_FLOOR_SHARE)))
    assert plain and set(plain) < set(floor) <= set(paths_of({"results": kept})), kept


def test_reference_search_with_real_vectors(model_vault: Path) -> None:
    qcli = _fill(model_vault)
    note(model_vault, "reference/howto.md", "Household and computer how-tos.\n", title="How-to collection", type="topic",
         summary="Practical how-tos", files=["shared/*.md"])  # fmt: skip
    data = qcli.ok("reference", "search", "how-to collection", "logging in to a remote box without typing a password")
    assert data["topic"]["path"] == "reference/howto.md" and data["mode"] == "hybrid"
    assert data["results"][0]["summary"]["path"] == "shared/ssh.md"
