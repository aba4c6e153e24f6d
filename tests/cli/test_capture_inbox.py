"""Acceptance 8: `capture` into the inbox, `inbox list`, `inbox promote`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli._util import body_of, front_matter, snapshot
from tests.conftest import Cli


def test_private_capture_goes_to_the_ghosts_inbox(vault: Path, cli: Cli) -> None:
    out = cli.ok(
        "capture", "Remember: the build cache lives in /var/cache", "--tag", "build", "--source", "chat", ghost="alice"
    )
    assert set(out) == {"id", "path"}
    # named after its title, the first line, as Obsidian would name it (SPEC §2)
    assert out["path"] == "inbox/alice/Remember the build cache lives in var cache.md"
    path = vault / out["path"]
    fm = front_matter(path)
    assert (fm["id"], fm["type"], fm["scope"], fm["owner"], fm["tags"], fm["source"]) == (
        out["id"], "capture", "inbox", "alice", ["build"], "chat",
    )  # fmt: skip
    assert body_of(path) == "Remember: the build cache lives in /var/cache\n"
    assert cli.ok("get", out["id"], ghost="alice")["note"]["path"] == out["path"]
    assert cli("get", out["id"], ghost="bob").exit_code == 3


def test_shared_capture_goes_to_the_shared_inbox(vault: Path, cli: Cli) -> None:
    out = cli.ok("capture", "team fact", "--scope", "shared")  # no ghost needed
    assert out["path"] == "inbox/shared/team fact.md"
    assert cli.ok("get", out["id"], ghost="bob")["body"] == "team fact\n"
    assert cli.ok("get", out["id"])["note"]["owner"] is None


def test_capture_reads_stdin(vault: Path, cli: Cli) -> None:
    for args in (["capture"], ["capture", "-"]):
        out = cli.ok(*args, ghost="bob", input="line one\nline two\n")
        assert body_of(vault / out["path"]) == "line one\nline two\n"


def test_captures_in_the_same_second_do_not_collide(vault: Path, cli: Cli) -> None:
    paths = {cli.ok("capture", "same text", ghost="alice")["path"] for _ in range(3)}
    assert paths == {"inbox/alice/same text.md", "inbox/alice/same text 1.md", "inbox/alice/same text 2.md"}
    assert all((vault / p).read_text().endswith("same text\n") for p in paths)


def test_capture_title_from_awkward_first_line(vault: Path, cli: Cli) -> None:
    out = cli.ok(
        "capture", "\n\n  #  tab\there and a very long first line " + "word " * 40 + "\nsecond line", ghost="alice"
    )
    title = front_matter(vault / out["path"])["title"]
    assert title.startswith("tab here and a very long first line")
    assert len(title) <= 81 and "\t" not in title


def test_private_capture_without_ghost_exits_5_and_writes_nothing(vault: Path, cli: Cli) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    res = cli("capture", "orphan thought")
    assert res.exit_code == 5
    assert res.data["error"]["code"] == "invalid_input"
    assert "ghost" in res.data["error"]["message"]
    assert snapshot(vault, skip=vault / ".vaultmem") == before


@pytest.mark.parametrize(
    ("args", "ghost"), [(["   "], "alice"), (["x", "--scope", "project"], "alice"), (["x", "--tag", "a b"], "alice")]
)
def test_bad_captures_exit_5_and_write_nothing(vault: Path, cli: Cli, args: list[str], ghost: str) -> None:
    before = snapshot(vault, skip=vault / ".vaultmem")
    assert cli("capture", *args, ghost=ghost).exit_code == 5
    assert snapshot(vault, skip=vault / ".vaultmem") == before


def test_inbox_list(vault: Path, cli: Cli) -> None:
    mine = cli.ok("capture", "alice idea", "--tag", "x", ghost="alice")
    shared = cli.ok("capture", "shared idea", "--scope", "shared")
    data = cli.ok("inbox", "list", ghost="alice")
    assert data["count"] == len(data["captures"])
    by_id = {c["id"]: c for c in data["captures"]}
    assert {mine["id"], shared["id"]} <= set(by_id)
    entry = by_id[mine["id"]]
    assert (entry["path"], entry["owner"], entry["tags"], entry["excerpt"]) == (
        mine["path"],
        "alice",
        ["x"],
        "alice idea",
    )
    assert by_id[shared["id"]]["owner"] is None


def test_promote_turns_a_capture_into_a_note_and_empties_the_inbox(vault: Path, cli: Cli) -> None:
    cap = cli.ok(
        "capture", "The build cache lives in /var/cache #build", "--tag", "infra", "--source", "chat", ghost="alice"
    )
    cap_created = front_matter(vault / cap["path"])["created"]
    out = cli.ok(
        "inbox",
        "promote",
        cap["id"],
        "--title",
        "Build cache location",
        "--type",
        "fact",
        "--scope",
        "shared",
        ghost="alice",
    )
    assert {"id", "path"} <= set(out)
    assert out["path"] == "shared/Build cache location.md"
    assert out["id"] != cap["id"]
    fm = front_matter(vault / out["path"])
    assert (fm["title"], fm["type"], fm["scope"]) == ("Build cache location", "fact", "shared")
    assert cap["id"] in fm["source"]  # the source names the capture
    assert fm["tags"] == ["infra", "build"]
    assert fm["captured"] == cap_created
    assert body_of(vault / out["path"]) == "The build cache lives in /var/cache #build\n"
    # gone from the inbox (into the trash, recoverable), gone for get
    assert not (vault / cap["path"]).exists()
    assert cap["id"] not in {c["id"] for c in cli.ok("inbox", "list", ghost="alice")["captures"]}
    assert cli("get", cap["id"], ghost="alice").exit_code == 3
    assert list((vault / ".trash").rglob(cap["path"].rsplit("/", 1)[1]))
    assert cli.ok("get", "Build cache location")["note"]["source"] == fm["source"]


def test_promote_into_private_and_project(vault: Path, cli: Cli) -> None:
    a = cli.ok("capture", "private one", ghost="alice")
    out = cli.ok(
        "inbox", "promote", a["id"], "--title", "Mine", "--type", "preference", "--scope", "private", ghost="alice"
    )
    assert out["path"] == "private/alice/Mine.md"
    b = cli.ok("capture", "project one", "--scope", "shared")
    out = cli.ok(
        "inbox",
        "promote",
        b["path"],
        "--title",
        "Proj",
        "--type",
        "decision",
        "--scope",
        "project",
        "--project",
        "example",
        ghost="bob",
    )
    assert out["path"] == "project/example/Proj.md"
    assert front_matter(vault / out["path"])["project"] == "example"


@pytest.mark.parametrize(
    ("target", "args", "code"),
    [
        ("capture", ["--title", "Welcome to the vault", "--type", "fact", "--scope", "shared"], 4),  # title taken
        ("capture", ["--title", "T", "--type", "bogus", "--scope", "shared"], 5),
        ("capture", ["--title", "T", "--type", "fact", "--scope", "galaxy"], 5),
        ("note", ["--title", "T", "--type", "fact", "--scope", "shared"], 5),  # not a capture
        ("missing", ["--title", "T", "--type", "fact", "--scope", "shared"], 3),
    ],
)
def test_failed_promote_keeps_the_capture(vault: Path, cli: Cli, target: str, args: list[str], code: int) -> None:
    cap = cli.ok("capture", "keep me", ghost="alice")
    ref = {"capture": cap["id"], "note": "Welcome to the vault", "missing": "01JZZZZZZZZZZZZZZZZZZZZZZZ"}[target]
    before = snapshot(vault, skip=vault / ".vaultmem")
    res = cli("inbox", "promote", ref, *args, ghost="alice")
    assert res.exit_code == code, res.stdout
    assert snapshot(vault, skip=vault / ".vaultmem") == before
    assert (vault / cap["path"]).exists()
