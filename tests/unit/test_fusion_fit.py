"""The fitted fusion constants live in one data file with their provenance; the tuning
tool writes it and search reads it (no corpora needed)."""

from __future__ import annotations

import json
from pathlib import Path

from tools.evalkit.fusion_tune import write_fit
from vaultmem.search import fusion


def test_the_shipped_fit_says_where_it_came_from() -> None:
    fit = json.loads(fusion.FIT_FILE.read_text(encoding="utf-8"))
    provenance = fit["provenance"]
    assert provenance["split"] == "tune"  # never fitted on test splits
    assert set(provenance["sets"]) == {"cranfield", "obsidian", "tldr", "locomo"}
    assert provenance["date"] and provenance["git_revision"]
    assert fit["min_score"] == fusion.RECOMMENDED_MIN_SCORE
    assert fit["session_share"] == fusion.SESSION_SHARE
    assert fit["cut_floor_share"] == fusion.CUT_FLOOR_SHARE
    assert (fusion.HYBRID.a, fusion.HYBRID.b, fusion.HYBRID.p, fusion.HYBRID.gate) == (
        fit["hybrid"]["a"],
        fit["hybrid"]["b"],
        fit["hybrid"]["p"],
        fit["hybrid"].get("gate", 0.0),
    )


def test_what_the_tool_writes_is_what_search_reads(tmp_path: Path) -> None:
    path = tmp_path / "fit.json"
    hybrid = {"a": 3.80961234, "b": 7.61925, "c": -11.35694, "sat": 5.0, "p": 2.285805, "gate": 0.3}
    write_fit(
        path,
        hybrid,
        {"a": 0.0, "b": 16.02431, "c": -11.14159, "sat": 20.0, "p": 0.0},
        {"a": 12.48761, "b": 0.0, "c": -9.26449, "sat": 20.0, "p": 0.0},
        0.03,
        0.6,
        0.5,
        {"command": "calibrate", "sets": ["cranfield"], "split": "tune"},
    )
    written = json.loads(path.read_text(encoding="utf-8"))
    read = fusion._fitted("hybrid", written)
    assert (read.a, read.b, read.c, read.sat, read.p, read.gate) == (3.8096, 7.6193, -11.3569, 5.0, 2.2858, 0.3)
    assert fusion._fitted("vector_only", written).a == 12.4876
    assert written["min_score"] == 0.03
    assert written["session_share"] == 0.6
    assert written["cut_floor_share"] == 0.5
    assert written["provenance"]["sets"] == ["cranfield"]
    assert written["provenance"]["git_revision"]  # the code the fit ran on
    assert len(written["provenance"]["date"]) == 10  # YYYY-MM-DD
