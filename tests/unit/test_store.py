"""File names from titles, path checks, atomic writes and conflict detection."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from vaultmem.errors import Conflict, InvalidInput, NotFound
from vaultmem.vault import store
from vaultmem.vault.layout import inside_vault


@pytest.mark.parametrize(
    ("title", "stem"),
    [
        # Obsidian names files by title: case, spaces and scripts kept
        ("Hello World", "Hello World"),
        ("Wine basics", "Wine basics"),
        ("日本語のノート", "日本語のノート"),
        ("Ünïcödé Tïtlé", "Ünïcödé Tïtlé"),
        ("ＦＵＬＬ width", "ＦＵＬＬ width"),
        ("🚀 Launch", "🚀 Launch"),
        ("file.md", "file.md"),
        ("a..b", "a..b"),
        ("50% off, (really)!", "50% off, (really)!"),
        # what Obsidian or a file system forbids becomes a space, runs collapse
        ("Wine: basics", "Wine basics"),
        ("A/B testing", "A B testing"),
        ("C#", "C"),
        ("What? Why?", "What Why"),
        ("x [draft] ^1 | y", "x draft 1 y"),
        ('say "hi" <now> *', "say hi now"),
        ("C:\\Windows\\system32", "C Windows system32"),
        ("../../etc/passwd", "etc passwd"),
        ("nul\x00byte", "nul byte"),
        ("tab\there\nnewline", "tab here newline"),
        ("a\u202eb", "a b"),
        ("\udcff bad bytes", "bad bytes"),
        # no leading dots (hidden files), no trailing dots or spaces (Windows drops them)
        (".hidden", "hidden"),
        ("end.", "end"),
        ("...", "Untitled"),
        ("  ", "Untitled"),
        ("", "Untitled"),
        ("///", "Untitled"),
    ],
)
def test_name_for_title(title: str, stem: str) -> None:
    assert store.name_for_title(title) == stem


@pytest.mark.parametrize(
    "title",
    [
        "x" * 300,
        "é" * 300,
        "日" * 300,
        "x" * 92 + "é" * 5,
        "a " * 200,
        "../" * 100,
        "\x00" * 50 + "/" * 50,
        ".." + "/.." * 60,
    ],
    ids=["ascii-300", "latin-300", "cjk-300", "cut-in-char", "words", "dotdot", "nul-slash", "dotdot-deep"],
)
def test_hostile_titles_give_safe_names(title: str) -> None:
    stem = store.name_for_title(title)
    name = f"{stem} 999.md"
    assert len(name.encode("utf-8")) <= store.MAX_NAME_BYTES
    assert stem and not stem.startswith(".") and stem == stem.strip()
    assert "/" not in stem and "\\" not in stem and stem not in (".", "..")
    assert all(ord(ch) >= 32 and ord(ch) != 127 for ch in stem)
    stem.encode("utf-8")  # no lone surrogates


@pytest.mark.parametrize(
    ("relpath", "normalized"),
    [
        ("shared/a.md", "shared/a.md"),
        ("./shared//a.md", "shared/a.md"),
        ("shared/./a.md", "shared/a.md"),
    ],
)
def test_check_relpath_normalizes(relpath: str, normalized: str) -> None:
    assert store.check_relpath(relpath) == normalized


@pytest.mark.parametrize(
    "relpath", ["../x.md", "shared/../../x.md", "/etc/passwd", "a\\b.md", "nul\x00.md", "", ".", "a/.."]
)
def test_check_relpath_refuses_escapes(relpath: str) -> None:
    with pytest.raises(InvalidInput):
        store.check_relpath(relpath)


def test_candidate_names() -> None:
    names = list(store.candidate_names("n"))
    assert names[:3] == ["n.md", "n 1.md", "n 2.md"]  # Obsidian's numbering
    assert len(set(names)) == len(names)


# --- writes on disk -----------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "vault"
    (r / "shared").mkdir(parents=True)
    return r


def test_create_unique_never_overwrites(root: Path) -> None:
    first = store.create_unique(root, "shared", "n", b"one")
    second = store.create_unique(root, "shared", "n", b"two")
    assert (first, second) == ("shared/n.md", "shared/n 1.md")
    assert (root / first).read_bytes() == b"one"
    assert (root / second).read_bytes() == b"two"
    assert sorted(p.name for p in (root / "shared").iterdir()) == ["n 1.md", "n.md"]  # no temp files left


def test_create_unique_is_case_insensitive(root: Path) -> None:
    """`Plan.md` and `plan.md` would collide on macOS and Windows and in Obsidian's links."""
    (root / "shared" / "Plan.md").write_bytes(b"x")
    assert store.create_unique(root, "shared", "plan", b"y") == "shared/plan 1.md"


def test_create_file_creates_missing_folders_with_umask_mode(root: Path) -> None:
    store.create_file(root, "private/alice/x.md", b"x")
    mode = stat.S_IMODE((root / "private/alice/x.md").stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_replace_file_keeps_mode_and_is_atomic(root: Path) -> None:
    path = root / "shared/a.md"
    path.write_bytes(b"old")
    path.chmod(0o640)
    _, stamp = store.read_file(root, "shared/a.md")
    store.replace_file(root, "shared/a.md", b"new", stamp)
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in (root / "shared").iterdir()] == ["a.md"]


def test_replace_file_conflicts_when_changed_on_disk(root: Path) -> None:
    path = root / "shared/a.md"
    path.write_bytes(b"old")
    _, stamp = store.read_file(root, "shared/a.md")
    path.write_bytes(b"changed by someone else")
    with pytest.raises(Conflict):
        store.replace_file(root, "shared/a.md", b"mine", stamp)
    assert path.read_bytes() == b"changed by someone else"
    assert [p.name for p in (root / "shared").iterdir()] == ["a.md"]


def test_replace_file_conflicts_when_deleted(root: Path) -> None:
    path = root / "shared/a.md"
    path.write_bytes(b"old")
    _, stamp = store.read_file(root, "shared/a.md")
    path.unlink()
    with pytest.raises(Conflict):
        store.replace_file(root, "shared/a.md", b"mine", stamp)
    assert not path.exists()


def test_symlink_leaving_the_vault_is_neither_read_nor_written(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"secret")
    (root / "shared/link.md").symlink_to(outside)
    with pytest.raises(NotFound):
        store.read_file(root, "shared/link.md")
    fake = store.FileStamp(6, 0, "x")
    with pytest.raises(InvalidInput):
        store.replace_file(root, "shared/link.md", b"pwned", fake)
    with pytest.raises(InvalidInput):
        store.trash_file(root, "shared/link.md")
    assert outside.read_bytes() == b"secret"
    assert (root / "shared/link.md").is_symlink()


def test_symlinked_folder_leaving_the_vault_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "private").mkdir()
    (root / "private/alice").symlink_to(outside)
    with pytest.raises(InvalidInput):
        store.create_unique(root, "private/alice", "x", b"x")
    with pytest.raises(InvalidInput):
        store.create_unique(root, "private/alice/sub", "x", b"x")
    assert list(outside.iterdir()) == []


def test_inside_vault(root: Path, tmp_path: Path) -> None:
    assert inside_vault(root, root / "shared/a.md")
    assert inside_vault(root, root)
    assert not inside_vault(root, root / "../x")
    assert not inside_vault(root, tmp_path / "vault2/x")  # a sibling sharing the prefix


def test_trash_file_moves_into_the_trash_folder(root: Path) -> None:
    (root / "shared/a.md").write_bytes(b"x")
    dest = store.trash_file(root, "shared/a.md")
    assert dest.startswith(".trash/") and dest.endswith("/shared/a.md")
    assert (root / dest).read_bytes() == b"x"
    assert not (root / "shared/a.md").exists()
    with pytest.raises(NotFound):
        store.trash_file(root, "shared/a.md")
