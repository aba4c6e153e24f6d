"""Issue 21, item 4: `vaultmem token add|list|revoke`. Tokens live beside the disposable
`.vaultmem/` (deleting it revokes nothing), parallel adds each keep their token, a damaged
file is never written over, and only hashes are ever stored or listed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli
from vaultmem.services.tokens import TokenBook, _digest
from vaultmem.vault import racy

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")


def test_twenty_parallel_adds_give_twenty_working_tokens(vault: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    procs = [
        subprocess.Popen(
            [VAULTMEM, "token", "add", ("alice", "bob")[i % 2], "--vault", str(vault), "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(20)
    ]
    made = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        made.append(json.loads(out))
    assert len({m["token"] for m in made}) == 20 and len({m["id"] for m in made}) == 20
    book = TokenBook(vault)
    for m in made:
        entry = book.identify(m["token"])
        assert entry is not None and (entry.id, entry.ghost) == (m["id"], m["ghost"])
    stored = (vault / ".vaultmem-tokens.json").read_text()
    assert len(json.loads(stored)["tokens"]) == 20
    assert not any(m["token"] in stored for m in made)
    assert not [p for p in vault.iterdir() if p.name.endswith(".tmp")]  # no temp file left behind


def test_list_shows_ids_and_use_never_the_token(vault: Path, cli: Cli) -> None:
    made = cli.ok("token", "add", "alice")
    listed = cli.ok("token", "list")
    assert listed["tokens"] == [{"id": made["id"], "ghost": "alice", "created": made["created"], "last_used": None}]
    book = TokenBook(vault)
    assert book.identify(made["token"]) is not None
    book.flush()
    used = cli.ok("token", "list")["tokens"][0]["last_used"]
    assert used is not None and used.endswith("Z")
    text = cli("token", "list", json_=False).stdout
    assert made["id"] in text and made["token"] not in text


def test_revoke_ends_one_token_only(vault: Path, cli: Cli) -> None:
    first, second = cli.ok("token", "add", "alice"), cli.ok("token", "add", "alice")
    book = TokenBook(vault)
    assert book.identify(first["token"]) and book.identify(second["token"])
    assert cli.ok("token", "revoke", first["id"]) == {"id": first["id"], "ghost": "alice"}
    assert book.identify(first["token"]) is None  # the book reads the changed file at once
    assert book.identify(second["token"]) is not None
    again = cli("token", "revoke", first["id"])
    assert again.exit_code == 3 and again.data["error"]["code"] == "not_found"


def test_deleting_the_derived_state_revokes_nothing(vault: Path, cli: Cli) -> None:
    made = cli.ok("token", "add", "bob")
    shutil.rmtree(vault / ".vaultmem", ignore_errors=True)
    assert TokenBook(vault).identify(made["token"]) is not None
    assert [t["id"] for t in cli.ok("token", "list")["tokens"]] == [made["id"]]


def test_tokens_of_the_former_file_are_kept_and_moved(vault: Path, cli: Cli) -> None:
    from vaultmem.services.tokens import _digest

    legacy = vault / ".vaultmem" / "mcp_tokens.json"
    legacy.parent.mkdir(exist_ok=True)
    old = "vmt_from-an-earlier-version"
    legacy.write_text(
        json.dumps({"tokens": [{"ghost": "alice", "hash": _digest(old), "created": "2026-11-01T00:00:00Z"}]})
    )
    assert TokenBook(vault).identify(old) is not None  # still works before anything is written
    cli.ok("token", "add", "bob")
    assert not legacy.exists()
    assert {t["ghost"] for t in cli.ok("token", "list")["tokens"]} == {"alice", "bob"}
    assert TokenBook(vault).identify(old) is not None


def test_a_damaged_file_is_reported_and_never_written_over(vault: Path, cli: Cli) -> None:
    path = vault / ".vaultmem-tokens.json"
    path.write_text('{"tokens": [{"ghost": "alice", "hash": "sha')
    for args in (("token", "add", "alice"), ("token", "list"), ("token", "revoke", "abc")):
        res = cli(*args)
        assert res.exit_code == 5 and "fix or remove it" in res.data["error"]["message"], args
    assert path.read_text() == '{"tokens": [{"ghost": "alice", "hash": "sha'
    book = TokenBook(vault)
    assert book.identify("vmt_anything") is None and book.damaged


def test_the_token_file_is_kept_out_of_git(vault: Path, cli: Cli) -> None:
    gitignore = vault / ".gitignore"
    assert ".vaultmem-tokens.json" in gitignore.read_text()  # the template says so
    gitignore.write_text(".vaultmem/\n")  # a vault made before tokens lived here
    cli.ok("token", "add", "alice")
    cli.ok("token", "add", "bob")
    assert gitignore.read_text() == ".vaultmem/\n.vaultmem-tokens.json\n"


def test_a_ghost_sees_and_manages_only_its_own_tokens(vault: Path, cli: Cli) -> None:
    alices = cli.ok("token", "add", "alice")
    bobs = cli.ok("token", "add", "bob", ghost="bob")
    assert [t["id"] for t in cli.ok("token", "list", ghost="bob")["tokens"]] == [bobs["id"]]
    refused = cli("token", "add", "alice", ghost="bob")  # a token is an identity
    assert refused.exit_code == 5 and "for itself only" in refused.data["error"]["message"]
    hidden = cli("token", "revoke", alices["id"], ghost="bob")
    assert hidden.exit_code == 3  # as if it did not exist
    assert TokenBook(vault).identify(alices["token"]) is not None
    assert {t["ghost"] for t in cli.ok("token", "list")["tokens"]} == {"alice", "bob"}  # a person: all


@pytest.mark.parametrize("ctime", ["moved", "same-tick"])
def test_a_hand_revoke_that_keeps_size_and_mtime_holds_at_once(
    vault: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch, ctime: str
) -> None:
    """A token taken out of the file by hand, in an edit that kept its size, inode and mtime
    (the mtime put back to the nanosecond), is refused at the next request: the book reads
    the file again while its stat cannot prove it unchanged (vault/racy.py). "same-tick":
    as on a disk whose ctime stayed in the tick too (left out of the stat), with the book
    told it read the file in the tick of its mtime."""
    revoked, kept = cli.ok("token", "add", "alice"), cli.ok("token", "add", "alice")
    path = vault / ".vaultmem-tokens.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600"  # store.write_whole keeps it so
    if ctime == "same-tick":
        monkeypatch.setattr(racy, "stat_key", lambda st: (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, 0))
        monkeypatch.setattr(racy, "now_ns", lambda: path.stat().st_mtime_ns)
    book = TokenBook(vault)
    assert book.identify(revoked["token"]) is not None
    before = path.stat()
    digest = _digest(revoked["token"])
    other = digest[:-1] + ("0" if digest[-1] != "0" else "1")  # matches no token: revoked
    path.write_text(path.read_text().replace(digest, other))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    assert book.identify(revoked["token"]) is None
    assert book.identify(kept["token"]) is not None
