"""Links to files other than notes, as Obsidian resolves them (a reviewer's find: an embed of
an image that is there was a dangling link in `links`, `lint` and `review`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from vaultmem.vault.attachments import names_a_file

BODY = (
    "Diagram ![[pic.png]], the board [[board.canvas]], by path [[img/pic.png]], "
    "as markdown [x](img/pic.png), one not there ![[missing.png]], bob's ![[scan.pdf]], "
    "and a note [[Release v1.2]].\n"
)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("pic.png", True),
        ("img/Pic.PNG", True),
        ("board.canvas", True),
        ("Release v1.2", True),  # looked for, found or not: a walk, never a wrong answer
        ("Note", False),
        ("Note.md", False),
        (".hidden", False),
        ("ends with a dot.", False),
        ("a sentence. with a dot", False),
    ],
)
def test_names_a_file(target: str, expected: bool) -> None:
    assert names_a_file(target) is expected


def test_a_link_to_a_file_that_is_there_is_not_dangling(cli: Cli, vault: Path) -> None:
    (vault / "shared" / "E.md").write_text(BODY)
    (vault / "shared" / "img").mkdir()
    (vault / "shared" / "img" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (vault / "board.canvas").write_text("{}")
    (vault / "private" / "bob" / "scan.pdf").write_bytes(b"%PDF-1.4")
    for ghost, hidden in (("alice", ["scan.pdf"]), ("bob", [])):
        dangling = [d["target"] for d in cli.ok("links", "shared/E.md", ghost=ghost)["dangling"]]
        # bob's file counts for bob only: for alice it is as absent as a missing one
        assert dangling == ["missing.png", *hidden, "Release v1.2"], ghost
        problems = cli("lint", ghost=ghost).data["problems"]
        told = sorted(p["message"] for p in problems if p["code"] == "dangling_link")
        assert told == sorted(f"link target {t!r} does not resolve" for t in ["missing.png", *hidden, "Release v1.2"])
