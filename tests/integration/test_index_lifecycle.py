"""Issue 3, acceptance 3: a moved file keeps its id and counts as moved; a deleted file
leaves every index; an edited file updates every index (state db, Whoosh, Chroma, graph)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests._embedders import HashEmbedder
from tests.conftest import Cli
from tests.integration._vaults import index_contents, make_vault, note, paths_of

ALPHA_ID = "01JB3A0000000000000000ALFA"


def _seed(root: Path) -> None:
    note(
        root, "shared/alpha.md",
        "# Alpha\n\nThe quokka migration plan lives here.\n\n## Details\n\nMore about quokkas and their burrows.\n",
        id=ALPHA_ID, title="Alpha plan", tags=["wildlife"],
    )  # fmt: skip
    note(root, "shared/beta.md", "# Beta\n\nBeta refers to [[Alpha plan]] about the zebu herd.\n", title="Beta")
    note(root, "shared/gamma.md", "# Gamma\n\nGamma is about the okapi sanctuary.\n", title="Gamma")


def _chunks_of(contents: dict[str, object], path: str) -> list[dict[str, object]]:
    cols = contents["collections"]
    assert isinstance(cols, dict) and len(cols) == 1
    (col,) = cols.values()
    return [m for m in col["metadatas"] if m["path"] == path]


def test_moved_file_keeps_its_id_and_counts_as_moved(hcli: Cli, hvault: Path) -> None:
    _seed(hvault)
    cli = hcli
    cli.ok("index")
    (hvault / "shared" / "archive").mkdir()
    shutil.move(hvault / "shared/alpha.md", hvault / "shared/archive/alpha-renamed.md")
    report = cli.ok("index")
    assert (report["added"], report["updated"], report["deleted"], report["moved"]) == (0, 0, 0, 1)
    new = "shared/archive/alpha-renamed.md"
    doc = cli.ok("get", ALPHA_ID)
    assert doc["note"]["path"] == new and doc["note"]["id"] == ALPHA_ID
    assert {i["path"] for i in doc["links"]["in"]} == {"shared/beta.md"}
    assert {i["path"] for i in cli.ok("get", "shared/beta.md")["links"]["out"]} == {new}
    contents = index_contents(hvault)
    assert new in contents["whoosh"] and "shared/alpha.md" not in contents["whoosh"]
    assert new in contents["chroma"] and "shared/alpha.md" not in contents["chroma"]
    assert all(m["note_id"] == ALPHA_ID for m in _chunks_of(contents, new))
    hit = cli.ok("search", "quokka migration", "--mode", "bm25")
    assert paths_of(hit)[0] == new and hit["results"][0]["summary"]["id"] == ALPHA_ID
    assert paths_of(cli.ok("search", "quokka migration", "--mode", "vector"))[0] == new


def test_moved_file_without_id_is_paired_by_content(hcli: Cli, hvault: Path) -> None:
    _seed(hvault)
    hcli.ok("index")
    os.rename(hvault / "shared/gamma.md", hvault / "shared/gamma-2.md")
    report = hcli.ok("index")
    assert (report["added"], report["deleted"], report["moved"]) == (0, 0, 1)
    assert paths_of(hcli.ok("search", "okapi sanctuary", "--mode", "bm25")) == ["shared/gamma-2.md"]


def test_deleted_file_leaves_every_index(hcli: Cli, hvault: Path) -> None:
    _seed(hvault)
    cli = hcli
    cli.ok("index")
    before = index_contents(hvault)
    beta_chunks = len(_chunks_of(before, "shared/beta.md"))
    assert beta_chunks >= 1
    assert "shared/beta.md" in {i["path"] for i in cli.ok("get", ALPHA_ID)["links"]["in"]}
    (hvault / "shared/beta.md").unlink()
    report = cli.ok("index")
    assert (report["added"], report["updated"], report["deleted"], report["moved"]) == (0, 0, 1, 0)
    after = index_contents(hvault)
    assert "shared/beta.md" not in after["whoosh"]
    assert "shared/beta.md" not in after["chroma"]
    (col_before,) = before["collections"].values()
    (col_after,) = after["collections"].values()
    assert col_after["count"] == col_before["count"] - beta_chunks
    assert cli.ok("get", ALPHA_ID)["links"]["in"] == []
    for mode in ("bm25", "vector", "hybrid"):
        assert "shared/beta.md" not in paths_of(cli.ok("search", "zebu herd", "--mode", mode)), mode
    assert cli("get", "shared/beta.md").exit_code == 3
    assert cli.ok("status")["notes"]["total"] == 2
    # The tombstone is forgotten once every index dropped it: a second run has nothing to do.
    again = cli.ok("index")
    assert (again["deleted"], again["fulltext_docs"], again["embedded_notes"]) == (0, 0, 0)


def test_edited_file_updates_every_index(hcli: Cli, hvault: Path) -> None:
    _seed(hvault)
    cli = hcli
    cli.ok("index")
    note(
        hvault, "shared/alpha.md",
        "# Alpha\n\nNow about the axolotl breeding programme, see [[Gamma]].\n",
        id=ALPHA_ID, title="Axolotl plan", tags=["amphibians"],
    )  # fmt: skip
    report = cli.ok("index")
    assert (report["added"], report["updated"], report["deleted"], report["moved"]) == (0, 1, 0, 0)
    assert report["fulltext_docs"] == 1 and report["embedded_notes"] == 1
    # state db / get
    doc = cli.ok("get", "Axolotl plan")
    assert doc["note"]["id"] == ALPHA_ID and doc["tags"] == ["amphibians"]
    assert cli("get", "Alpha plan").exit_code == 3
    # Whoosh: the new words are found, the old ones are gone
    assert paths_of(cli.ok("search", "axolotl", "--mode", "bm25")) == ["shared/alpha.md"]
    assert paths_of(cli.ok("search", "quokka burrows", "--mode", "bm25")) == []
    assert paths_of(cli.ok("search", "axolotl", "--mode", "bm25", "--tag", "amphibians")) == ["shared/alpha.md"]
    assert paths_of(cli.ok("search", "axolotl", "--mode", "bm25", "--tag", "wildlife")) == []
    # Chroma: one chunk now (the note shrank), with the new tag in its metadata
    chunks = _chunks_of(index_contents(hvault), "shared/alpha.md")
    assert len(chunks) == 1
    assert chunks[0].get("tag:amphibians") is True and "tag:wildlife" not in chunks[0]
    assert paths_of(cli.ok("search", "axolotl", "--mode", "vector", "--tag", "amphibians")) == ["shared/alpha.md"]
    # graph: the new link is there, the old title no longer resolves from beta
    assert {i["path"] for i in cli.ok("get", "Gamma")["links"]["in"]} == {"shared/alpha.md"}
    beta = cli.ok("get", "Beta")["links"]
    assert beta["out"] == [] and [d["target"] for d in beta["dangling"]] == ["Alpha plan"]


def test_search_catches_up_without_an_explicit_index(hcli: Cli, hvault: Path) -> None:
    _seed(hvault)
    hcli.ok("index")
    note(hvault, "shared/delta.md", "Delta covers the narwhal census.\n", title="Delta")
    for mode in ("bm25", "vector"):
        assert paths_of(hcli.ok("search", "narwhal census", "--mode", mode))[0] == "shared/delta.md"
    assert hcli.ok("get", "Delta")["note"]["path"] == "shared/delta.md"


def test_a_note_moved_into_a_private_folder_disappears_for_others(hcli: Cli, hvault: Path) -> None:
    _seed(hvault)
    hcli.ok("index")
    (hvault / "private" / "alice").mkdir(parents=True)
    shutil.move(hvault / "shared/alpha.md", hvault / "private/alice/alpha.md")
    assert hcli.ok("index")["moved"] == 1
    for mode in ("bm25", "vector", "hybrid"):
        for ghost in ("bob", None):
            found = paths_of(hcli.ok("search", "quokka migration", "--mode", mode, ghost=ghost))
            assert "private/alice/alpha.md" not in found and "shared/alpha.md" not in found, (mode, ghost)
        assert (
            paths_of(hcli.ok("search", "quokka migration", "--mode", mode, ghost="alice"))[0]
            == "private/alice/alpha.md"
        )
    assert hcli("get", ALPHA_ID, ghost="bob").exit_code == 3
    assert hcli.ok("get", "Beta", ghost="bob")["links"]["out"] == []
    assert hcli.ok("get", "Beta", ghost="alice")["links"]["out"][0]["path"] == "private/alice/alpha.md"


def test_closing_a_project_hides_it_without_reindexing(tmp_path: Path, hash_embedder: object) -> None:
    root = make_vault(tmp_path / "p", backend="auto", projects={"apollo": None})
    note(root, "project/apollo/plan.md", "The apollo launch window opens at dawn.\n", title="Launch plan")
    cli = Cli(root)
    cli.ok("index")
    assert paths_of(cli.ok("search", "launch window", ghost="bob")) == ["project/apollo/plan.md"]
    config = root / "vaultmem.toml"
    config.write_text(config.read_text().replace("[projects.apollo]", '[projects.apollo]\nmembers = ["alice"]'))
    for mode in ("bm25", "vector"):
        assert paths_of(cli.ok("search", "launch window", "--mode", mode, ghost="bob")) == [], mode
        assert paths_of(cli.ok("search", "launch window", "--mode", mode, ghost="alice")) == ["project/apollo/plan.md"]
    assert cli.ok("query", "launch window", ghost="bob")["total_searched"] == 0


def test_moved_notes_keep_their_vectors_instead_of_embedding_again(
    hcli: Cli, hvault: Path, hash_embedder: HashEmbedder
) -> None:
    _seed(hvault)
    hcli.ok("index")
    before = {m["path"]: m for m in index_contents(hvault)["collections"].popitem()[1]["metadatas"]}
    embedded = hash_embedder.texts
    (hvault / "shared" / "old").mkdir()
    shutil.move(hvault / "shared/gamma.md", hvault / "shared/old/gamma.md")  # a plain move
    (hvault / "shared/beta.md").rename(hvault / "shared/beta-moved.md")
    report = hcli.ok("index")
    assert report["moved"] == 2 and report["embedded_chunks"] == 0
    assert hash_embedder.texts == embedded  # nothing was embedded again
    contents = index_contents(hvault)
    assert contents["chroma"] == {"shared/alpha.md", "shared/old/gamma.md", "shared/beta-moved.md"}
    moved = _chunks_of(contents, "shared/old/gamma.md")
    assert [(m["chunk"], m["heading"]) for m in moved] == [(0, before["shared/gamma.md"]["heading"])]
    assert paths_of(hcli.ok("search", "okapi sanctuary", "--mode", "vector"))[0] == "shared/old/gamma.md"
    # A move that also changes the note embeds it again.
    shutil.move(hvault / "shared/old/gamma.md", hvault / "shared/gamma.md")
    (hvault / "shared/gamma.md").write_text((hvault / "shared/gamma.md").read_text() + "\nNow with tapirs.\n")
    report = hcli.ok("index")
    assert report["embedded_chunks"] > 0 and hash_embedder.texts > embedded
    assert paths_of(hcli.ok("search", "tapirs okapi", "--mode", "vector"))[0] == "shared/gamma.md"
