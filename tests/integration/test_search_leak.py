"""Issue 4, acceptance 4 — the leak test. Alice's private notes (one links to shared notes,
one near-duplicates a shared note, one is a topic), her diary, her inbox and a project only
she belongs to must never show for bob or for no ghost through any read path: search results,
snippets, neighbours, duplicates, `get`, `query` matches and `total_searched`, reference
search, or error text. Every output is searched for every secret string.

Alice herself sees all of it: the positive control that makes the negative meaningful.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import Cli, Result
from tests.integration._vaults import make_vault, note

SECRET_ID = "01JB4S3CR3T000000000000000"
SECRETS = [
    "marzipanelephant", "Zanzibar", "quokka", "topsecret", "ZQP", "private/alice", "diary/alice",
    "inbox/alice", "project/zeus", SECRET_ID, "zeuscodeword", "Hidden topic",
]  # fmt: skip
SHARED_COUNT = 5  # notes everyone sees


@pytest.fixture(scope="module")
def leak(tmp_path_factory: pytest.TempPathFactory, module_hash: object) -> Cli:
    root = make_vault(tmp_path_factory.mktemp("leak") / "leak", backend="auto", projects={"zeus": ["alice"]})
    note(
        root,
        "shared/guide.md",
        "# Shared guide\n\nHow the team deploys the lighthouse service.\n",
        title="Shared guide",
    )
    note(root, "shared/facts.md", "# Shared facts\n\nThe lighthouse service runs on port 8080. See [[Shared guide]].\n",
         title="Shared facts", tags=["ops"])  # fmt: skip
    note(root, "shared/twin.md", "The deployment checklist: build, test, tag, release, announce to the team.\n",
         title="Checklist")  # fmt: skip
    note(root, "reference/ops-topic.md", "Operations material.\n", title="Operations", type="topic",
         summary="Operations docs and notes", files=["shared/*.md", "private/alice/*.md", "docs/*", "docs/alice-link/*.md"])  # fmt: skip
    (root / "docs").mkdir()
    (root / "docs/runbook.txt").write_text("Runbook: restart the lighthouse service with systemctl.\n")
    note(
        root, "inbox/shared/cap.md", "A shared capture about the lighthouse.\n", title="Shared capture", type="capture"
    )
    # --- alice's secrets ---
    note(root, "private/alice/secret.md",
         "# Zanzibar\n\nThe quokka protocol passphrase is marzipanelephant. It relies on [[Shared guide]] "
         "and [[Shared facts]] for the lighthouse service.\n",
         id=SECRET_ID, title="Zanzibar Quokka Protocol", aliases=["ZQP"], tags=["topsecret", "ops"], type="fact")  # fmt: skip
    note(root, "private/alice/twin.md",
         "The deployment checklist: build, test, tag, release, announce to the team. quokka\n",
         title="Zanzibar checklist copy", trust_score=1.0)  # fmt: skip
    note(root, "private/alice/topic.md", "Quokka topic.\n", title="Hidden topic", type="topic",
         summary="Zanzibar quokka material", files=["private/alice/*.md"])  # fmt: skip
    note(root, "diary/alice/2026-11-20.md", "Zanzibar diary: the lighthouse quokka again, marzipanelephant.\n",
         title="Zanzibar diary", type="episode")  # fmt: skip
    note(root, "inbox/alice/c.md", "Zanzibar capture: quokka lighthouse.\n", title="Zanzibar capture", type="capture")
    note(root, "project/zeus/plan.md", "Zeus plan for the lighthouse, zeuscodeword quokka. [[Shared guide]]\n",
         title="Zanzibar zeus plan")  # fmt: skip
    # a shared-looking path that points into alice's folder: never followed
    (root / "shared/peek.md").symlink_to(root / "private/alice/secret.md")
    (root / "docs/alice-link").symlink_to(root / "private/alice", target_is_directory=True)
    cli = Cli(root)
    report = cli.ok("index")
    assert [(e["path"], e["code"]) for e in report["errors"]] == [("shared/peek.md", "symlink_crosses_scope")]
    return cli


def _clean(res: Result, echo: str | None = None) -> str:
    """Everything the command printed, minus the caller's own query echoed back."""
    text = res.stdout + res.stderr
    if echo:
        data = json.loads(res.stdout)
        for key in ("query", "query_summary", "question"):
            data.pop(key, None)
        if "error" in data:
            data["error"]["message"] = data["error"]["message"].replace(repr(echo), "'…'")
        text = json.dumps(data, ensure_ascii=False) + res.stderr
    return text


def _assert_clean(text: str, what: str) -> None:
    low = text.lower()
    found = [s for s in SECRETS if s.lower() in low]
    assert not found, f"{what} leaks {found}: {text[:600]}"


SEARCHES = [
    "lighthouse service",
    "deployment checklist",
    "shared guide",
    "zanzibar quokka marzipanelephant",
    "ZQP",
    "zeuscodeword",
]


EXTRAS = [
    ["--graph-depth", "3", "--explain"],
    ["--budget-tokens", "60"],
    ["--tag", "ops"],
    ["--project", "zeus"],
    ["--scope", "private"],
    ["--include-expired", "--limit", "200"],
]


@pytest.mark.parametrize("ghost", ["bob", None])
def test_search_never_shows_alices_notes(leak: Cli, ghost: str | None) -> None:
    runs = [(mode, q, []) for mode in ("bm25", "vector", "hybrid") for q in SEARCHES]
    runs += [("hybrid", q, extra) for q in SEARCHES[:3] for extra in EXTRAS]
    for mode, q, extra in runs:
        res = leak("search", q, "--mode", mode, *extra, ghost=ghost)
        assert res.exit_code == 0, res.stdout
        _assert_clean(_clean(res, echo=q), f"search {q!r} {mode} {extra} as {ghost}")
    plain = leak("search", "lighthouse service", json_=False, ghost=ghost)
    _assert_clean(plain.stdout + plain.stderr, "human search output")


@pytest.mark.parametrize("ghost", ["bob", None])
def test_duplicates_and_counts_do_not_reveal_a_hidden_twin(leak: Cli, ghost: str | None) -> None:
    data = leak.ok("search", "deployment checklist", "--mode", "bm25", ghost=ghost)
    assert data["results"][0]["summary"]["path"] == "shared/twin.md"
    assert "duplicates" not in data["results"][0] and "collapsed_duplicates" not in data
    # the shared note looks the same whether or not alice's twin exists
    assert data["returned"] == len(data["results"])


@pytest.mark.parametrize("ghost", ["bob", None])
def test_neighbours_of_shared_notes_hide_alices_links(leak: Cli, ghost: str | None) -> None:
    data = leak.ok("search", "shared guide", "--mode", "bm25", "--graph-depth", "3", ghost=ghost)
    guide = next(r for r in data["results"] if r["summary"]["path"] == "shared/guide.md")
    facts = leak.ok("get", "shared/facts.md", ghost=ghost)["note"]["id"]
    assert [n["id"] for n in guide["links_in"]] == [facts]
    doc = leak.ok("get", "Shared guide", ghost=ghost)
    assert [i["path"] for i in doc["links"]["in"]] == ["shared/facts.md"]
    _assert_clean(json.dumps(doc), "get Shared guide")


@pytest.mark.parametrize("ghost", ["bob", None])
def test_get_answers_hidden_exactly_like_missing(leak: Cli, ghost: str | None) -> None:
    for ref in (SECRET_ID, "private/alice/secret.md", "Zanzibar Quokka Protocol", "ZQP", "shared/peek.md",
                "diary/alice/2026-11-20.md", "Zanzibar zeus plan", "project/zeus/plan.md"):  # fmt: skip
        hidden = leak("get", ref, ghost=ghost)
        missing = leak("get", ref.replace("a", "4"), ghost=ghost)
        assert hidden.exit_code == missing.exit_code == 3, ref
        assert hidden.data["error"]["message"] == missing.data["error"]["message"].replace(ref.replace("a", "4"), ref)
        assert set(hidden.data["error"]) == set(missing.data["error"])
        _assert_clean(_clean(hidden, echo=ref), f"get {ref}")
        plain = leak("get", ref, ghost=ghost, json_=False)
        assert plain.stdout == "" and plain.stderr == f"vaultmem: error: no note matches {ref!r}\n"


@pytest.mark.parametrize("ghost", ["bob", None])
def test_query_never_matches_or_counts_alices_notes(leak: Cli, ghost: str | None) -> None:
    visible = SHARED_COUNT
    for q in ("lighthouse", "quokka", "marzipanelephant", "Zanzibar", "deployment checklist", "zeuscodeword"):
        for extra in ([], ["--min-relevance", "0"], ["--scope", "private"], ["--include-expired"]):
            res = leak("query", q, *extra, ghost=ghost)
            assert res.exit_code == 0, res.stdout
            _assert_clean(_clean(res, echo=q), f"query {q!r} {extra} as {ghost}")
            if not extra or extra == ["--min-relevance", "0"]:
                assert res.data["total_searched"] == visible, (q, res.data["total_searched"])
    regex = leak("query", "marzipan.*|quok+a", "--regex", "--min-relevance", "0", ghost=ghost)
    assert regex.data["matches"] == []
    _assert_clean(_clean(regex, echo="marzipan.*|quok+a"), "query --regex")


@pytest.mark.parametrize("ghost", ["bob", None])
def test_reference_search_never_returns_alices_files_or_topic(leak: Cli, ghost: str | None) -> None:
    res = leak("reference", "search", "operations", "lighthouse passphrase quokka", "--limit", "50", ghost=ghost)
    assert res.exit_code == 0, res.stdout
    data = res.data
    assert data["topic"]["path"] == "reference/ops-topic.md"
    paths = [r["summary"]["path"] for r in data["results"]]
    assert paths and all(not p.startswith("private/") for p in paths)
    # the topic's file count covers only what the caller may read
    _assert_clean(_clean(res, echo="lighthouse passphrase quokka"), "reference search results")
    assert data["topic"]["files"] == 4  # shared/*.md (3) + docs/runbook.txt
    _assert_clean(_clean(res, echo="lighthouse passphrase quokka"), "reference search")
    # alice's private topic is never chosen, not even when asked for by its own words
    for topic in ("Hidden topic", "zanzibar quokka"):
        res = leak("reference", "search", topic, "passphrase", ghost=ghost)
        assert res.exit_code in (0, 3)
        if res.exit_code == 0:
            assert res.data["topic"]["path"] == "reference/ops-topic.md"
        _assert_clean(_clean(res, echo=topic), f"reference search {topic!r}")


def test_alice_sees_her_own_notes(leak: Cli) -> None:
    """Positive control: the same commands do find alice's notes for alice."""
    found = leak.ok("search", "zanzibar quokka marzipanelephant", "--mode", "bm25", "--limit", "20", ghost="alice")
    paths = {r["summary"]["path"] for r in found["results"]}
    assert {"private/alice/secret.md", "diary/alice/2026-11-20.md", "project/zeus/plan.md"} <= paths
    secret = next(r for r in found["results"] if r["summary"]["path"] == "private/alice/secret.md")
    assert "marzipanelephant" in secret["summary"]["snippet"]
    assert leak.ok("get", "ZQP", ghost="alice")["note"]["id"] == SECRET_ID
    guide = leak.ok("get", "Shared guide", ghost="alice")
    assert "private/alice/secret.md" in [i["path"] for i in guide["links"]["in"]]
    q = leak.ok("query", "marzipanelephant", ghost="alice")
    assert {m["path"] for m in q["matches"]} == {"private/alice/secret.md", "diary/alice/2026-11-20.md"}
    ref = leak.ok("reference", "search", "operations", "quokka passphrase", ghost="alice")
    assert "private/alice/secret.md" in [r["summary"]["path"] for r in ref["results"]]


def _visible_counts(leak: Cli) -> dict[Any, int]:
    return {
        g: leak.ok("query", "lighthouse", "--min-relevance", "0", ghost=g)["total_searched"]
        for g in ("alice", "bob", None)
    }


def test_total_searched_counts_only_visible_notes(leak: Cli) -> None:
    counts = _visible_counts(leak)
    assert counts == {"alice": SHARED_COUNT + 6, "bob": SHARED_COUNT, None: SHARED_COUNT}
