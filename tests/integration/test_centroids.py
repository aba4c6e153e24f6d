"""A note of several chunks is also scored as a whole: the centroid of its chunk vectors,
kept in the state db beside the vectors (statedb/centroids.py) and counted in hybrid
search's cosine (fusion.with_centroids). The rows follow the vectors through edits,
deletes, moves, a new model, and a state db from before them."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests._embedders import HashEmbedder
from tests.conftest import Cli
from tests.integration._vaults import note
from tests.integration.test_index_reuse_vectors import _body, _stored


def _rows(root: Path) -> dict[str, np.ndarray]:
    conn = sqlite3.connect(root / ".vaultmem" / "state.db")
    try:
        return {p: np.frombuffer(d, dtype="<f4") for p, d in conn.execute("SELECT path, data FROM centroids")}
    finally:
        conn.close()


def _mean(root: Path, path: str) -> np.ndarray:
    vectors = np.asarray([v for _, v in _stored(root, path).values()], dtype=np.float64)
    mean = vectors.mean(axis=0)
    return mean / np.linalg.norm(mean)


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and float(np.abs(a - b).max()) < 1e-6


def test_rows_follow_the_vectors_through_edits_moves_and_deletes(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder
) -> None:
    note(hvault, "shared/field/notes.md", _body(), title="Field notes")
    note(hvault, "shared/other.md", "# Other\n\nSomething about gazelles.\n", title="Other")
    hcli.ok("index")
    rows = _rows(hvault)
    assert set(rows) == {"shared/field/notes.md"}  # a one-chunk note's centroid is its chunk
    assert _close(rows["shared/field/notes.md"], _mean(hvault, "shared/field/notes.md"))

    note(hvault, "shared/field/notes.md", _body({3: "The aardvark took this section over."}), title="Field notes")
    hcli.ok("index")
    assert _close(_rows(hvault)["shared/field/notes.md"], _mean(hvault, "shared/field/notes.md"))

    (hvault / "shared" / "field").rename(hvault / "shared" / "moved")
    texts = hash_embedder.texts
    report = hcli.ok("index")
    assert report["moved"] == 1 and hash_embedder.texts == texts  # carried, not embedded again
    rows = _rows(hvault)
    assert set(rows) == {"shared/moved/notes.md"}
    assert _close(rows["shared/moved/notes.md"], _mean(hvault, "shared/moved/notes.md"))

    note(hvault, "shared/moved/notes.md", "# Short now\n\nOne paragraph.\n", title="Field notes")
    hcli.ok("index")
    assert _rows(hvault) == {}  # one chunk left: no row
    note(hvault, "shared/moved/notes.md", _body(), title="Field notes")
    hcli.ok("index")
    (hvault / "shared" / "moved" / "notes.md").unlink()
    hcli.ok("index")
    assert _rows(hvault) == {}


def test_a_state_db_without_rows_gets_them_from_the_stored_vectors(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder
) -> None:
    """A vault indexed before the table existed: the next index fills it from Chroma,
    without the model."""
    note(hvault, "shared/a.md", _body(), title="Field notes")
    note(hvault, "shared/b.md", _body({0: "A first section of its own."}), title="Other field notes")
    hcli.ok("index")
    expected = _rows(hvault)
    assert set(expected) == {"shared/a.md", "shared/b.md"}
    conn = sqlite3.connect(hvault / ".vaultmem" / "state.db")
    with conn:
        conn.execute("DROP TABLE centroids")
        conn.execute("DELETE FROM meta WHERE key='centroids'")
    conn.close()
    calls = hash_embedder.calls
    report = hcli.ok("index")
    assert report["embedded_chunks"] == 0 and hash_embedder.calls == calls
    got = _rows(hvault)
    assert set(got) == set(expected) and all(_close(got[p], expected[p]) for p in got)


def test_a_new_model_makes_the_rows_anew(hcli: Cli, hvault: Path, hash_embedder: HashEmbedder) -> None:
    note(hvault, "shared/a.md", _body(), title="Field notes")
    hcli.ok("index")
    before = _rows(hvault)["shared/a.md"]
    hash_embedder.dims = 64  # another model: another fingerprint, vectors of another size
    hash_embedder.model = "hash-bow-64"
    hcli.ok("index")
    after = _rows(hvault)["shared/a.md"]
    assert before.shape == (128,) and after.shape == (64,)
    assert _close(after, _mean(hvault, "shared/a.md"))


def test_hybrid_counts_the_centroid_in_cos(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.search import fusion

    share = 0.4
    monkeypatch.setattr(fusion, "HYBRID", dataclasses.replace(fusion.HYBRID, centroid=share))
    note(hvault, "shared/a.md", _body(), title="Field notes")
    note(hvault, "shared/b.md", "# Quokka\n\nA quokka note of one chunk.\n", title="Quokka")
    hcli.ok("index")
    query = "where the quokka feeds"
    data = hcli.ok("search", query, "--explain", "--min-score", "0", "--trust-bias", "0")
    got = {r["summary"]["path"]: r["explain"] for r in data["results"]}
    assert set(got) >= {"shared/a.md", "shared/b.md"}
    q = np.asarray(hash_embedder.vector(query))
    whole = float(_mean(hvault, "shared/a.md") @ q)
    parts = got["shared/a.md"]["parts"]
    assert parts["centroid"] == pytest.approx(whole, abs=1e-5)
    best = 1 - got["shared/a.md"]["vector"]["distance"]
    assert parts["cos"] == pytest.approx((1 - share) * best + share * whole, abs=1e-4)
    one = got["shared/b.md"]["parts"]
    assert "centroid" not in one and one["cos"] == pytest.approx(1 - got["shared/b.md"]["vector"]["distance"], abs=1e-4)
    # vector mode ranks by the best chunk alone, as its own formula was fitted
    vec = hcli.ok("search", query, "--explain", "--mode", "vector", "--min-score", "0")
    assert all("centroid" not in r["explain"]["parts"] for r in vec["results"])


def test_a_note_moved_over_another_keeps_only_its_own_chunks(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder
) -> None:
    """`mv b.md a.md`: a.md's 30 chunks go, b.md's two are carried (not embedded again)."""
    note(hvault, "shared/a.md", _body(), title="Field notes")
    note(hvault, "shared/b.md", "# One\n\nThe first part.\n\n# Two\n\nThe second part.\n", title="Field notes")
    hcli.ok("index")
    assert len(_stored(hvault, "shared/b.md")) == 2
    (hvault / "shared" / "b.md").replace(hvault / "shared" / "a.md")
    texts = hash_embedder.texts
    hcli.ok("index")
    assert hash_embedder.texts == texts
    assert sorted(_stored(hvault, "shared/a.md")) == [0, 1] and _stored(hvault, "shared/b.md") == {}
    rows = _rows(hvault)
    assert set(rows) == {"shared/a.md"} and _close(rows["shared/a.md"], _mean(hvault, "shared/a.md"))


def test_a_fill_that_fails_leaves_no_transaction_open(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher keeps its connection after a failed reconcile: the next one must work."""
    from vaultmem.index.statedb import StateDB
    from vaultmem.index.vectors import VectorIndex

    note(hvault, "shared/a.md", _body(), title="Field notes")
    hcli.ok("index")
    db = StateDB(hvault / ".vaultmem" / "state.db")
    with pytest.raises(RuntimeError), db.transaction():
        db.reset_centroids(complete=False)
        raise RuntimeError("the vector store went away")
    assert not db.conn.in_transaction and db.centroids_current()  # rolled back: nothing changed
    db.close()

    conn = sqlite3.connect(hvault / ".vaultmem" / "state.db")
    with conn:
        conn.execute("DELETE FROM meta WHERE key='centroids'")
    conn.close()
    real = VectorIndex.chunk_sums
    calls = []

    def flaky(self: VectorIndex, page: int = 5000) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the vector store went away")
        return real(self, page)

    monkeypatch.setattr(VectorIndex, "chunk_sums", flaky)
    assert hcli("index").exit_code != 0
    hcli.ok("index")
    assert len(calls) == 2 and set(_rows(hvault)) == {"shared/a.md"}
