"""Acceptance 11: `lint` reports every problem and finishes on anything; `lint --fix` adds ids only."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.cli._util import front_matter, vault_files, write
from tests.conftest import Cli, journaled
from vaultmem.vault.ids import derived_id, is_ulid


def _alias_bomb() -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
        prev = name
    return "---\n" + "\n".join(lines) + "\n---\nbody\n"


def test_healthy_vault_exits_0(cli: Cli) -> None:
    res = cli("lint")
    assert res.exit_code == 0
    assert res.data == {"problems": [], "errors": 0, "warnings": 0, "checked": res.data["checked"]}
    assert res.data["checked"] >= 8


def test_warnings_alone_exit_0(vault: Path, cli: Cli) -> None:
    write(vault, "shared/no-id.md", "---\ntitle: No Id\n---\nsee [[Nowhere]]\n")
    write(vault, "shared/dup-a.md", "---\nid: DA\ntitle: Dup\n---\n")
    write(vault, "shared/sub/dup-b.md", "---\nid: DB\ntitle: dup\n---\n")
    made = cli.ok("note", "create", "--title", "Edited", "--type", "note", "--scope", "shared", "--body", "original")
    path = vault / made["path"]
    path.write_text(path.read_text().replace("original", "changed by hand"))
    res = cli("lint")
    assert res.exit_code == 0
    found = {(p["path"], p["severity"], p["code"]) for p in res.data["problems"]}
    assert found == {
        ("shared/no-id.md", "warning", "missing_id"),
        ("shared/no-id.md", "warning", "dangling_link"),
        ("shared/dup-a.md", "warning", "duplicate_title"),
        ("shared/sub/dup-b.md", "warning", "duplicate_title"),
    }  # the note edited by hand is not a problem (issue 26): `review` says who changed it
    assert res.data["errors"] == 0 and res.data["warnings"] == 4


ERROR_CASES = {
    "shared/invalid.md": ("---\ntitle: [unclosed\n---\nbody\n", "invalid_yaml"),
    "shared/list.md": ("---\n- a\n- b\n---\nbody\n", "frontmatter_not_mapping"),
    "shared/scope.md": ("---\nid: S1\nscope: private\n---\n", "scope_mismatch"),
    "private/alice/owner.md": ("---\nid: O1\nowner: bob\n---\n", "owner_mismatch"),
    "shared/range.md": ("---\nid: R1\ntrust_score: 1.5\n---\n", "out_of_range"),
    "shared/type.md": ("---\nid: T1\ntype: gossip\n---\n", "unknown_type"),
    "shared/dup-id-1.md": ("---\nid: SAME\n---\n", "duplicate_id"),
    "shared/dup-id-2.md": ("---\nid: SAME\n---\n", "duplicate_id"),
    "shared/bomb.md": (_alias_bomb(), "yaml_alias_bomb"),
}


def test_errors_exit_1_each_listed_with_path_severity_code_message(vault: Path, cli: Cli) -> None:
    for relpath, (text, _) in ERROR_CASES.items():
        write(vault, relpath, text)
    res = cli("lint")
    assert res.exit_code == 1
    for problem in res.data["problems"]:
        assert set(problem) == {"path", "severity", "code", "message"}
        assert problem["severity"] in ("error", "warning") and problem["message"]
    errors = {(p["path"], p["code"]) for p in res.data["problems"] if p["severity"] == "error"}
    assert errors == {(path, code) for path, (_, code) in ERROR_CASES.items()}
    assert res.data["errors"] == len(ERROR_CASES)


def test_human_output_and_exit_code(vault: Path, cli: Cli) -> None:
    write(vault, "shared/invalid.md", "---\ntitle: [unclosed\n---\n")
    res = cli("lint", json_=False)
    assert res.exit_code == 1
    assert "shared/invalid.md" in res.stdout and "invalid_yaml" in res.stdout


def test_lint_finishes_on_hostile_files(vault: Path, cli: Cli) -> None:
    write(vault, "shared/binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 10)
    write(vault, "shared/latin1.md", "---\ntitle: Café crème\n---\nNaïve résumé\n".encode("latin-1"))
    write(vault, "shared/bomb.md", _alias_bomb())
    write(vault, "shared/deep.md", "---\na: " + "[" * 200_000 + "\n---\n")
    write(vault, "shared/big.md", "---\ntitle: big\n---\n" + ("x" * 99 + "\n") * 52_429)  # 5 MB
    write(vault, "shared/empty.md", b"")
    write(vault, "shared/only-dashes.md", "---\n")
    write(vault, "shared/recursive.md", "---\na: &x [*x]\n---\n")
    start = time.perf_counter()
    res = cli("lint")
    assert time.perf_counter() - start < 10
    assert res.exit_code == 1
    codes = {p["path"]: set() for p in res.data["problems"]}
    for p in res.data["problems"]:
        codes[p["path"]].add(p["code"])
    assert "binary" in codes["shared/binary.md"]
    assert "not_utf8" in codes["shared/latin1.md"]
    assert "yaml_alias_bomb" in codes["shared/bomb.md"]
    assert "invalid_yaml" in codes["shared/deep.md"]
    assert "too_large" in codes["shared/big.md"]
    assert "yaml_alias_bomb" in codes["shared/recursive.md"]
    assert "shared/empty.md" not in codes or codes["shared/empty.md"] <= {"missing_id"}
    # paths and problems only: never a line of a note's content
    assert "Naïve" not in res.stdout and "lol" not in res.stdout
    # the other commands keep working next to those files
    assert cli.ok("get", "Welcome to the vault")["note"]["path"] == "shared/Welcome to the vault.md"
    assert cli.ok("get", "shared/latin1.md")["note"]["path"] == "shared/latin1.md"
    assert cli("get", "shared/binary.md").exit_code == 3
    assert cli("get", "shared/big.md").exit_code == 3


def test_fix_adds_missing_ids_and_changes_nothing_else(vault: Path, cli: Cli) -> None:
    cases = {
        "shared/plain.md": b"no front matter at all\n",
        "shared/empty-fm.md": b"---\n---\nempty front matter\n",
        "shared/comment-fm.md": b"---\n# only a comment\n---\nbody\n",
        "shared/hand.md": b"---\ntitle: Hand\nstatus: draft   # c\ntags: [a, b]\n---\nBody  \n\n\n",
        "shared/crlf.md": b"---\r\ntitle: Windows\r\nx: 1\r\n---\r\nline1\r\nline2\r\n",
        "shared/bom.md": b"\xef\xbb\xbf---\ntitle: Bom\n---\nbody\n",
        "shared/no-newline.md": b"---\ntitle: NoNL\n---\nlast line without newline",
        "Top Level Note.md": b"# Heading\n\ntext #tag\n",
    }
    untouchable = {
        "shared/latin1.md": "---\ntitle: café\n---\nx\n".encode("latin-1"),
        "shared/broken.md": b"---\ntitle: [oops\n---\nx\n",
        "shared/list.md": b"---\n- a\n---\nx\n",
        "shared/unclosed.md": b"---\ntitle: never closed\nbody\n",
        "shared/binary.md": b"\x00\x01\x02",
    }
    for relpath, data in {**cases, **untouchable}.items():
        write(vault, relpath, data)
    before = vault_files(vault)
    res = cli("lint", "--fix")
    fixed = {f["path"]: f["id"] for f in res.data["fixed"]}
    assert set(fixed) == set(cases)
    assert not any(p["code"] == "missing_id" and p["path"] in fixed for p in res.data["problems"])
    after = vault_files(vault)
    journal = {p for p in after if p.startswith(".vaultmem-journal/")}
    assert set(after) - journal == set(before) - journal
    # the fixes are in the write journal, one line each (vault/journal.py)
    assert sorted(e.path for e in journaled(vault)) == sorted(fixed)
    for relpath, data in before.items():
        if relpath in journal:  # init's lines, then the fixes' appended
            assert after[relpath].startswith(data)
            continue
        if relpath not in cases:
            assert after[relpath] == data, f"{relpath} changed"
            continue
        new_id = fixed[relpath]
        assert is_ulid(new_id)
        newline = b"\r\n" if b"\r\n" in data else b"\n"
        id_line = b"id: " + new_id.encode() + newline
        assert after[relpath].count(id_line) == 1
        # the derived id it had is kept beside the new one, so what an agent stored still resolves
        assert front_matter(vault / relpath)["former_ids"] == [derived_id(relpath)]
        former = re.compile(rb"former_ids:(?: \[[^\]\r\n]*\]\r?\n|\r?\n(?:  ?- [^\r\n]*\r?\n)+)")
        # remove the added lines (and the fence a file without front matter needed): the rest is byte-identical
        stripped = former.sub(b"", after[relpath].replace(id_line, b"", 1), count=1)
        if not data.lstrip(b"\xef\xbb\xbf").startswith(b"---"):
            stripped = stripped.replace(b"---\n---\n", b"", 1)
        assert stripped == data, relpath
        assert front_matter(vault / relpath)["id"] == new_id
    # a second run has nothing left to fix, and the ids are what get sees
    again = cli("lint", "--fix")
    assert again.data["fixed"] == []
    assert vault_files(vault) == after
    for relpath, new_id in fixed.items():
        assert cli.ok("get", new_id)["note"]["path"] == relpath
        assert cli.ok("get", derived_id(relpath))["note"]["id"] == new_id  # the old id, too


def test_fix_never_touches_notes_with_ids(vault: Path, cli: Cli) -> None:
    before = vault_files(vault)
    res = cli("lint", "--fix")
    assert res.exit_code == 0 and res.data["fixed"] == []
    assert vault_files(vault) == before


def test_lint_needs_no_index_and_ignores_ghost(vault: Path, cli: Cli) -> None:
    res = cli("lint", ghost="alice")
    assert res.exit_code == 0
    assert not (vault / ".vaultmem/whoosh").exists()


@pytest.mark.parametrize(("relpath", "code"), [("private/loose.md", "misplaced"), ("project/loose.md", "misplaced")])
def test_misplaced_notes(vault: Path, cli: Cli, relpath: str, code: str) -> None:
    write(vault, relpath, "---\nid: L1\n---\n")
    res = cli("lint")
    assert res.exit_code == 1
    assert (relpath, code) in {(p["path"], p["code"]) for p in res.data["problems"]}
