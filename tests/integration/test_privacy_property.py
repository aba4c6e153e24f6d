"""Privacy as a property (issue 13, acceptance 2): for random vaults and random queries,
adding, editing or deleting notes bob cannot see changes nothing in bob's output of
`search` (bm25 and hybrid, `--explain` included), `get`, `query` and `reference search`:
scores, order, links and counts byte-identical apart from timing fields.

Hidden notes are drawn from the same small vocabulary and title pool as bob's notes, so
they share words (BM25 statistics), titles and aliases (link resolution) with what he sees,
and shared notes link to their titles. Dense search is covered by the fixed tests of
test_access; here the vault has no embeddings (hybrid falls back to BM25 + graph)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note

WORDS = ["harbour", "pilot", "tide", "breakwater", "anchor", "rope", "gull", "ledger", "lantern", "quay", "sail"]
TITLES = ["Harbour", "Pilot log", "Tide table", "Anchor", "Ledger", "Lantern"]
TIMING = {"search_time_ms", "took_ms", "seconds"}

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)
links = st.lists(st.sampled_from(TITLES), max_size=2)
a_note = st.fixed_dictionaries(
    {"title": st.sampled_from(TITLES), "body": text, "links": links, "alias": st.none() | st.sampled_from(TITLES)}
)


def _write(root: Path, rel: str, n: dict[str, Any], nid: str) -> None:
    body = n["body"] + "".join(f" See [[{t}]]." for t in n["links"])
    front: dict[str, Any] = {"id": nid, "title": n["title"], "created": "2026-01-01", "updated": "2026-01-02"}
    if n["alias"]:
        front["aliases"] = [n["alias"]]
    note(root, rel, body, **front)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _bob_sees(cli: Cli, visible_ids: list[str], queries: list[str]) -> str:
    out: list[Any] = []
    for q in queries:
        for mode in ("bm25", "hybrid"):
            out.append(cli.ok("search", q, "--mode", mode, "--explain", "--graph-depth", "2", ghost="bob"))
        out.append(cli.ok("query", q, ghost="bob"))
        out.append(cli.ok("reference", "search", "Topic", q, ghost="bob"))
    for nid in visible_ids:
        out.append(cli.ok("get", nid, ghost="bob"))
    return json.dumps(_strip(out), sort_keys=True)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shared=st.lists(a_note, min_size=2, max_size=5),
    bobs=st.lists(a_note, max_size=2),
    hidden=st.lists(a_note, min_size=1, max_size=4),
    edited=st.lists(a_note, min_size=1, max_size=4),
    queries=st.lists(text, min_size=1, max_size=3),
)
def test_notes_bob_cannot_see_change_nothing_he_sees(
    shared: list[dict[str, Any]],
    bobs: list[dict[str, Any]],
    hidden: list[dict[str, Any]],
    edited: list[dict[str, Any]],
    queries: list[str],
) -> None:
    base = Path(tempfile.mkdtemp(prefix="vm-privacy-"))
    try:
        outputs = []
        ids = ["TOPIC", *(f"S{i}" for i in range(len(shared))), *(f"B{i}" for i in range(len(bobs)))]
        # 0: without alice's private notes; 1: with them
        for stage, alices in enumerate(([], hidden)):
            root = make_vault(base / f"v{stage}", backend="none")
            note(root, "reference/Topic.md", "Harbour notes.", id="TOPIC", title="Topic", type="topic",
                 files=["shared/*.md"])  # fmt: skip
            for i, n in enumerate(shared):
                _write(root, f"shared/s{i}.md", n, f"S{i}")
            for i, n in enumerate(bobs):
                _write(root, f"private/bob/b{i}.md", n, f"B{i}")
            for i, n in enumerate(alices):
                _write(root, f"private/alice/a{i}.md", n, f"A{i}")
                # the same words where alice keeps her diary, too
                _write(root, f"diary/alice/2026-01-0{i + 1}.md", n, f"D{i}")
            cli = Cli(root)
            cli.ok("index")
            outputs.append(_bob_sees(cli, ids, queries))
        assert outputs[1] == outputs[0], "adding notes bob cannot see changed what he sees"
        # 2: in the same vault, alice edits some of her notes and deletes the rest; the
        # indexes are updated in place (deleted documents stay in Whoosh's segments)
        for i in range(len(hidden)):
            if i < len(edited):
                _write(root, f"private/alice/a{i}.md", edited[i], f"A{i}")
            else:
                (root / f"private/alice/a{i}.md").unlink()
            (root / f"diary/alice/2026-01-0{i + 1}.md").unlink()
        cli.ok("index")
        assert _bob_sees(cli, ids, queries) == outputs[0], "editing or deleting notes bob cannot see changed it"
    finally:
        shutil.rmtree(base, ignore_errors=True)
