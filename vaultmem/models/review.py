"""What reviewing memory answers (issue 25): the digest of changes, a note's history, what
a commit or a revert did."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vaultmem.models.base import Result, opt


@dataclass(frozen=True, slots=True)
class Flag(Result):
    """Something in a change a person should look at, and why. `blocking`: `review --check`
    fails on it (a secret, a move across scopes made by hand)."""

    code: str
    reason: str
    blocking: bool = False


@dataclass(frozen=True, slots=True)
class Change(Result):
    id: str
    path: str
    old_path: str | None
    kind: str  # created | edited | properties | moved | deleted | restored | commented | validated
    by: list[str]  # "alice/gpt-x", "alice", "person" (vaultmem without a ghost), "hand" (outside vaultmem)
    summary: str
    flags: list[Flag] = field(default_factory=list)
    title: str = ""
    diff: str | None = opt()  # the body's word diff, short
    properties: dict[str, list[Any]] | None = opt()  # key -> [old, new]


@dataclass(frozen=True, slots=True)
class ReviewResult(Result):
    range: str  # what was compared, e.g. "HEAD..working tree"
    changes: list[Change]
    by_ghost: dict[str, dict[str, int]]  # writer -> kind -> count
    blocking: int  # changes with a blocking flag
    flagged: int  # changes with any flag


@dataclass(frozen=True, slots=True)
class CommitMade(Result):
    sha: str
    by: str  # the writer the commit holds the changes of
    message: str
    paths: list[str]


@dataclass(frozen=True, slots=True)
class CommitResult(Result):
    commits: list[CommitMade]
    # changes left uncommitted for a person: [{path, reasons}] (a secret, a move across scopes by hand)
    held: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Version(Result):
    commit: str | None  # None: the uncommitted change
    at: str | None
    by: list[str]
    author: str | None
    path: str
    kind: str
    summary: str


@dataclass(frozen=True, slots=True)
class HistoryResult(Result):
    id: str
    path: str
    versions: list[Version]  # newest first


@dataclass(frozen=True, slots=True)
class GitSetupResult(Result):
    attributes_added: list[str]  # .gitattributes lines written
    driver: str  # the merge driver command in the repository's config


@dataclass(frozen=True, slots=True)
class RevertResult(Result):
    dry_run: bool
    restored: list[dict[str, Any]]  # {id, path, action}
    conflicts: list[dict[str, Any]]  # {id, path, reason}
    review: ReviewResult | None = opt()


@dataclass(frozen=True, slots=True)
class SyncResult(Result):
    upstream: str  # the branch pulled from and pushed to, e.g. "origin/main"
    commits: list[CommitMade]  # this clone's pending memory changes, committed first
    held: list[dict[str, Any]]  # changes left uncommitted for a person (as `commit`)
    pulled: dict[str, Any]  # {from, to, commits, notes}: what the pull brought
    pushed: bool
    indexed: str  # "synced" (a watcher indexed the pull), "no_watcher" (the next read will), or why not
    # notes edited on one side and deleted on the other: {path, trashed_to, restored}; restored
    # False when a note has been made at the path since (the edit waits in trashed_to)
    crossed: list[dict[str, Any]] = field(default_factory=list)
