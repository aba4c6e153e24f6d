"""`sync` merges nothing that a case-insensitive disk would write into this clone's own
state or hooks (services/sync.py `_refuse_unsafe`): on macOS and Windows a teammate's
`.VaultMem/whoosh/_MAIN_1.toc` lands in `.vaultmem/`, where the next search unpickles it,
and `Hooks/post-merge` in the hooks folder the merge runs. Real git, one commit each."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultmem.errors import Conflict
from vaultmem.services.sync import _reaches, _refuse_unsafe
from vaultmem.vault.git import Git
from vaultmem.vault.layout import folded as _folded


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _base(tmp_path)
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    return tmp_path


def _upstream_with(repo: Path, name: str) -> str:
    _git(repo, "checkout", "-q", "-b", "up")
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"from a teammate")
    _git(repo, "add", "-f", "--", name)
    _git(repo, "commit", "-qm", "teammate")
    _git(repo, "checkout", "-q", "main")
    return "up"


@pytest.mark.parametrize(
    "name",
    [
        ".vaultmem/whoosh/_MAIN_1.toc",
        ".VAULTMEM/whoosh/_MAIN_1.toc",
        ".VaultMem/state.db",
        ".vault\u200bmem/state.db",  # HFS+ ignored zero-width marks
        ".\uff56aultmem/state.db",  # FULLWIDTH v
        ".vaultmem-tokens.json",
        ".VAULTMEM-TOKENS.JSON",
        "hooks/post-merge",
        "Hooks/post-merge",
        "HOOKS/pre-commit",
        "ho\u200coks/post-merge",
    ],
)
def test_what_a_folding_disk_writes_into_state_or_hooks_is_refused(repo: Path, name: str) -> None:
    upstream = _upstream_with(repo, name)
    with pytest.raises(Conflict, match="nothing merged") as refused:
        _refuse_unsafe(Git.of(repo), upstream)
    assert refused.value.details["paths"] == [name]


@pytest.mark.parametrize("name", ["vaultmem/state.md", "shared/.vaultmem.md", "hooks-notes/x.md", "shared/hooks/x.md"])
def test_notes_with_like_names_merge(repo: Path, name: str) -> None:
    _refuse_unsafe(Git.of(repo), _upstream_with(repo, name))  # raises nothing


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (".vaultmem", ".VAULTMEM", True),
        ("hooks/", "Ho\u200dOKS/", True),
        ("hooks/", "hooks-x/", False),
        (".vaultmem", "vaultmem", False),
        ("stra\u00dfe", "STRASSE", True),
    ],
)
def test_folded(a: str, b: str, same: bool) -> None:
    assert (_folded(a) == _folded(b)) is same


def test_a_symlink_made_at_the_hooks_folder_is_refused(tmp_path: Path) -> None:
    """An adopted vault has no hooks/ yet while core.hooksPath names it (as the README asks):
    a commit that makes `hooks` a symlink to a folder of its own scripts would have the
    merge run them (found by review: the folded prefix check missed the folder itself)."""
    _git(tmp_path, "init", "-q", "-b", "main")
    for key, value in (("user.name", "t"), ("user.email", "t@example.com"), ("core.hooksPath", "hooks")):
        _git(tmp_path, "config", key, value)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "a.md").write_text("# A\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    _git(tmp_path, "checkout", "-q", "-b", "up")
    (tmp_path / "shared" / "tools").mkdir()
    (tmp_path / "shared" / "tools" / "post-merge").write_text("#!/bin/sh\necho pwned\n")
    (tmp_path / "hooks").symlink_to("shared/tools")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "tools")
    _git(tmp_path, "checkout", "-q", "main")
    with pytest.raises(Conflict, match="changes the hooks") as refused:
        _refuse_unsafe(Git.of(tmp_path), "up")
    assert refused.value.details["paths"] == ["hooks"]


@pytest.mark.parametrize(
    ("path", "folders", "reaches"),
    [
        ("hooks", ["hooks"], True),
        ("hooks/post-merge", ["hooks"], True),
        ("Hooks", ["hooks"], True),
        ("tools", ["tools/hooks"], True),  # a folder on the way, made a symlink
        ("tools/hooks/pre-commit", ["tools/hooks"], True),
        ("tools/readme.md", ["tools/hooks"], False),
        ("hooks-notes/x.md", ["hooks"], False),
        ("shared/tools/post-merge", ["hooks", "shared/tools"], True),  # where hooks resolves now
        ("post-merge", ["."], True),
        ("shared/a.md", ["."], False),
    ],
)
def test_reaches(path: str, folders: list[str], reaches: bool) -> None:
    assert _reaches(path, folders) is reaches


def _base(tmp_path: Path, hooks_path: str | None = "hooks") -> Path:
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "config", "user.name", "t")
    _git(tmp_path, "config", "user.email", "t@example.com")
    if hooks_path is not None:
        _git(tmp_path, "config", "core.hooksPath", hooks_path)
    for name, text in (("shared/a.md", "# A\n"), ("tools/post-merge.sh", "#!/bin/sh\ntrue\n")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def _upstream_changing(repo: Path, change: Callable[[Path], None]) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-q", "-b", "up")
    change(repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "teammate")
    _git(repo, "checkout", "-q", "main")
    return "up"


def _rewrite_tool(repo: Path) -> None:
    (repo / "tools" / "post-merge.sh").write_text("#!/bin/sh\necho pwned\n")


def test_a_hook_that_links_to_a_tracked_script_guards_the_script(tmp_path: Path) -> None:
    """hooks/post-merge -> ../tools/post-merge.sh: a change to the script is a change to
    the hook (found by review)."""
    repo = _base(tmp_path)
    (repo / "hooks").mkdir()
    (repo / "hooks" / "post-merge").symlink_to("../tools/post-merge.sh")
    upstream = _upstream_changing(repo, _rewrite_tool)
    with pytest.raises(Conflict, match="changes the hooks") as refused:
        _refuse_unsafe(Git.of(repo), upstream)
    assert refused.value.details["paths"] == ["tools/post-merge.sh"]


def test_git_s_own_hooks_folder_linking_into_the_work_tree_is_guarded(tmp_path: Path) -> None:
    """No core.hooksPath: .git/hooks/post-merge linked to a tracked script (a common setup)."""
    repo = _base(tmp_path, hooks_path=None)
    (repo / ".git" / "hooks" / "post-merge").symlink_to("../../tools/post-merge.sh")
    upstream = _upstream_changing(repo, _rewrite_tool)
    with pytest.raises(Conflict, match="changes the hooks"):
        _refuse_unsafe(Git.of(repo), upstream)


def test_a_hooks_path_spelled_through_a_symlinked_folder_is_guarded(tmp_path: Path) -> None:
    """core.hooksPath absolute through a symlink to the repository; `hooks` a tracked
    symlink a commit repoints (found by review)."""
    (tmp_path / "repo").mkdir()
    repo = _base(tmp_path / "repo", hooks_path=None)
    (tmp_path / "link").symlink_to(repo)
    _git(repo, "config", "core.hooksPath", str(tmp_path / "link" / "hooks"))
    (repo / "tools-hooks").mkdir()
    (repo / "tools-hooks" / "pre-commit").write_text("#!/bin/sh\ntrue\n")
    (repo / "hooks").symlink_to("tools-hooks")

    def repoint(root: Path) -> None:
        (root / "evil").mkdir()
        (root / "evil" / "post-merge").write_text("#!/bin/sh\necho pwned\n")
        (root / "hooks").unlink()
        (root / "hooks").symlink_to("evil")

    with pytest.raises(Conflict, match="changes the hooks") as refused:
        _refuse_unsafe(Git.of(repo), _upstream_changing(repo, repoint))
    assert "hooks" in refused.value.details["paths"]


def test_a_hook_renamed_away_is_refused(tmp_path: Path) -> None:
    """`git mv hooks/pre-commit docs/` removes a person's guard; a rename lists only its new
    name unless renames are off (found by review)."""
    repo = _base(tmp_path)
    (repo / "hooks").mkdir()
    (repo / "hooks" / "pre-commit").write_text("#!/bin/sh\ntrue\n")

    def rename(root: Path) -> None:
        (root / "docs").mkdir()
        (root / "hooks" / "pre-commit").rename(root / "docs" / "pre-commit.sample")

    with pytest.raises(Conflict, match="changes the hooks") as refused:
        _refuse_unsafe(Git.of(repo), _upstream_changing(repo, rename))
    assert "hooks/pre-commit" in refused.value.details["paths"]
