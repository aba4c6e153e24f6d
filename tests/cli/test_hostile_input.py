"""Issue 13, items 3, 4, 10-14, 16 and 17: hostile input through the CLI gets exit 5 (or 2
for usage) with a clear message, in bounded time, with no traceback, and changes nothing
(nothing at all outside the vault)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli._util import front_matter, git, snapshot, write
from tests.conftest import Cli, Result
from tests.integration._vaults import VAULTMEM, make_vault
from vaultmem.vault.layout import MAX_NOTE_BYTES


def refused(res: Result, code: int = 5, says: str = "") -> dict[str, Any]:
    """An error exit with one JSON error document, a message, and no traceback anywhere."""
    assert res.exit_code == code, f"exit {res.exit_code}\nstdout: {res.stdout}\nstderr: {res.stderr}"
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    error = res.data["error"]
    assert error["code"] == {5: "invalid_input", 2: "usage"}[code]
    assert error["message"] and says.lower() in error["message"].lower(), error["message"]
    return dict(error)


@pytest.fixture
def outside(tmp_path: Path, vault: Path) -> Iterator[Path]:
    """A folder beside the vault; asserts afterwards that nothing outside the vault changed."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.md").write_text("do not touch\n")
    before = snapshot(tmp_path, skip=vault)
    yield folder
    assert snapshot(tmp_path, skip=vault) == before, "something outside the vault changed"


def _unchanged(vault: Path) -> dict[str, tuple[str, str]]:
    return snapshot(vault, skip=vault / ".vaultmem")


def _register_by_hand(vault: Path, *names: str) -> None:
    """A person edits vaultmem.toml and lists ghosts `ghost add` would refuse."""
    config = vault / "vaultmem.toml"
    ghosts = ", ".join(f'"{n}"' for n in ("alice", "bob", *names))
    config.write_text(config.read_text().replace('ghosts = ["alice", "bob"]', f"ghosts = [{ghosts}]"))
    assert all(f'"{n}"' in config.read_text() for n in names)


# --- 3. reserved ghost names ----------------------------------------------------------------

RESERVED = ["shared", "inbox", "private", "diary", "project", "projects", "reference", "hooks", "trash"]


@pytest.mark.usefixtures("outside")
@pytest.mark.parametrize("name", RESERVED)
def test_reserved_ghost_name_cannot_be_added(vault: Path, cli: Cli, name: str) -> None:
    before = _unchanged(vault)
    for command in (["ghost", "add", name], ["init", str(vault.parent / "second"), "--ghost", name]):
        refused(cli(*command, vault=command[0] != "init"), says="reserved")
    assert _unchanged(vault) == before
    assert not (vault.parent / "second").exists()
    assert name not in cli.ok("ghost", "list")["ghosts"]


@pytest.mark.usefixtures("outside")
def test_ghost_named_shared_cannot_capture_into_the_shared_inbox(
    vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register_by_hand(vault, "shared", "inbox")
    before = _unchanged(vault)
    for ghost in ("shared", "inbox"):
        refused(cli("capture", "my private thought", ghost=ghost), says="reserved")
        refused(cli("note", "create", "--title", "t", "--type", "note", "--scope", "private", ghost=ghost))
        refused(cli("search", "thought", ghost=ghost), says="reserved")
    monkeypatch.setenv("VAULTMEM_GHOST", "shared")
    refused(cli("capture", "my private thought"), says="reserved")
    monkeypatch.delenv("VAULTMEM_GHOST")
    assert _unchanged(vault) == before
    # the names are left out of the vault's ghosts, with a warning, never half-registered
    listed = cli("ghost", "list")
    assert listed.exit_code == 0 and "shared" not in listed.data["ghosts"]


def test_mcp_server_refuses_a_reserved_ghost(vault: Path) -> None:
    _register_by_hand(vault, "shared")
    res = subprocess.run(
        [str(VAULTMEM), "mcp", "--vault", str(vault), "--ghost", "shared"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 5, res.stderr
    assert "reserved" in res.stderr and "Traceback" not in res.stderr


# --- 4. the size limit, before anything is written --------------------------------------------

BIG = "word " * (MAX_NOTE_BYTES // 5 + 10)  # just over 2 MiB


def _body_writes(note_id: str, body_file: Path, text: str) -> list[tuple[list[str], str | None]]:
    """(command, stdin) of every way a body reaches a note: create and update, from a file
    holding `text` and from stdin."""
    create = ["note", "create", "--title", "New", "--type", "note", "--scope", "shared"]
    return [
        ([*create, "--body-file", str(body_file)], None),
        ([*create, "--body-file", "-"], text),
        (["note", "update", note_id, "--append", "-"], text),
        (["note", "update", note_id, "--body-file", str(body_file)], None),
    ]


@pytest.mark.usefixtures("outside")
def test_note_over_the_size_limit_is_refused_by_every_write(
    vault: Path, cli: Cli, tmp_path_factory: pytest.TempPathFactory
) -> None:
    body_file = tmp_path_factory.mktemp("input") / "big.md"
    body_file.write_text(BIG)
    small = cli.ok("note", "create", "--title", "Small", "--type", "note", "--scope", "shared", "--body", "x")
    before = _unchanged(vault)
    for command, stdin in (
        *_body_writes(small["id"], body_file, BIG),
        (["note", "create", "--title", "Big", "--type", "note", "--scope", "shared", "--body", BIG], None),
        (["note", "comment", small["id"], "--text", BIG], None),
    ):
        refused(cli(*command, input=stdin), says="at most 2 MiB")
    refused(cli("capture", BIG, ghost="alice"), says="capture is larger than")  # captures stop at 1 MiB
    assert _unchanged(vault) == before
    # the note is still there and still answers
    assert cli.ok("get", small["id"])["body"] == "x\n"
    assert cli("lint").exit_code == 0


@pytest.mark.parametrize(
    "command",
    [
        ["note", "create", "--title", "Z", "--type", "fact", "--scope", "shared", "--body-file", "/dev/zero"],
        ["capture", "-"],
        ["write", "-"],
    ],
)
def test_an_endless_input_is_read_no_further_than_the_limit(vault: Path, command: list[str]) -> None:
    """Found by an attacker's probe: `--body-file /dev/zero` (or stdin) was read whole, until
    memory ran out: a traceback, or the process killed. A batch of writes is read up to
    256 MiB (it holds many notes)."""
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    argv = [sys.executable, "-m", "vaultmem", "--vault", str(vault), "--ghost", "alice", "--json", *command]
    with open("/dev/zero", "rb") as endless:
        env = {**os.environ, "VAULTMEM_NO_AUTOSTART": "1"}
        done = subprocess.run(argv, stdin=endless, capture_output=True, text=True, timeout=300, env=env)
    refused(Result(done.returncode, done.stdout, done.stderr), says="MiB is read")


@pytest.mark.usefixtures("outside")
def test_promoting_a_capture_into_an_oversized_note_is_refused(vault: Path, cli: Cli) -> None:
    # a capture edited by hand to just under the limit: its note, with more front matter, is over
    body = "x" * (MAX_NOTE_BYTES - 200)
    write(vault, "inbox/alice/Huge capture.md", f"---\ntitle: Huge capture\ntype: capture\n---\n{body}\n")
    before = _unchanged(vault)
    res = cli(
        "inbox", "promote", "Huge capture", "--title", "Huge", "--type", "fact", "--scope", "shared", ghost="alice"
    )
    refused(res, says="at most 2 MiB")
    assert _unchanged(vault) == before


@pytest.mark.usefixtures("outside")
def test_write_rejects_an_oversized_memory_and_writes_the_rest(vault: Path, cli: Cli) -> None:
    items = [{"type": "semantic", "content": BIG}, {"type": "semantic", "content": "a small fact"}]
    data = cli.ok("write", "-", ghost="alice", input=json.dumps(items))
    assert [r["index"] for r in data["rejected"]] == [0]
    assert "at most 2 MiB" in data["rejected"][0]["reason"]
    assert [w["index"] for w in data["written"]] == [1]
    assert all(p.stat().st_size <= MAX_NOTE_BYTES for p in vault.rglob("*.md"))


# --- a NUL character: written, the note would be read as binary and never found again -------


@pytest.mark.usefixtures("outside")
@pytest.mark.parametrize("nul", ["\x00", "a\x00b nulword", "end\x00"])
def test_a_nul_character_is_refused_by_every_write(
    vault: Path, cli: Cli, tmp_path_factory: pytest.TempPathFactory, nul: str
) -> None:
    body_file = tmp_path_factory.mktemp("input") / "nul.md"
    body_file.write_text(nul)
    small = cli.ok("note", "create", "--title", "Small", "--type", "note", "--scope", "shared", "--body", "x")
    before = _unchanged(vault)
    for command, stdin in (*_body_writes(small["id"], body_file, nul), (["capture", "-", "--scope", "shared"], nul)):
        refused(cli(*command, input=stdin, ghost="alice"), says="NUL")
    assert _unchanged(vault) == before
    assert cli.ok("get", small["id"])["body"] == "x\n"  # still there, still found
    data = cli.ok(
        "write",
        "-",
        ghost="alice",
        input=json.dumps([{"type": "semantic", "content": nul}, {"type": "semantic", "content": "fine"}]),
    )
    assert [r["index"] for r in data["rejected"]] == [0] and "NUL" in data["rejected"][0]["reason"]
    assert [w["index"] for w in data["written"]] == [1]
    # in front matter YAML writes it escaped: the note stays text, and the comment says it
    cli.ok("note", "comment", small["id"], "--text", f"see {nul}", ghost="alice")
    assert cli.ok("get", small["id"])["comments"][-1]["text"] == f"see {nul}"


def test_a_note_with_a_file_name_of_250_bytes_can_be_written(vault: Path, cli: Cli) -> None:
    """A person may name a file up to the file system's 255 bytes; the write's temp file,
    beside it, must not run past that (it did: an internal error, lint --fix half done)."""
    name = "L" * 250
    write(vault, f"shared/{name}.md", "---\ntitle: long\n---\nbody\n")
    write(vault, "shared/z after.md", "no front matter\n")
    cli.ok("note", "update", name, "--append", "more")
    fixed = cli.ok("lint", "--fix")
    assert {f["path"] for f in fixed["fixed"]} >= {"shared/z after.md"}
    assert "more" in cli.ok("get", name)["body"]
    assert not [p for p in (vault / "shared").iterdir() if p.name.endswith(".tmp")]


# --- 10. lint names no other ghost's titles -------------------------------------------------


def test_lint_does_not_report_private_titles_shared_between_ghosts(vault: Path, cli: Cli) -> None:
    for ghost in ("alice", "bob"):
        cli.ok("note", "create", "--title", "Salary plans", "--type", "note", "--scope", "private", ghost=ghost)
        cli.ok("note", "create", "--title", "Journal", "--type", "episode", "--scope", "diary", ghost=ghost)
    write(vault, "shared/a.md", "---\nid: DA\ntitle: Same\n---\n")
    write(vault, "shared/b.md", "---\nid: DB\ntitle: same\n---\n")
    problems = cli.ok("lint")["problems"]
    dups = sorted(p["path"] for p in problems if p["code"] == "duplicate_title")
    assert dups == ["shared/a.md", "shared/b.md"]  # titles are unique only in shared/
    assert not any("private/" in p["message"] or "diary/" in p["message"] for p in problems)


# --- 11. note update --set checks what create and validate check -------------------------------


@pytest.fixture
def shared_note(cli: Cli) -> dict[str, Any]:
    return dict(cli.ok("note", "create", "--title", "Deploy", "--type", "skill", "--scope", "shared", "--body", "b"))


@pytest.mark.usefixtures("outside")
def test_update_set_refuses_what_create_refuses(vault: Path, cli: Cli, shared_note: dict[str, Any]) -> None:
    hidden = cli.ok("note", "create", "--title", "Secret", "--type", "note", "--scope", "private", ghost="alice")
    before = _unchanged(vault)
    for assignment, says in (
        (f"parent={hidden['id']}", "not found"),  # alice's note, seen from bob: as if missing
        ("parent=Secret", "not found"),
        ("parent=No such note", "not found"),
        (f"parent={shared_note['id']}", "own parent"),
        ('aliases=["one\\ntwo"]', "control characters"),
        ("expires=garbage", "ISO-8601"),
        ("expires=[1, 2]", "ISO-8601"),
        ("last_validated_by=alice/gpt-x", "note validate"),
        ("last_validated_at=2026-01-01T00:00:00Z", "note validate"),
    ):
        refused(cli("note", "update", shared_note["id"], "--set", assignment, ghost="bob"), says=says)
    assert _unchanged(vault) == before


def test_update_set_accepts_good_values(vault: Path, cli: Cli, shared_note: dict[str, Any]) -> None:
    parent = cli.ok("note", "create", "--title", "Ops", "--type", "note", "--scope", "shared")
    sets = ["parent=Ops", "aliases=[Ship it, Release]", "expires=2030-01-02"]
    cli.ok("note", "update", shared_note["id"], *[a for s in sets for a in ("--set", s)], ghost="bob")
    fm = front_matter(vault / shared_note["path"])
    assert fm["parent"] == parent["id"]  # stored as an id, as `note create --parent` does
    assert fm["aliases"] == ["Ship it", "Release"]
    assert fm["expires"] == "2030-01-02T00:00:00"  # Obsidian's Date & time form (UTC)
    assert cli.ok("get", "Release")["note"]["id"] == shared_note["id"]


# --- 12. deeply nested JSON -----------------------------------------------------------------


@pytest.mark.usefixtures("outside")
@pytest.mark.parametrize("depth", [100_000, 500])
def test_write_with_deeply_nested_json_exits_5(vault: Path, cli: Cli, depth: int) -> None:
    before = _unchanged(vault)
    deep = "[" * depth + "]" * depth
    for text in (deep, '[{"type": "semantic", "content": "x", "context": {"k": ' + deep + "}}]"):
        refused(cli("write", "-", ghost="alice", input=text), says="nested too deeply")
    assert _unchanged(vault) == before


# --- 13. note delete never follows a symlinked trash ----------------------------------------------


def test_delete_refuses_a_symlinked_trash_leaving_the_vault(vault: Path, cli: Cli, outside: Path) -> None:
    made = cli.ok(
        "note", "create", "--title", "Mine", "--type", "note", "--scope", "private", "--body", "secret", ghost="alice"
    )
    (vault / ".trash").symlink_to(outside, target_is_directory=True)
    refused(cli("note", "delete", made["id"], ghost="alice"), says="symlink")
    assert (vault / made["path"]).read_text().endswith("secret\n")  # still in place
    # `outside` fixture: nothing appeared outside the vault


def test_delete_refuses_a_symlinked_trash_inside_the_vault(vault: Path, cli: Cli) -> None:
    made = cli.ok(
        "note", "create", "--title", "Mine", "--type", "note", "--scope", "private", "--body", "secret", ghost="alice"
    )
    (vault / ".trash").symlink_to(vault / "shared", target_is_directory=True)
    before = _unchanged(vault)
    refused(cli("note", "delete", made["id"], ghost="alice"), says="symlink")
    assert _unchanged(vault) == before  # alice's note did not land in shared/
    (vault / ".trash").unlink()
    out = cli.ok("note", "delete", made["id"], ghost="alice")
    assert (vault / out["trashed_to"]).is_file() and not (vault / out["trashed_to"]).is_symlink()


# --- 14. nan and inf are no numbers -----------------------------------------------------------

NOTE = ["note", "create", "--title", "t", "--type", "note", "--scope", "shared"]
FLOAT_OPTIONS = [
    (["search", "x"], "--bm25-weight"),
    (["search", "x"], "--embedding-weight"),
    (["search", "x"], "--rrf-k"),
    (["search", "x"], "--trust-bias"),
    (["search", "x"], "--min-trust"),
    (["search", "x"], "--min-confidence"),
    (["search", "x"], "--min-importance"),
    (["search", "x"], "--min-score"),
    (["query", "x"], "--min-relevance"),
    (["reference", "search", "topic", "question"], "--rrf-k"),
    (NOTE, "--trust"),
    (NOTE, "--confidence"),
    (NOTE, "--importance"),
    (NOTE, "--ttl-days"),
    (["note", "validate", "Welcome to the vault", "--by", "alice/x"], "--trust"),
]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "-Infinity"])
@pytest.mark.parametrize(("command", "option"), FLOAT_OPTIONS, ids=lambda v: v if isinstance(v, str) else v[0])
def test_non_finite_float_options_exit_5(vault: Path, cli: Cli, command: list[str], option: str, value: str) -> None:
    before = _unchanged(vault)
    error = refused(cli(*command, option, value, ghost="alice"), says=option)
    assert "finite" in error["message"]
    assert _unchanged(vault) == before


def test_every_float_option_of_every_command_is_finite() -> None:
    """Options added later are held to it too: no command takes a plain float."""
    from vaultmem.cli.main import COMMANDS, build_module_commands

    seen, plain = 0, []

    def walk(name: str, command: Any) -> None:
        nonlocal seen
        for param in command.params:
            kind = type(param.type).__name__
            if "Float" in kind:
                seen += 1
                if kind == "FloatParamType":
                    plain.append(f"{name} {param.opts}")
        for sub_name, sub in getattr(command, "commands", {}).items():
            walk(f"{name} {sub_name}", sub)

    for module in sorted({module for module, _ in COMMANDS.values()}):
        for name, command in build_module_commands(module).items():
            walk(name, command)
    assert seen >= len(FLOAT_OPTIONS) and not plain, plain


def test_finite_floats_still_work(cli: Cli) -> None:
    data = cli.ok("search", "welcome", "--bm25-weight", "2.5", "--trust-bias", "0", "--min-score", "0", "--explain")
    assert json.dumps(data, allow_nan=False)


def test_json_output_never_carries_nan() -> None:
    from vaultmem.cli.output import dumps
    from vaultmem.errors import VaultmemError

    assert dumps({"score": 0.5}) == '{"score":0.5}'
    for bad in (float("nan"), float("inf")):
        with pytest.raises(VaultmemError, match="NaN or infinity") as caught:
            dumps({"results": [{"score": bad}]})
        assert caught.value.exit_code == 1


# --- 16. temp files of killed writes ------------------------------------------------------------


def test_vault_gitignore_ignores_write_temp_files(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "fresh"
    cli.ok("init", str(root), "--ghost", "alice", vault=False)
    git(root, "init", "-q")
    write(root, "private/alice/.Plans.md.vaultmem-1a2b3c4d.tmp", "a private body\n")
    write(root, "shared/.Deploy.md.vaultmem-deadbeef.tmp", "a body\n")
    git(root, "add", "-A")
    staged = git(root, "diff", "--cached", "--name-only").splitlines()
    assert staged and not any(".tmp" in p for p in staged)


def _aged(path: Path, seconds: float) -> Path:
    stamp = path.stat().st_mtime - seconds
    os.utime(path, (stamp, stamp))
    return path


def test_index_removes_stale_write_temp_files(vault: Path, cli: Cli) -> None:
    stale = [
        _aged(write(vault, "shared/.Deploy.md.vaultmem-1a2b3c4d.tmp", "body\n"), 120),
        _aged(write(vault, "private/alice/.Plans.md.vaultmem-0f0f0f0f.tmp", "private body\n"), 3600),
    ]
    kept = [
        write(vault, "shared/.Fresh.md.vaultmem-2b2b2b2b.tmp", "a write in progress\n"),  # too young
        _aged(write(vault, "shared/.other.tmp", "not ours\n"), 3600),
        _aged(write(vault, "shared/.x.vaultmem-nothex!.tmp", "not our pattern\n"), 3600),
        _aged(write(vault, "shared/notes.vaultmem-1a2b3c4d.tmp", "not hidden: not ours\n"), 3600),
    ]
    cli.ok("index")
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in kept)


# --- 17. parallel ghost add ---------------------------------------------------------------------


def test_parallel_ghost_adds_all_register(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", ghosts=["alice"])
    env = {**os.environ, "VAULTMEM_NO_AUTOSTART": "1"}
    names = [f"g{i}" for i in range(10)]
    procs = [
        subprocess.Popen(
            [str(VAULTMEM), "ghost", "add", name, "--vault", str(root), "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for proc, (stdout, stderr) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, stderr
        assert json.loads(stdout)["added"] is True
    listed = subprocess.run(
        [str(VAULTMEM), "ghost", "list", "--vault", str(root), "--json"], env=env, capture_output=True, text=True
    )
    assert sorted(json.loads(listed.stdout)["ghosts"]) == sorted(["alice", *names])
    assert not [p.name for p in root.iterdir() if p.name.endswith(".tmp")]


def test_a_note_with_unclosed_front_matter_is_not_rewritten(vault: Path, cli: Cli) -> None:
    """Obsidian reads an unclosed `---` block as text, and so does vaultmem; a write would
    put a new block in front and make what the person meant as front matter body text."""
    path = write(vault, "shared/Open.md", "---\ntitle: Open\ntags: [a]\nThe body.\n")
    before = path.read_bytes()
    for command in (["note", "update", "Open", "--append", "more"], ["note", "comment", "Open", "--text", "hi"]):
        refused(cli(*command, ghost="alice"), says="no closing '---'")
    assert path.read_bytes() == before
    assert "unclosed_frontmatter" in {p["code"] for p in cli.ok("lint", json_=True)["problems"]}


def test_many_tags_to_filter_by_or_fields_to_set_are_invalid_input(vault: Path, cli: Cli) -> None:
    """1,000 filter tags ran Whoosh's matcher past the recursion limit (an internal error);
    100,000 fields set in one update took 115 s, holding every other caller of the server."""
    made = cli.ok("note", "create", "--title", "T", "--type", "note", "--scope", "shared", "--body", "zanzibar")
    tags = [arg for i in range(101) for arg in ("--tag", f"t{i}")]
    refused(cli("search", "zanzibar", "--mode", "bm25", *tags), says="at most 100 tags")
    assert "results" in cli.ok("search", "zanzibar", "--mode", "bm25", *tags[:200])
    sets = [arg for i in range(201) for arg in ("--set", f"k{i}=v")]
    refused(cli("note", "update", made["id"], *sets), says="at most 200 fields")
    assert cli.ok("note", "update", made["id"], *sets[:400])["version"] == 2


def test_a_folder_that_cannot_be_listed_is_named_by_lint(
    vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by an attacker's probe: a folder without read permission was skipped without a
    word (an unreadable file is reported), and its notes were missing from every index. The
    permission is played by os.scandir, as root reads any folder. Another ghost's is not
    named to a ghost."""
    from vaultmem.vault import layout

    write(vault, "shared/locked/in.md", "---\ntitle: In\n---\nlocked word\n")
    write(vault, "private/bob/locked/in.md", "---\ntitle: Bob in\n---\nlocked word\n")
    real = os.scandir

    def scandir(path: Any) -> Any:
        if str(path).endswith("/locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(layout.os, "scandir", scandir)

    def named(ghost: str | None) -> list[str]:
        problems = cli("lint", ghost=ghost).data["problems"]
        return sorted(p["path"] for p in problems if p["code"] == "folder_unreadable")

    assert named(None) == ["private/bob/locked", "shared/locked"]
    assert named("alice") == ["shared/locked"]


# What one note's text can hold that once made every command of every ghost exit 1 with a
# traceback (a probe's finds): a value its YAML tag cannot hold, and a quote 600 deep.
STOPPERS = {
    "bad-int-tag": '---\ntitle: BadInt\ntype: note\nx: !!int abc\nrel: "[[Bobs]]"\n---\nbody [[Bobs]]\n',
    "bad-bool-tag": "---\ntitle: BadBool\ntype: note\nflag: !!bool maybe\n---\nbody\n",
    "bad-date-tag": "---\ntitle: BadDate\ntype: note\nwhen: !!timestamp 2026-02-30\n---\nbody\n",
    "deep-quote": "---\ntitle: Quoted\ntype: note\n---\n" + ">" * 600 + "     [[Bobs]]\n",
}


@pytest.mark.parametrize("name", sorted(STOPPERS))
def test_one_hostile_note_stops_nothing_for_anyone(vault: Path, cli: Cli, name: str) -> None:
    """Alice's private note is a bad file to be reported to her, never a stop for bob."""
    bobs = cli.ok("note", "create", "--title", "Bobs", "--type", "note", "--scope", "shared", "--body", "bob text")
    write(vault, f"private/alice/{name}.md", STOPPERS[name])
    for command in (["get", bobs["id"]], ["links", bobs["id"]], ["search", "bob text"], ["lint"], ["orphans"]):
        res = cli(*command, ghost="bob")
        assert res.exit_code == 0 and "Traceback" not in res.stderr, (command, res.stderr)
        assert name not in res.stdout + res.stderr  # nor does bob learn of alice's note
    moved = cli.ok("note", "move", bobs["id"], "Bobs Two", "--dry-run", ghost="bob")
    assert moved
    problems = cli("lint", ghost="alice").data["problems"]
    if name == "deep-quote":
        assert cli.ok("links", "Bobs", ghost="alice")["in"]  # still a link, read on the safe side
    else:
        assert any(p["path"] == f"private/alice/{name}.md" and p["code"] == "invalid_yaml" for p in problems)


# --- 18. reference search checks its numbers as search does ------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [("--rrf-k", "-1"), ("--rrf-k", "-5"), ("--rrf-k", "0"), ("--limit", "0"), ("--limit", "201")],
)
def test_reference_search_refuses_out_of_range_numbers(vault: Path, cli: Cli, option: str, value: str) -> None:
    """A k of -1 divided by zero (exit 1, a traceback), -5 ranked by negative scores, 0 and a
    limit of 0 quietly became the defaults; `search` refuses each with exit 5."""
    says = "rrf-k" if option == "--rrf-k" else "limit"
    refused(cli("reference", "search", "vault conventions", "how are ghosts named", option, value), says=says)
    refused(cli("search", "ghosts", option, value), says=says)
    found = cli.ok("reference", "search", "vault conventions", "how are ghosts named", "--rrf-k", "1", "--limit", "2")
    assert 0 < found["returned"] <= 2 and all(r["summary"]["score"] > 0 for r in found["results"])


# --- 19. a trust bias past ±2 leaves no note with a negative score -----------------------------


@pytest.mark.parametrize(("bias", "low"), [("3", "Doubted"), ("-10", "Trusted")])
def test_a_big_trust_bias_drops_nothing_at_min_score_0(cli: Cli, bias: str, low: str) -> None:
    """1 + bias × (trust − 0.5) went below 0, and that note vanished although `--min-score 0`
    keeps all; it stays, last, at score 0."""
    for title, trust in (("Doubted", "0"), ("Trusted", "1")):  # bodies apart: twins collapse to one
        cli.ok("note", "create", "--title", title, "--type", "note", "--scope", "shared",
               "--body", f"quokka facts as {title.lower()} told", "--trust", trust)  # fmt: skip
    found = cli.ok("search", "quokka", "--mode", "bm25", "--min-score", "0", "--trust-bias", bias)["results"]
    assert [r["summary"]["title"] for r in found][-1] == low and len(found) == 2
    assert found[-1]["summary"]["score"] == 0


# --- 20. watch checks its interval as every number is checked ----------------------------------


@pytest.mark.parametrize("value", ["0", "-3", "0.5", "nan"])
def test_watch_refuses_a_rescan_interval_out_of_range(vault: Path, cli: Cli, value: str) -> None:
    """Out of range is invalid input (exit 5), as for every other number; it was a usage error
    (exit 2)."""
    refused(cli("watch", "--rescan-interval", value), says="rescan-interval")
