"""Issue 9.3 and 9.4: renames and moves keep every link working; deletes can be undone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Cli
from vaultmem.index.statedb import NoteRecord
from vaultmem.services.moves import legacy_slug, plan_names, slug_named


def _note(vault: Path, relpath: str, title: str | None, body: str, note_id: str | None = None) -> Path:
    lines = ["---"]
    if note_id:
        lines.append(f"id: {note_id}")
    if title:
        lines.append(f"title: {title!r}" if ":" in title else f"title: {title}")
    lines += ["type: note", "version: 1", "---", body, ""]
    path = vault / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _git(vault: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "core.quotepath=off", *args],
        cwd=vault, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


ID_WINE = "01JAAAAAAAAAAAAAAAAAAAAAA1"
ID_DEPLOY = "01JAAAAAAAAAAAAAAAAAAAAAA3"


@pytest.fixture
def slug_vault(vault: Path) -> Path:
    """A vault written by vaultmem before names followed Obsidian: slug file names."""
    _note(vault, "shared/wine-basics.md", "Wine basics", "Red Burgundy. See [[Deploy steps#Setup|setup]].", ID_WINE)
    _note(vault, "shared/wine-basics-2.md", "Wine: basics", "Back to [[wine-basics]] and ![[wine-basics#Intro]].",
          "01JAAAAAAAAAAAAAAAAAAAAAA2")  # fmt: skip
    _note(
        vault,
        "shared/deploy-steps.md",
        "Deploy steps",
        "| a | b |\n|---|---|\n| [[wine-basics\\|wine]] | [md](wine-basics.md) |\n\n"
        f"`[[wine-basics]]` in code stays. By id: [[{ID_WINE}]].",
        ID_DEPLOY,
    )
    _note(vault, "private/alice/my-secret.md", "My secret", "see [[wine-basics]] and [x](../../shared/deploy-steps.md)")
    _note(vault, "diary/alice/2026-11-20-first-day.md", "First day", "Started.", "01JAAAAAAAAAAAAAAAAAAAAAA5")
    _note(vault, "shared/Hand named.md", None, "# Hand named\n[[wine-basics]]")
    _git(vault, "init", "-q")
    _git(vault, "add", "-A")
    _git(vault, "commit", "-qm", "slug vault")
    return vault


def test_fix_names_dry_run_then_apply(slug_vault: Path, cli: Cli) -> None:
    vault = slug_vault
    before_ids = {ref: cli.ok("get", ref, ghost="alice")["note"]["id"] for ref in ("My secret", "Deploy steps")}
    dry = cli.ok("fix-names", "--dry-run")
    assert dry["dry_run"] is True
    assert {(m["from"], m["to"]) for m in dry["moves"]} == {
        ("shared/wine-basics.md", "shared/Wine basics.md"),
        ("shared/wine-basics-2.md", "shared/Wine basics 1.md"),
        ("shared/deploy-steps.md", "shared/Deploy steps.md"),
        ("private/alice/my-secret.md", "private/alice/My secret.md"),
        ("diary/alice/2026-11-20-first-day.md", "diary/alice/First day.md"),
    }
    assert _git(vault, "status", "--porcelain") == ""  # a dry run changes nothing
    done = cli.ok("fix-names")
    assert done["moves"] == dry["moves"] and done["links_updated"] == dry["links_updated"]
    _git(vault, "add", "-A")
    stat = _git(vault, "diff", "--cached", "-M20%", "--name-status")
    assert stat.count("R100") == 2  # renamed, content untouched
    notes = [line for line in stat.splitlines() if ".vaultmem-journal/" not in line]  # who moved them: the journal
    assert all(line[0] in "RM" for line in notes)  # renames and edits, nothing added or lost
    diff = _git(vault, "diff", "--cached", "-M20%", "-U0", "--", ".", ":!.vaultmem-journal")
    changed = [line for line in diff.splitlines() if line[:1] in "+-"]
    changed = [line for line in changed if not line.startswith(("+++", "---"))]
    assert sorted(changed) == sorted(
        [
            "-| [[wine-basics\\|wine]] | [md](wine-basics.md) |",
            "+| [[Wine basics\\|wine]] | [md](Wine%20basics.md) |",
            "-Back to [[wine-basics]] and ![[wine-basics#Intro]].",
            "+Back to [[Wine basics]] and ![[Wine basics#Intro]].",
            "-see [[wine-basics]] and [x](../../shared/deploy-steps.md)",
            "+see [[Wine basics]] and [x](../../shared/Deploy%20steps.md)",
            "-[[wine-basics]]",
            "+[[Wine basics]]",
        ]
    ), "only link targets change"
    text = (vault / "shared/Deploy steps.md").read_text(encoding="utf-8")
    assert "`[[wine-basics]]` in code stays" in text and f"[[{ID_WINE}]]" in text
    # ids kept, links resolve, nothing dangles, and a second run has nothing to do
    after_ids = {ref: cli.ok("get", ref, ghost="alice")["note"]["id"] for ref in ("My secret", "Deploy steps")}
    assert after_ids == before_ids
    doc = cli.ok("get", "shared/Wine basics.md", ghost="alice")
    assert doc["note"]["id"] == ID_WINE
    assert {link["path"] for link in doc["links"]["in"]} == {
        "shared/Wine basics 1.md", "shared/Deploy steps.md", "shared/Hand named.md", "private/alice/My secret.md",
    }  # fmt: skip
    assert not cli.ok("get", "Wine: basics")["links"]["dangling"]
    assert cli.ok("fix-names")["moves"] == []
    assert cli("lint").exit_code == 0


def test_note_move_renames_and_relinks(slug_vault: Path, cli: Cli) -> None:
    vault = slug_vault
    cli.ok("fix-names")
    secret_before = (vault / "private/alice/My secret.md").read_bytes()
    out = cli.ok("note", "move", "Deploy steps", "Deployment", ghost="bob")
    assert out["moves"] == [{"id": ID_DEPLOY, "from": "shared/Deploy steps.md", "to": "shared/Deployment.md"}]
    # Every link to the note is rewritten (issue 22: links are the vault's integrity), but
    # bob is told only of what he may see (SPEC §3): alice's private note is never named.
    assert out["links_updated"] == ["shared/Wine basics.md"] and out["skipped"] == []
    secret_after = (vault / "private/alice/My secret.md").read_bytes()
    assert secret_after != secret_before and b"Deployment.md" in secret_after
    assert not cli.ok("get", "My secret", ghost="alice")["links"]["dangling"]
    # A ghost's move writes vault paths: which bare name is unambiguous may depend on
    # notes it cannot see.
    assert "[[shared/Deployment#Setup|setup]]" in (vault / "shared/Wine basics.md").read_text(encoding="utf-8")
    assert cli.ok("get", ID_DEPLOY)["note"]["path"] == "shared/Deployment.md"
    # its title was its file name, as in Obsidian: the rename renamed it
    assert cli.ok("get", ID_DEPLOY)["note"]["title"] == "Deployment"
    # into a folder: relative markdown links of the moved note itself still resolve
    moved = cli.ok("note", "move", ID_DEPLOY, "shared/ops/")
    assert moved["moves"][0]["to"] == "shared/ops/Deployment.md"
    text = (vault / "shared/ops/Deployment.md").read_text(encoding="utf-8")
    assert "[md](../Wine%20basics.md)" in text
    assert not cli.ok("get", ID_DEPLOY)["links"]["dangling"]


def test_a_move_keeps_relative_attachments_and_never_overwrites(cli: Cli, vault: Path) -> None:
    cli.ok("note", "create", "--title", "Pic", "--type", "note", "--scope", "shared",
           "--body", "![a](img/a.png) and [spec](<files/the spec.pdf#p2>) and [web](https://x.org/a.png)")  # fmt: skip
    cli.ok("note", "move", "Pic", "shared/sub/")
    text = (vault / "shared/sub/Pic.md").read_text(encoding="utf-8")
    assert "![a](../img/a.png)" in text and "[spec](<../files/the spec.pdf#p2>)" in text
    assert "[web](https://x.org/a.png)" in text
    # a change of letter case onto another file: exit 4, both files as they were
    made = cli.ok("note", "create", "--title", "Wine", "--type", "note", "--scope", "shared", "--body", "mine")
    (vault / "shared/wine.md").write_text("Person words.\n", encoding="utf-8")
    res = cli("note", "move", made["id"], "wine")
    assert res.exit_code == 4
    assert (vault / "shared/wine.md").read_text(encoding="utf-8") == "Person words.\n"
    assert "mine" in (vault / "shared/Wine.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("private/alice/Deploy", 5),  # other readers: refused, it would change who sees it
        ("Wine basics", 4),  # taken
        ("bad: name", 5),  # not a name Obsidian accepts
        (".hidden/x", 5),
    ],
)
def test_note_move_refusals_change_nothing(slug_vault: Path, cli: Cli, target: str, code: int) -> None:
    cli.ok("fix-names")
    _git(slug_vault, "add", "-A")
    _git(slug_vault, "commit", "-qm", "renamed")
    res = cli("note", "move", "Deploy steps", target, ghost="alice")
    assert res.exit_code == code, res.stdout
    assert _git(slug_vault, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    ("path", "title", "expected"),
    [
        ("shared/wine-basics.md", "Wine basics", True),
        ("shared/wine-basics-2.md", "Wine basics", True),
        ("diary/bob/2026-11-20-first-day.md", "First day", True),
        ("inbox/bob/20261120T101500Z-raw-thought.md", "Raw thought about the build cache", True),
        ("shared/Wine basics.md", "Wine basics", False),
        ("shared/2024 plan.md", "Plan for 2024", False),  # named by a person: left alone
        ("shared/notes.md", "Meeting notes", False),
    ],
)
def test_slug_named(path: str, title: str, expected: bool) -> None:
    assert slug_named(NoteRecord(path=path, size=0, mtime_ns=0, hash="", status="note", title=title)) is expected


def test_plan_names_is_unique_in_any_case() -> None:
    rows = [
        NoteRecord(path="shared/plan.md", size=0, mtime_ns=0, hash="", status="note", title="Plan"),
        NoteRecord(path="shared/plan-2.md", size=0, mtime_ns=0, hash="", status="note", title="PLAN"),
        NoteRecord(path="shared/x.md", size=0, mtime_ns=0, hash="", status="note", title="x"),
    ]
    plan = plan_names(rows, ["shared/Plan 1.md", *(r.path for r in rows)], every=False)
    # plan.md -> Plan.md would differ in letter case only: left; PLAN.md would collide with it
    assert plan == {"shared/plan-2.md": "shared/PLAN 2.md"}
    assert legacy_slug("Wine: basics!") == "wine-basics"


# --- delete and the trash ---------------------------------------------------------------------


def test_delete_warns_then_restore(cli: Cli, vault: Path) -> None:
    target = cli.ok("note", "create", "--title", "Target", "--type", "fact", "--scope", "shared", "--body", "t")
    cli.ok("note", "create", "--title", "Linker", "--type", "fact", "--scope", "shared", "--body", "see [[Target]]")
    cli.ok("note", "create", "--title", "Hidden linker", "--type", "fact", "--scope", "private",
           "--body", "see [[Target]]", ghost="alice")  # fmt: skip
    res = cli("note", "delete", "Target", ghost="bob")
    assert res.exit_code == 0
    assert [s["path"] for s in res.data["linked_from"]] == ["shared/Linker.md"]  # alice's note not named
    assert "warning" in res.stderr and "shared/Linker.md" in res.stderr and "Hidden" not in res.stderr
    listed = cli.ok("trash", "list", ghost="bob")
    assert [t["id"] for t in listed["trashed"]] == [target["id"]] and listed["count"] == 1
    assert cli("get", target["id"]).exit_code == 3
    restored = cli.ok("trash", "restore", target["id"], ghost="bob")
    assert restored["path"] == "shared/Target.md"
    assert cli.ok("get", "Target")["note"]["id"] == target["id"]
    assert cli.ok("trash", "list")["count"] == 0


def test_restore_never_overwrites(cli: Cli, vault: Path) -> None:
    made = cli.ok("note", "create", "--title", "Target", "--type", "fact", "--scope", "shared", "--body", "old")
    cli.ok("note", "delete", made["id"])
    again = cli.ok("note", "create", "--title", "Target", "--type", "fact", "--scope", "shared", "--body", "new")
    res = cli("trash", "restore", made["id"])
    assert res.exit_code == 4 and res.data["error"]["code"] == "conflict"
    assert cli.ok("get", "Target")["note"]["id"] == again["id"]
    assert cli("trash", "restore", "01JZZZZZZZZZZZZZZZZZZZZZZZ").exit_code == 3


def test_trash_is_private_as_the_note_was(cli: Cli) -> None:
    made = cli.ok("note", "create", "--title", "Secret", "--type", "fact", "--scope", "private",
                  "--body", "hunter2", ghost="alice")  # fmt: skip
    cli.ok("note", "delete", made["id"], ghost="alice")
    assert cli.ok("trash", "list", ghost="bob")["count"] == 0
    res = cli("trash", "restore", made["id"], ghost="bob")
    assert res.exit_code == 3 and "Secret" not in res.stdout
    assert cli.ok("trash", "list", ghost="alice")["count"] == 1
    assert re.match(r"^private/alice/Secret\.md$", cli.ok("trash", "restore", made["id"], ghost="alice")["path"])


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: [broken\n---\nBody.\n",  # YAML that does not parse
        "---\n- a\n- b\n---\nBody.\n",  # front matter that is a list
        "---\na: &x [*x]\n---\nBody.\n",  # an alias loop
        "---\ntitle: Open\nBody, the front matter never closed.\n",
        "Body, no front matter.\n",
    ],
    ids=["broken-yaml", "list", "alias-loop", "unclosed", "none"],
)
def test_moving_a_note_vaultmem_cannot_rewrite_moves_it_and_says_so(cli: Cli, vault: Path, text: str) -> None:
    """A move renames the file; the title it takes from its name needs no write. Before, the
    file moved and the command then failed (exit 5) on the title it tried to write."""
    (vault / "shared" / "Old name.md").write_text(text, encoding="utf-8")
    report = cli.ok("note", "move", "Old name", "New name")
    assert [(m["from"], m["to"]) for m in report["moves"]] == [("shared/Old name.md", "shared/New name.md")]
    assert (vault / "shared" / "New name.md").read_text(encoding="utf-8") == text
    assert not (vault / "shared" / "Old name.md").exists()


def test_a_note_whose_title_is_its_name_is_renamed_with_it(cli: Cli, vault: Path) -> None:
    made = cli.ok("note", "create", "--title", "Old name", "--type", "note", "--scope", "shared", "--body", "x")
    cli.ok("note", "move", made["id"], "New name")
    assert cli.ok("get", made["id"])["note"]["title"] == "New name"
    assert "title: New name" in (vault / "shared" / "New name.md").read_text(encoding="utf-8")


def test_a_rename_to_a_title_another_note_holds_moves_nothing(cli: Cli, vault: Path) -> None:
    """Found by an attacker's probe: the move was made, links rewritten, and only then the
    note's new title found taken (exit 4, the note at its new name under its old title)."""
    _note(vault, "shared/a/Gamma.md", "Gamma", "gamma")
    _note(vault, "shared/b/Beta.md", "Beta", "the real beta")
    (vault / "shared" / "Ref.md").write_text("see [[Gamma]]\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in (vault / "shared").rglob("*.md")}
    for dry in ((), ("--dry-run",)):
        res = cli("note", "move", "Gamma", "Beta", *dry)
        assert res.exit_code == 4 and "nothing moved" in res.data["error"]["message"], res.stdout
        assert {p: p.read_bytes() for p in (vault / "shared").rglob("*.md")} == before


def test_a_move_leaves_links_in_indented_code_and_rewrites_indented_bullets(cli: Cli, vault: Path) -> None:
    """A data-safety probe's find: `note move` rewrote a `[[link]]` in a 4-space-indented
    code block, which Obsidian shows as code (no link; its rename leaves it). The indented
    lines of a bullet, a nested bullet and a paragraph's continuation are no code: their
    links are rewritten, and the index counts them as Obsidian's graph does."""
    _note(vault, "shared/Target.md", "Target", "t")
    body = (
        "Intro.\n\n    code: [[Target]] and [[Nowhere]]\n\n"
        "- a bullet\n\n    its next paragraph: [[Target]]\n"
        "- outer\n\t- nested [[Target]]\n"
        "\nA paragraph\n    going on: [[Target]]\n"
    )
    ref = _note(vault, "shared/Ref.md", "Ref", body)
    links = cli.ok("get", "Ref")["links"]
    assert links["dangling"] == [] and len(links["out"]) == 1  # [[Nowhere]] is code, no link
    cli.ok("note", "move", "Target", "Renamed")
    text = ref.read_text(encoding="utf-8")
    assert "    code: [[Target]] and [[Nowhere]]\n" in text
    assert "    its next paragraph: [[shared/Renamed]]\n" in text
    assert "\t- nested [[shared/Renamed]]\n" in text and "    going on: [[shared/Renamed]]\n" in text
    assert text.count("Renamed]]") == 3


def test_a_move_reads_a_crlf_note_s_code_as_code(cli: Cli, vault: Path) -> None:
    """A probe's find: in a CRLF file a blank line is `\\r`, which the scanner read as a
    paragraph going on, so `note move` rewrote a link in the indented code under it, while
    the index (reading LF) called it code."""
    _note(vault, "shared/Target.md", "Target", "t")
    crlf = vault / "shared/Crlf.md"
    crlf.write_bytes(b"---\r\ntitle: Crlf\r\ntype: note\r\n---\r\nbody [[Target]]\r\n\r\n    [[Target]] in code\r\n")
    assert len(cli.ok("get", "Crlf")["links"]["out"]) == 1
    cli.ok("note", "move", "Target", "Renamed")
    text = crlf.read_bytes()
    assert text.endswith(b"body [[shared/Renamed]]\r\n\r\n    [[Target]] in code\r\n"), text
