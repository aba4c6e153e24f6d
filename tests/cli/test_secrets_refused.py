"""Issue 25, item 4: secrets never enter memory silently. Every write that adds text refuses
a detected secret (exit 5, invalid_input) naming its kind and line, never echoing it, and
writes nothing; `--allow-secret` stores it anyway, and `lint` then reports it (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli

AWS = "AKIAIOSFODNN7EXAMPLE"  # AWS's documentation example key
GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


def files(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in vault.rglob("*.md") if ".vaultmem" not in p.parts}


def refused(cli: Cli, vault: Path, *args: str, kind: str, input: str | None = None) -> None:
    before = files(vault)
    res = cli(*args, ghost="alice", input=input)
    assert res.exit_code == 5, (res.exit_code, res.stdout, res.stderr)
    error = res.data["error"]
    assert error["code"] == "invalid_input" and kind in error["message"] and "--allow-secret" in error["message"]
    for secret in (AWS, GITHUB):
        assert secret not in res.stdout and secret not in res.stderr
        assert secret[4:12] not in res.stdout
    assert files(vault) == before  # nothing written


def test_every_write_refuses_a_secret(vault: Path, cli: Cli) -> None:
    body = f"Deploy notes.\n\naws_access_key_id = {AWS}\n"
    refused(cli, vault, "note", "create", "--title", "Deploy", "--type", "note", "--scope", "private",
            "--body", body, kind="AWS Access Key on line")  # fmt: skip
    refused(cli, vault, "capture", f"the bot token is {GITHUB}", kind="GitHub Token")
    note = cli.ok("note", "create", "--title", "Deploy", "--type", "note", "--scope", "private",
                  "--body", "Deploy notes.", ghost="alice")  # fmt: skip
    refused(cli, vault, "note", "update", note["id"], "--append", f"token {GITHUB}", kind="GitHub Token")
    refused(cli, vault, "note", "update", note["id"], "--set", f"api={AWS}", kind="AWS Access Key")
    refused(cli, vault, "note", "comment", note["id"], "--text", f"key {AWS}", kind="AWS Access Key")

    # `write`: the item with a secret is rejected with the reason, the others are written
    items = [{"type": "semantic", "content": f"The CI key is {AWS}"}, {"type": "semantic", "content": "Kites fly."}]
    res = cli.ok("write", "-", ghost="alice", input=json.dumps(items))
    assert [r["index"] for r in res["rejected"]] == [0] and len(res["written"]) == 1
    assert "AWS Access Key" in res["rejected"][0]["reason"] and AWS not in json.dumps(res)

    # a capture stored with --allow-secret is still refused when promoted without it
    cap = cli.ok("capture", f"token {GITHUB}", "--allow-secret", ghost="alice")
    refused(cli, vault, "inbox", "promote", cap["id"], "--title", "Bot", "--type", "note", "--scope", "private",
            kind="GitHub Token")  # fmt: skip


def test_allow_secret_stores_it_and_lint_reports_it(vault: Path, cli: Cli) -> None:
    made = cli.ok("note", "create", "--title", "Deploy", "--type", "note", "--scope", "private",
                  "--body", f"Deploy notes.\n\nkey = {AWS}\n", "--allow-secret", ghost="alice")  # fmt: skip
    assert AWS in (vault / made["path"]).read_text()
    # an agent appending an unrelated line to it is not blocked by what is already there
    cli.ok("note", "update", made["id"], "--append", "Rotated monthly.", ghost="alice")
    for ghost in ("alice", None):
        res = cli("lint", ghost=ghost)
        assert res.exit_code == 1
        found = [p for p in res.data["problems"] if p["code"] == "secret"]
        assert [(p["path"], p["severity"]) for p in found] == [(made["path"], "error")]
        assert "AWS Access Key on line" in found[0]["message"] and AWS not in res.stdout
    # bob sees nothing of alice's private note, its secret included
    assert not [p for p in cli("lint", ghost="bob").data["problems"] if p["code"] == "secret"]
