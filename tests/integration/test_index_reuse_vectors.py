"""Issue 14, acceptance 4: an edit re-embeds only the chunks whose text changed. The vectors
of unchanged chunks are kept, keyed by the text they embed, within the collection of one
fingerprint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests._embedders import HashEmbedder
from tests.conftest import Cli
from tests.integration._vaults import make_vault, note, paths_of

WORDS = [
    "quokka",
    "zebu",
    "okapi",
    "tapir",
    "ibex",
    "kudu",
    "gaur",
    "saola",
    "dugong",
    "narwhal",
    "wombat",
    "numbat",
    "bilby",
    "dingo",
    "lemur",
    "indri",
    "sifaka",
    "fossa",
    "tenrec",
    "aye",
    "serow",
    "takin",
    "dhole",
    "markhor",
    "bongo",
    "eland",
    "nyala",
    "oryx",
    "addax",
    "gerenuk",
]


def _body(changed: dict[int, str] | None = None) -> str:
    """Thirty sections, one paragraph each: thirty chunks."""
    changed = changed or {}
    parts = []
    for i, word in enumerate(WORDS):
        text = changed.get(i, f"The {word} field notes, part {i}: where the {word} feeds and sleeps.")
        parts.append(f"## Section {i}\n\n{text}\n")
    return "\n".join(parts)


def _stored(root: Path, path: str) -> dict[int, tuple[Any, list[float]]]:
    """chunk index -> (text key, vector) of the note's chunks in the vault's one collection."""
    from vaultmem.index.vectors import COLLECTION_PREFIX, TEXT_KEY, make_client

    client = make_client("embedded", root / ".vaultmem", None)
    (name,) = [
        n
        for n in (c if isinstance(c, str) else c.name for c in client.list_collections())
        if n.startswith(COLLECTION_PREFIX)
    ]
    got = client.get_collection(name).get(where={"path": path}, include=["metadatas", "embeddings"])
    return {
        int(m["chunk"]): (m.get(TEXT_KEY), [float(x) for x in v])
        for m, v in zip(got["metadatas"], got["embeddings"], strict=True)
    }


def test_editing_one_paragraph_of_a_30_chunk_note_embeds_one_chunk(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder
) -> None:
    note(hvault, "shared/field.md", _body(), title="Field notes")
    note(hvault, "shared/other.md", "# Other\n\nSomething about gazelles.\n", title="Other")
    first = hcli.ok("index")
    before = _stored(hvault, "shared/field.md")
    assert len(before) == 30 and first["embedded_chunks"] == 31
    assert hash_embedder.texts == 31
    assert all(key for key, _ in before.values())

    note(hvault, "shared/field.md", _body({17: "The aardvark replaced this paragraph entirely."}), title="Field notes")
    calls, texts = hash_embedder.calls, hash_embedder.texts
    report = hcli.ok("index")
    assert report["updated"] == 1
    assert (report["embedded_chunks"], report["kept_chunks"]) == (1, 29)  # what `index --json` says
    assert hash_embedder.texts - texts == 1  # exactly one chunk went through the model
    assert hash_embedder.calls - calls == 1
    after = _stored(hvault, "shared/field.md")
    assert sorted(after) == list(range(30))
    for index in range(30):
        if index == 17:
            assert after[index][0] != before[index][0]
            expected = hash_embedder.vector("Field notes > Section 17\nThe aardvark replaced this paragraph entirely.")
            assert max(abs(a - b) for a, b in zip(after[index][1], expected, strict=True)) < 1e-6  # float32
        else:
            assert after[index] == before[index]  # same key, same vector: kept, not embedded again
    assert paths_of(hcli.ok("search", "aardvark replaced", "--mode", "vector"))[0] == "shared/field.md"


def test_inserted_and_removed_sections_embed_only_the_new_text(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder
) -> None:
    note(hvault, "shared/field.md", _body(), title="Field notes")
    hcli.ok("index")
    before = {key: vec for key, vec in _stored(hvault, "shared/field.md").values()}
    # A new first section shifts every chunk index by one; the last section goes away.
    text = "## Preface\n\nA preface about the pangolin.\n\n" + _body().rsplit("## Section 29", 1)[0]
    note(hvault, "shared/field.md", text, title="Field notes")
    texts = hash_embedder.texts
    hcli.ok("index")
    assert hash_embedder.texts - texts == 1
    after = _stored(hvault, "shared/field.md")
    assert sorted(after) == list(range(30))  # 1 new + 28 kept + chunk indexes renumbered, none stale
    kept = [after[i] for i in range(1, 30)]
    assert all(before[key] == vec for key, vec in kept)


def test_a_changed_title_embeds_every_chunk_again(hcli: Cli, hvault: Path, hash_embedder: HashEmbedder) -> None:
    # Every chunk's embedded text starts with the title: the same body under a new title is new text.
    note(hvault, "shared/field.md", _body(), title="Field notes")
    hcli.ok("index")
    texts = hash_embedder.texts
    note(hvault, "shared/field.md", _body(), title="Notes from the field")
    hcli.ok("index")
    assert hash_embedder.texts - texts == 30


def test_a_new_fingerprint_never_reuses_vectors_of_the_old_one(tmp_path: Path, hash_embedder: HashEmbedder) -> None:
    vault = make_vault(tmp_path / "v", backend="auto")
    cli = Cli(vault)
    note(vault, "shared/field.md", _body(), title="Field notes")
    cli.ok("index")
    texts = hash_embedder.texts
    hash_embedder.model = "hash-bow-v2"  # another model: another fingerprint, another collection
    cli.ok("index")
    assert hash_embedder.texts - texts == 30
