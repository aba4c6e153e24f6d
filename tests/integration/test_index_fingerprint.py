"""Issue 3, acceptance 6: changing the embedding model (or its dimensions) or the chunker
re-embeds everything into a collection of its own and drops the old one: vectors of two
fingerprints never mix, and search keeps working across the change."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._embedders import HashEmbedder
from tests.conftest import Cli
from tests.integration._vaults import index_contents, note, paths_of


def _seed(root: Path) -> int:
    for i, animal in enumerate(["heron", "ibis", "stork", "crane", "egret"]):
        body = f"# {animal.title()}\n\nThe {animal} wades in shallow water.\n\n## Diet\n\nThe {animal} eats fish.\n"
        note(root, f"shared/{animal}.md", body, title=animal.title(), tags=["birds"] if i % 2 else ["waders"])
    return 5


def _only_collection(root: Path) -> dict[str, object]:
    cols = index_contents(root)["collections"]
    assert len(cols) == 1, f"collections of several fingerprints: {sorted(cols)}"
    return next(iter(cols.values()))


def test_new_model_reembeds_everything_and_drops_the_old_collection(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder
) -> None:
    n = _seed(hvault)
    first = hcli.ok("index")
    assert first["embedded_notes"] == n
    old = _only_collection(hvault)
    old_fp = hcli.ok("status")["index"]["embedding"]["fingerprint"]
    assert old["fingerprint"] == old_fp and "hash-bow-v1" in old_fp

    hash_embedder.model = "hash-bow-v2"
    calls = hash_embedder.texts
    again = hcli.ok("index")
    assert (again["added"], again["updated"], again["deleted"]) == (0, 0, 0)
    assert again["embedded_notes"] == n and again["embedded_chunks"] == old["count"]
    assert hash_embedder.texts - calls == old["count"]
    new = _only_collection(hvault)
    assert new["fingerprint"] == again["vectors"] != old_fp and "hash-bow-v2" in new["fingerprint"]
    assert new["count"] == old["count"]
    assert hcli.ok("status")["index"]["embedding"]["fingerprint"] == new["fingerprint"]
    # and nothing left to do afterwards
    assert hcli.ok("index")["embedded_notes"] == 0


def test_new_dimensions_never_mix_with_old_vectors(hcli: Cli, hvault: Path, hash_embedder: HashEmbedder) -> None:
    _seed(hvault)
    hcli.ok("index")
    hash_embedder.dims = 96
    # search catches up first: it re-embeds, then embeds the query with the same model
    res = hcli.ok("search", "heron wades", "--mode", "vector")
    assert paths_of(res)[0] == "shared/heron.md"
    col = _only_collection(hvault)
    assert "|96|" in str(col["fingerprint"])
    from vaultmem.index.vectors import make_client

    client = make_client("embedded", hvault / ".vaultmem", None)
    (name,) = index_contents(hvault)["collections"]
    got = client.get_collection(name).get(include=["embeddings"])
    assert {len(v) for v in got["embeddings"]} == {96}


def test_new_chunker_reembeds_everything(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = _seed(hvault)
    hcli.ok("index")
    old = _only_collection(hvault)
    from vaultmem.index import chunking

    monkeypatch.setattr(chunking, "CHUNKER_VERSION", "c-test-next")
    again = hcli.ok("index")
    assert again["embedded_notes"] == n
    new = _only_collection(hvault)
    assert new["fingerprint"] != old["fingerprint"] and str(new["fingerprint"]).endswith("|c-test-next")
    assert new["count"] == old["count"]
    assert paths_of(hcli.ok("search", "stork fish", "--mode", "vector"))[0] == "shared/stork.md"


def test_full_rebuild_keeps_one_collection(hcli: Cli, hvault: Path) -> None:
    n = _seed(hvault)
    hcli.ok("index")
    before = _only_collection(hvault)
    full = hcli.ok("index", "--full")
    assert full["added"] == n and full["embedded_notes"] == n
    after = _only_collection(hvault)
    assert after["count"] == before["count"]
