"""`index` and `status` JSON (SPEC §6): the documented keys, freshness that follows the files,
the embedding choice, and paths and problems only, never note contents."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import Cli
from tests.integration._vaults import make_vault, note

BODY_WORD = "marmalade"


def _seed(root: Path) -> None:
    note(root, "shared/a.md", f"Shared {BODY_WORD} recipe.\n", title="Shared A")
    note(root, "private/alice/p.md", f"Alice's {BODY_WORD}.\n", title="Alice private")
    note(root, "diary/bob/2026-01-01.md", f"Bob's {BODY_WORD} diary.\n", title="Bob diary", type="episode")
    note(root, "project/apollo/plan.md", f"The {BODY_WORD} plan.\n", title="Apollo plan")
    note(root, "inbox/shared/c.md", f"A {BODY_WORD} capture.\n", title="Capture", type="capture")
    (root / "shared/broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")


def _check_status_shape(data: dict[str, object]) -> None:
    assert {"vault", "notes", "index", "watcher"} <= set(data)
    notes, index, watcher = data["notes"], data["index"], data["watcher"]
    assert isinstance(notes, dict) and {"total", "by_scope"} <= set(notes)
    assert isinstance(index, dict) and {"fresh", "pending", "errors", "embedding"} <= set(index)
    assert {"backend", "model", "dims"} <= set(index["embedding"])
    assert isinstance(watcher, dict) and {"running", "pid", "heartbeat"} <= set(watcher)
    assert isinstance(index["fresh"], bool) and isinstance(index["pending"], int)


def test_index_and_status_shapes_and_freshness(hcli: Cli, hvault: Path) -> None:
    _seed(hvault)
    before = hcli.ok("status")
    _check_status_shape(before)
    assert before["vault"] == str(hvault.resolve())
    assert before["index"]["fresh"] is False and before["index"]["pending"] >= 6

    report = hcli.ok("index")
    assert {"added", "updated", "deleted", "moved", "unchanged", "errors", "seconds"} <= set(report)
    assert report["added"] == 6 and isinstance(report["seconds"], float)
    assert [(e["path"], e["code"]) for e in report["errors"]] == [("shared/broken.md", "invalid_yaml")]

    status = hcli.ok("status")
    _check_status_shape(status)
    assert status["notes"] == {
        "total": 6,
        "by_scope": {"shared": 2, "private": 1, "diary": 1, "project": 1, "inbox": 1},
    }
    index = status["index"]
    assert index["fresh"] is True and index["pending"] == 0
    assert [(e["path"], e["code"]) for e in index["errors"]] == [("shared/broken.md", "invalid_yaml")]
    assert index["embedding"]["backend"] == "test-hash" and index["embedding"]["dims"] == 128
    assert status["watcher"]["running"] is False and status["watcher"]["pid"] is None

    note(hvault, "shared/a.md", "Changed.\n", title="Shared A")
    (hvault / "shared/new.md").write_text("new\n")
    stale = hcli.ok("status")["index"]
    assert stale["fresh"] is False and stale["pending"] == 2
    hcli.ok("index")
    assert hcli.ok("status")["index"]["pending"] == 0


def test_status_and_index_never_print_note_contents(hcli: Cli, hvault: Path) -> None:
    _seed(hvault)
    for args in (("index",), ("status",)):
        for json_ in (True, False):
            res = hcli(*args, json_=json_)
            assert res.exit_code == 0
            assert BODY_WORD not in res.stdout + res.stderr, args


def test_status_reports_the_embedding_choice_without_loading_a_model(
    tmp_path: Path, real_model_available: None
) -> None:
    """`auto` picks the bundled offline MiniLM; status says so without importing torch."""
    cli = Cli(make_vault(tmp_path / "auto", backend="auto"))
    already = "torch" in sys.modules
    emb = cli.ok("status")["index"]["embedding"]
    assert (emb["backend"], emb["model"], emb["dims"]) == ("sentence-transformers", "all-MiniLM-L6-v2", 384)
    assert "bundled" in emb["reason"]
    if not already:
        assert "torch" not in sys.modules


def test_status_with_embeddings_off(bcli: Cli) -> None:
    emb = bcli.ok("status")["index"]["embedding"]
    assert emb["backend"] == "none" and emb["model"] is None
