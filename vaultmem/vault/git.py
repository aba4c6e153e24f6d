"""Git itself, through its command line: the history of the vault's files (issue 25).

vaultmem never reimplements git. It asks `git` (measured against pygit2: one `git diff
--name-status` or `git cat-file --batch` over 1,000 files costs a few tens of milliseconds,
and the command line needs no native wheel and reads every repository format git reads).
The vault may be the repository or a folder inside one: paths here are vault-relative, and
converted to and from the repository's at this edge.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultmem.errors import InvalidInput, VaultmemError
from vaultmem.paths import GIT_INDEX_LOCK
from vaultmem.vault.layout import utf8_name, vault_of_its_own
from vaultmem.vault.note import ParsedNote, parse_note

# Revision syntax that looks up a commit by what its message says (HEAD^{/text}, :/text) or
# a file by its path (REV:path, :path): a yes/no answer to one of these told a ghost what
# other ghosts' commit messages hold (their --reason, counts of their private notes) and
# which paths a commit has, a character at a time. Dates in @{...} may hold colons.
REFLOG_SELECTOR = re.compile(r"@\{[^{}]*\}")


def searches_history(rev: str) -> bool:
    """Whether a revision asks git to search messages or name a path (not a commit)."""
    bare = REFLOG_SELECTOR.sub("", rev)
    return ":" in bare or "{/" in bare


WORKTREE = None  # a side of a comparison that is the files as they are now
STAGED = ":"  # a side that is git's index: what the next commit would hold

# Git must never ask on a terminal, page, or read a user's diff settings that change output.
# Pathspecs are literal: a note may be named `Wh*.md`, and a glob would reach other files.
_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "LC_ALL": "C",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_LITERAL_PATHSPECS": "1",
}


def index_lock_path(root: Path) -> Path | None:
    """The lock file git holds while it writes the work tree and index of the repository
    holding `root` (a pull, a checkout, a merge), found without running git: the watcher
    asks on every burst of file events. None outside a repository."""
    for folder in (root, *root.parents):
        dot = folder / ".git"
        try:
            if dot.is_dir():
                return dot / GIT_INDEX_LOCK
            if dot.is_file():  # a worktree or submodule: `gitdir: <path>`
                text = dot.read_text(encoding="utf-8", errors="replace").strip()
                if not text.startswith("gitdir:"):
                    return None
                target = Path(text[len("gitdir:") :].strip())
                return (target if target.is_absolute() else folder / target) / GIT_INDEX_LOCK
        except OSError:
            return None
    return None


class GitError(VaultmemError):
    exit_code = 1
    code = "git"

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr = stderr  # all git said, for callers that look for a reason in it


def _reason(stderr: str, returncode: int) -> str:
    """The line of git's stderr that says what went wrong: the first `fatal:` or `error:`
    line; else the last. git ends many failures with advice ("Please make sure you have the
    correct access rights\nand the repository exists."), whose last line alone says nothing."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return next(
        (line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else f"exit {returncode}"
    )


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's change between two sides: status A (added), M, D, R (renamed)."""

    status: str
    path: str  # vault-relative, after (before, for D)
    old_path: str | None = None  # R: where it was


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    author_name: str
    author_email: str
    at: str  # ISO-8601 author date
    subject: str
    trailers: dict[str, list[str]]


class Git:
    def __init__(self, root: Path, top: Path, prefix: str) -> None:
        self.root = root  # the vault
        self.top = top  # the repository's work tree
        self.prefix = prefix  # the vault's folder in it, "" or ending in "/"
        self._own_vaults: dict[str, bool] = {}  # folder -> holds a vault of its own

    @classmethod
    def of(cls, root: Path) -> Git:
        """The repository holding the vault; InvalidInput when there is none (or no git)."""
        if shutil.which("git") is None:
            raise InvalidInput("git is not installed: review, history, revert and commit need it")
        try:
            out = _run(root, ["rev-parse", "--show-toplevel", "--show-prefix"]).split("\n")
        except GitError:
            raise InvalidInput(f"{root} is not in a git repository: `git init` it first") from None
        return cls(root, Path(out[0]), out[1] if len(out) > 1 else "")

    # --- running git ---------------------------------------------------------------------

    # Git runs in the vault's folder: pathspecs (after `--`) are vault-relative paths; what
    # git prints (diff, log, ls-tree --full-name) and `rev:path` names are the repository's.
    def run(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> str:
        return _run(self.root, list(args), input, env)

    def run_bytes(self, *args: str, input: bytes | None = None) -> bytes:
        return _run_bytes(self.root, list(args), input)

    def vault_path(self, repo_path: str) -> str | None:
        """A repository path as vault-relative; None when outside the vault, or inside a
        vault of its own within it (layout.vault_of_its_own: this vault's walk leaves it
        alone, and so must what its history says, or another vault's private notes would
        read here as shared ones)."""
        if not repo_path.startswith(self.prefix):
            return None
        rel = repo_path[len(self.prefix) :]
        folders = rel.split("/")[:-1]
        for depth in range(1, len(folders) + 1):
            if self._own_vault("/".join(folders[:depth])):
                return None
        return rel

    def _own_vault(self, folder: str) -> bool:
        if folder not in self._own_vaults:
            self._own_vaults[folder] = vault_of_its_own(folder, os.path.join(self.root, folder))
        return self._own_vaults[folder]

    def repo_path(self, vault_path: str) -> str:
        return self.prefix + vault_path

    # --- questions -------------------------------------------------------------------------

    def git_path(self, name: str) -> Path:
        """Where git keeps `name` of its own (`hooks`, a state file): in the git dir, which a
        linked worktree or `$GIT_DIR` puts elsewhere than `.git`."""
        return Path(self.run("rev-parse", "--path-format=absolute", "--git-path", name).strip())

    def has_head(self) -> bool:
        try:
            self.run("rev-parse", "--verify", "-q", "HEAD^{commit}")
            return True
        except GitError:
            return False

    def merge_text(self, ours: str, base: str, theirs: str) -> tuple[str, int]:
        return merge_text(ours, base, theirs)

    def is_ancestor(self, a: str, b: str) -> bool:
        """Whether commit `a` is `b` or one of its ancestors."""
        try:
            self.run("merge-base", "--is-ancestor", a, b)
            return True
        except GitError:
            return False

    def first_parent(self, sha: str) -> str | None:
        """A commit's first parent; None for a root commit."""
        parents = self.run("rev-list", "--parents", "-n", "1", sha).split()
        return parents[1] if len(parents) > 1 else None

    def resolve(self, rev: str) -> str:
        """The commit a revision names; InvalidInput for one that names none."""
        if rev.startswith("-") or searches_history(rev):
            raise InvalidInput(f"{rev!r} is not a revision (a commit, a branch or tag, HEAD~N, REV@{{date}})")
        try:
            return self.run("rev-parse", "--verify", "-q", f"{rev}^{{commit}}").strip()
        except GitError:
            raise InvalidInput(f"{rev!r} names no commit of this repository") from None

    def changes(self, base: str | None, head: str | None) -> list[FileChange]:
        """The vault's changed files from `base` (None: the empty tree) to `head` (WORKTREE:
        the files now, untracked ones included), renames detected: by git's similarity, and a
        note deleted at one path and added at another with the same id, which git misses when
        a small note is moved and edited at once (its bookkeeping lines are most of it)."""
        return self._same_notes(self._changes(base, head), base, head)

    def _same_notes(self, changes: list[FileChange], base: str | None, head: str | None) -> list[FileChange]:
        """`changes` with each note that left one path and arrived at another, its id the
        same (an id of its own, held by one note on each side), as one rename."""
        gone = [c.path for c in changes if c.status == "D" and c.path.endswith(".md")]
        new = [c.path for c in changes if c.status == "A" and c.path.endswith(".md")]
        if base is None or not gone or not new:
            return changes
        was, now = _ids(self.contents(base, gone)), _ids(self.contents(head, new))
        moved = {now[i]: was[i] for i in now.keys() & was.keys()}  # new path -> old path
        olds = set(moved.values())
        return [
            FileChange("R", c.path, moved[c.path]) if c.status == "A" and c.path in moved else c
            for c in changes
            if not (c.status == "D" and c.path in olds)
        ]

    def _changes(self, base: str | None, head: str | None) -> list[FileChange]:
        old = base or self.empty_tree()
        args = ["diff", "--no-ext-diff", "--no-textconv", "--name-status", "-z", "-M", old]
        if head == STAGED:
            return _parse_name_status(self._names(*args, "--cached", "--", "."), self)
        if head is not None:
            return _parse_name_status(self._names(*args, head, "--", "."), self)
        # The working tree, untracked files included and renames detected among them (a note
        # moved by hand is a new untracked file and a missing tracked one): compared through
        # an index of our own, so the user's staged changes are neither used nor touched.
        import tempfile

        with tempfile.TemporaryDirectory(prefix="vaultmem-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            if base is not None:
                self.run("read-tree", base, env=env)
            self.run("add", "-A", "--", ".", env=env)
            return _parse_name_status(self._names(*args, "--cached", "--", ".", env=env), self)

    def _names(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Git's list of file names with a name that is not UTF-8 kept as it is (lone
        surrogates, which _parse_name_status leaves out), not turned into another name."""
        return _run_bytes(self.root, list(args), None, env).decode("utf-8", "surrogateescape").rstrip("\n")

    def empty_tree(self) -> str:
        return self.run("hash-object", "-t", "tree", "/dev/null").strip()

    def contents(self, rev: str | None, paths: Iterable[str]) -> dict[str, bytes | None]:
        """Each vault path's bytes at `rev` (WORKTREE: on disk); None where it does not exist.
        One `git cat-file --batch` for every path."""
        wanted = list(dict.fromkeys(paths))
        out: dict[str, bytes | None] = {}
        if rev is None:
            for path in wanted:
                try:
                    out[path] = (self.root / path).read_bytes()
                except OSError:
                    out[path] = None
            return out
        if not wanted:
            return out
        prefix = ":" if rev == STAGED else f"{rev}:"
        request = "".join(f"{prefix}{self.repo_path(p)}\n" for p in wanted).encode("utf-8")
        data = self.run_bytes("cat-file", "--batch", input=request)
        at = 0
        for path in wanted:
            end = data.index(b"\n", at)
            header = data[at:end].decode("utf-8", "replace")
            at = end + 1
            if header.endswith(" missing") or header.endswith(" ambiguous"):
                out[path] = None
                continue
            size = int(header.rsplit(" ", 1)[1])
            kind = header.rsplit(" ", 2)[1]
            out[path] = data[at : at + size] if kind == "blob" else None
            at += size + 1
        return out

    def log(self, args: Sequence[str], paths: Sequence[str] = ()) -> list[Commit]:
        """Commits of `git log ARGS -- PATHS`, newest first, with their trailers."""
        fmt = "%H%x1f%an%x1f%ae%x1f%aI%x1f%s%x1f%(trailers:only,unfold)%x1e"
        out = self.run("log", f"--format={fmt}", *args, "--", *(list(paths) or ["."]))
        commits = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            sha, name, email, at, subject, trailers = (record.split("\x1f") + [""] * 6)[:6]
            commits.append(Commit(sha, name, email, at, subject, _trailers(trailers)))
        return commits


def merge_text(ours: str, base: str, theirs: str, diff3: bool = False, marker_size: int = 7) -> tuple[str, int]:
    """`git merge-file`: the three-way merge of `base`'s change to `theirs` into `ours`;
    (text with standard conflict markers where both changed the same lines, how many
    conflicts; `diff3`: with the base's lines too). Needs no repository."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="vaultmem-merge-") as tmp:
        names = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(text.encode("utf-8", "surrogateescape"))
            names.append(str(path))
        try:
            labels = ["-L", "ours", "-L", "base", "-L", "theirs", *(["--diff3"] if diff3 else [])]
            labels.append(f"--marker-size={marker_size}")
            proc = subprocess.run(
                ["git", "merge-file", "-p", *labels, *names], capture_output=True, env=_env(None), check=False
            )
        except OSError as exc:
            raise GitError(f"git could not run: {exc}") from None
    if proc.returncode < 0 or proc.returncode > 127:
        raise GitError(f"git merge-file failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout.decode("utf-8", "surrogateescape"), proc.returncode


def _parse_name_status(out: str, git: Git) -> list[FileChange]:
    """The changes git lists, but those of a file whose name is not UTF-8: no note (lint
    names it), and no other command could name it back to git."""
    return [c for c in _name_status(out, git) if utf8_name(c.path) and (c.old_path is None or utf8_name(c.old_path))]


def _name_status(out: str, git: Git) -> list[FileChange]:
    fields = out.split("\0")
    changes: list[FileChange] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i][0]
        if status in "RC":
            old, new = git.vault_path(fields[i + 1]), git.vault_path(fields[i + 2])
            i += 3
            if status == "C":
                if new is not None:
                    changes.append(FileChange("A", new))
                continue
            if old is not None and new is not None:
                changes.append(FileChange("R", new, old))
            elif new is not None:
                changes.append(FileChange("A", new))
            elif old is not None:
                changes.append(FileChange("D", old))
            continue
        path = git.vault_path(fields[i + 1])
        i += 2
        if path is not None:
            changes.append(FileChange("M" if status == "T" else status, path))
    return changes


def _ids(files: dict[str, bytes | None]) -> dict[str, str]:
    """id -> path of the notes among `files` with an id of their own, each held by one."""
    held: dict[str, list[str]] = {}
    for path, data in files.items():
        parsed = parse_note(path, data) if data is not None else None
        if isinstance(parsed, ParsedNote) and parsed.id and not parsed.id_derived:
            held.setdefault(parsed.id, []).append(path)
    return {note_id: paths[0] for note_id, paths in held.items() if len(paths) == 1}


def _trailers(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    return {**os.environ, **_ENV, **(extra or {})}


def _run_bytes(cwd: Path, args: list[str], input: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=cwd,
            input=input,
            capture_output=True,
            env=_env(env),
            check=False,
        )
    except OSError as exc:
        raise GitError(f"git could not run: {exc}") from None
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace")
        raise GitError(f"git {args[0]} failed: {_reason(said, proc.returncode)}", said)
    return proc.stdout


def _run(cwd: Path, args: list[str], input: bytes | None = None, env: dict[str, str] | None = None) -> str:
    return _run_bytes(cwd, args, input, env).decode("utf-8", "replace").rstrip("\n")
