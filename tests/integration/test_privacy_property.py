"""Privacy as a property (issue 13, acceptance 2; issue 22): for random vaults and random
queries, adding, editing, deleting or trashing notes bob cannot see changes nothing in bob's
output of `search` (every mode, `--explain` included), `get`, `links`, `query`, `reference
search`, `tags`, `orphans`, `list`, the operator commands run as bob (`status`, `lint`,
`index`, `fix-names --dry-run --all`), `note move --dry-run`, `trash list`, `token list` and
the MCP reads (`memory_search`, `memory_get`, `memory_query`): scores, order, links and
counts byte-identical apart from timing fields — run in-process, and again through a live
watcher (the CLI's forwarded commands, the MCP server's typed reads).

Hidden notes are drawn from the same small vocabulary and title pool as bob's notes, so
they share words (BM25 statistics, vectors), titles and aliases (link resolution) with what
he sees, and shared notes link to their titles. The dense side embeds with the
deterministic hash embedder (tests/_embedders.py): real Chroma, real filters."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from tests._embedders import HashEmbedder, install
from tests.conftest import Cli
from tests.integration._vaults import make_vault, note

# Random vaults with vectors (hash embedder), each through a live watcher too: ~20 s.
pytestmark = pytest.mark.slow

WORDS = ["harbour", "pilot", "tide", "breakwater", "anchor", "rope", "gull", "ledger", "lantern", "quay", "sail"]
TITLES = ["Harbour", "Pilot log", "Tide table", "Anchor", "Ledger", "Lantern"]
# Timings, and the token estimate, which counts the characters of the very numbers that
# Chroma's float32 noise can lengthen by a digit (see _strip).
TIMING = {"search_time_ms", "took_ms", "seconds", "tokens_used"}
# Where each vault lives, and the watcher (running in one stage only): not bob's view.
PLACES = {"vault", "file", "watcher"}

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)
links = st.lists(st.sampled_from(TITLES), max_size=2)
a_note = st.fixed_dictionaries(
    {"title": st.sampled_from(TITLES), "body": text, "links": links, "alias": st.none() | st.sampled_from(TITLES)}
)


MTIME = 1_767_225_600  # 2026-01-01: every file the same modification time in every vault


def _write(root: Path, rel: str, n: dict[str, Any], nid: str) -> None:
    body = n["body"] + "".join(f" See [[{t}]]." for t in n["links"])
    front: dict[str, Any] = {"id": nid, "title": n["title"], "created": "2026-01-01", "updated": "2026-01-02"}
    if n["alias"]:
        front["aliases"] = [n["alias"]]
    path = note(root, rel, body, **front)
    os.utime(path, (MTIME, MTIME))


def _write_turn(root: Path, rel: str, n: dict[str, Any], nid: str, ghost: str) -> None:
    """A conversation memory said at the same moment as every other ghost's: sessions
    (search/sessions.py) must keep to their owner's turns."""
    front = {"id": nid, "title": n["title"], "type": "conversation", "created": "2026-01-01T10:00:00Z", "role": ghost}
    path = note(root, rel, n["body"], **front)
    os.utime(path, (MTIME, MTIME))


def _strip(value: Any) -> Any:
    """Without timing fields."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING and k not in PLACES}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _close(x: Any, y: Any) -> bool:
    """Equal; numbers within 1.5e-4. Chroma's float32 distances can differ in their last
    bits once its index has changed (the same vectors summed in another order), whoever's
    notes changed it, and a logit multiplies that by up to 12.5; `--explain` rounds a
    distance to 4 decimals, so two such distances either side of a rounding boundary
    (0.51205) show 1e-4 apart. A hidden note's words move a score by whole units (issue 13:
    4.03 against 4.72). Everything else exactly."""
    if isinstance(x, float) or isinstance(y, float):
        return isinstance(x, int | float) and isinstance(y, int | float) and math.isclose(x, y, abs_tol=1.5e-4)
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_close(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_close(p, q) for p, q in zip(x, y, strict=True))
    return bool(x == y)


def _same(got: str, want: str, what: str) -> None:
    """Equal (_close), or a message naming the first output (and result) that differs."""
    a, b = json.loads(got), json.loads(want)
    if _close(a, b):
        return
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if not _close(x, y)), min(len(a), len(b)))
    x, y = a[first], b[first]
    listed = next((k for k in ("results", "matches") if isinstance(x, dict) and isinstance(x.get(k), list)), None)
    if listed and isinstance(y, dict):  # narrowed to the first result that differs, whole
        rx, ry = x[listed], y.get(listed) or []
        at = next((i for i, (p, q) in enumerate(zip(rx, ry, strict=False)) if not _close(p, q)), None)
        if at is not None or len(rx) != len(ry):
            at = min(len(rx), len(ry)) if at is None else at
            x, y = {"result": at, "of": len(rx), "got": rx[at : at + 1]}, {"of": len(ry), "want": ry[at : at + 1]}
        else:
            keys = sorted(k for k in {*x, *y} if not _close(x.get(k), y.get(k)))
            x, y = {k: x.get(k) for k in keys}, {k: y.get(k) for k in keys}
    raise AssertionError(f"{what}: output {first} differs\n got: {json.dumps(x)[:3000]}\nwant: {json.dumps(y)[:3000]}")


Run = Callable[..., Any]  # (*args) -> the command's JSON document, run as bob


def _in_process(cli: Cli) -> Run:
    return lambda *args: cli.ok(*args, ghost="bob")


def _through_watcher(root: Path, cli: Cli) -> Run:
    """Commands a watcher answers go to the live one over its socket; the rest run here."""
    from vaultmem.daemon.client import exchange, forwardable
    from vaultmem.daemon.paths import connect_path

    def run(*args: str) -> Any:
        argv = ["--vault", str(root), "--ghost", "bob", "--json", *args]
        if forwardable(argv) is None:
            return cli.ok(*args, ghost="bob")
        reply, why = exchange(str(connect_path(str(root))), {"op": "cli", "argv": argv, "env": {}, "cwd": "/"})
        assert reply is not None and reply["exit_code"] == 0, (args, why, reply)
        return json.loads(reply["stdout"])

    return run


def _mcp_reads(root: Path, visible_ids: list[str], queries: list[str]) -> list[Any]:
    """bob's MCP reads: typed use cases, answered by the watcher when one runs."""
    from vaultmem.mcp.runner import Runner
    from vaultmem.mcp.tools import BY_NAME

    runner = Runner(root)
    calls = [("memory_search", {"query": q, "options": {"mode": m}}) for q in queries for m in ("bm25", "hybrid")]
    calls += [("memory_query", {"query": q}) for q in queries]
    calls += [("memory_get", {"id": nid}) for nid in visible_ids]
    return [runner.call(BY_NAME[name].plan(args, "bob"), "bob").data for name, args in calls]


def _bob_sees(run: Run, root: Path, visible_ids: list[str], queries: list[str]) -> str:
    out: list[Any] = []
    for q in queries:
        for mode in ("bm25", "vector", "hybrid"):
            out.append(run("search", q, "--mode", mode, "--explain", "--graph-depth", "2"))
        out.append(run("query", q))
        out.append(run("reference", "search", "Topic", q))
    for nid in visible_ids:
        out.append(run("get", nid))
        out.append(run("links", nid))
    out.append(run("tags"))
    out.append(run("orphans"))
    out.append(run("list"))
    # operator commands run as bob: bob's view of the whole vault
    out.append(run("status"))
    out.append(run("index"))
    out.append(run("lint"))
    out.append(run("fix-names", "--dry-run", "--all"))
    out.append(run("note", "move", "S0", "Renamed S0", "--dry-run"))
    out.append(run("trash", "list"))
    out.append(run("token", "list"))
    out += _mcp_reads(root, visible_ids, queries)
    return json.dumps(_strip(out), sort_keys=True)


@contextmanager
def _watching(root: Path) -> Iterator[None]:
    """A live watcher for `root` on a thread (the hash embedder of this process)."""
    import threading
    import time

    from vaultmem.cli.serve import command_runner
    from vaultmem.daemon.client import ping
    from vaultmem.daemon.runner import Settings, Watcher

    watcher = Watcher(root, command_runner, Settings(rescan_s=60.0))
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while (ping(str(root)) or {}).get("model") != "ready" or (ping(str(root)) or {}).get("state") != "watching":
            assert thread.is_alive() and time.monotonic() < deadline, "the watcher did not come up"
            time.sleep(0.05)
        yield
    finally:
        watcher.request_stop()
        thread.join(timeout=30)


# No shrinking: a failure prints its example at once (shrinking one takes minutes here).
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
# Found by this test (issue 22): a link of a shared note that reaches alice's private note
# among all notes but the moved note in bob's view was not relinked, so bob's `note move`
# report told him a hidden note held the name.
@example(
    shared=[
        {"title": "Tide table", "body": "sail harbour anchor", "links": ["Anchor"], "alias": "Ledger"},
        {"title": "Lantern", "body": "ledger tide gull gull", "links": ["Ledger", "Ledger"], "alias": "Ledger"},
    ],
    bobs=[],
    hidden=[{"title": "Ledger", "body": "lantern breakwater gull", "links": ["Pilot log", "Ledger"], "alias": None}],
    edited=[{"title": "Ledger", "body": "harbour pilot ledger", "links": ["Pilot log"], "alias": "Pilot log"}],
    queries=["pilot rope"],
)
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
    with pytest.MonkeyPatch.context() as mp:
        install(mp, HashEmbedder())
        _run(base, shared, bobs, hidden, edited, queries)


def _run(
    base: Path,
    shared: list[dict[str, Any]],
    bobs: list[dict[str, Any]],
    hidden: list[dict[str, Any]],
    edited: list[dict[str, Any]],
    queries: list[str],
) -> None:
    try:
        outputs = []
        turns = shared[:3]  # bob's conversation; alice's hidden one interleaves with it by id
        ids = ["TOPIC", *(f"S{i}" for i in range(len(shared))), *(f"B{i}" for i in range(len(bobs)))]
        ids += [f"T{2 * i:02d}" for i in range(len(turns))]
        # 0: without alice's private notes; 1: with them
        for stage, alices in enumerate(([], hidden)):
            root = make_vault(base / f"v{stage}", backend="auto")
            topic = note(root, "reference/Topic.md", "Harbour notes.", id="TOPIC", title="Topic", type="topic",
                         files=["shared/*.md"])  # fmt: skip
            os.utime(topic, (MTIME, MTIME))
            for i, n in enumerate(shared):
                _write(root, f"shared/s{i}.md", n, f"S{i}")
            for i, n in enumerate(bobs):
                _write(root, f"private/bob/b{i}.md", n, f"B{i}")
            for i, n in enumerate(turns):
                _write_turn(root, f"diary/bob/t{i}.md", n, f"T{2 * i:02d}", "bob")
            for i, n in enumerate(alices):
                _write(root, f"private/alice/a{i}.md", n, f"A{i}")
                # the same words where alice keeps her diary, too, and as her conversation
                _write(root, f"diary/alice/2026-01-0{i + 1}.md", n, f"D{i}")
                _write_turn(root, f"diary/alice/t{i}.md", n, f"T{2 * i + 1:02d}", "alice")
            cli = Cli(root)
            cli.ok("index")
            if alices:
                cli.ok("token", "add", "alice")
                cli.ok("note", "delete", "D0", ghost="alice")  # into the trash
                cli.ok("index")
            outputs.append(_bob_sees(_in_process(cli), root, ids, queries))
        _same(outputs[1], outputs[0], "adding notes bob cannot see changed what he sees")
        with _watching(root):
            _same(_bob_sees(_through_watcher(root, cli), root, ids, queries), outputs[0], "through the watcher")
        # 2: in the same vault, alice edits some of her notes and deletes the rest; the
        # indexes are updated in place (deleted documents stay in Whoosh's segments)
        for i in range(len(hidden)):
            if i < len(edited):
                _write(root, f"private/alice/a{i}.md", edited[i], f"A{i}")
            else:
                (root / f"private/alice/a{i}.md").unlink()
            (root / f"diary/alice/2026-01-0{i + 1}.md").unlink(missing_ok=True)
            if i < len(edited):
                _write_turn(root, f"diary/alice/t{i}.md", edited[i], f"T{2 * i + 1:02d}", "alice")
        cli.ok("index")
        _same(
            _bob_sees(_in_process(cli), root, ids, queries),
            outputs[0],
            "editing or deleting notes bob cannot see changed it",
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
