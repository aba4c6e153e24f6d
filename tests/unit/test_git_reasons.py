"""What vaultmem shows of a git failure (vault/git.py `_reason`) and of a remote's URL
(services/sync.py `_without_credentials`). Tables of what git prints."""

from __future__ import annotations

import pytest

from vaultmem.services.sync import _fetch_reason, _without_credentials
from vaultmem.vault.git import GitError, _reason

GONE = """fatal: '../remote.git' does not appear to be a git repository
fatal: Could not read from remote repository.

Please make sure you have the correct access rights
and the repository exists.
"""
REJECTED = """To ../remote.git
 ! [rejected]        HEAD -> main (fetch first)
error: failed to push some refs to '../remote.git'
hint: Updates were rejected because the remote contains work that you do not
hint: have locally.
"""


@pytest.mark.parametrize(
    ("stderr", "code", "reason"),
    [
        (GONE, 128, "fatal: '../remote.git' does not appear to be a git repository"),
        (REJECTED, 1, "error: failed to push some refs to '../remote.git'"),
        ("warning: x\nsomething went wrong\n", 1, "something went wrong"),
        ("", 3, "exit 3"),
        ("\n  \n", 3, "exit 3"),
    ],
)
def test_reason(stderr: str, code: int, reason: str) -> None:
    assert _reason(stderr, code) == reason


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("unable to access 'https://bob:ghp_secret@github.com/x.git/'", "unable to access 'https://github.com/x.git/'"),
        ("HTTPS://tok@host/x and ssh://git@host:22/y", "HTTPS://host/x and ssh://host:22/y"),
        ("'git@github.com:x/y.git' does not appear", "'git@github.com:x/y.git' does not appear"),
        ("no url here", "no url here"),
    ],
)
def test_without_credentials(text: str, shown: str) -> None:
    assert _without_credentials(text) == shown


SSH_REFUSED = """ssh: connect to host example.invalid port 22: Connection refused
fatal: Could not read from remote repository.

Please make sure you have the correct access rights
and the repository exists.
"""


@pytest.mark.parametrize(
    ("stderr", "shown"),
    [
        (
            SSH_REFUSED,
            "ssh: connect to host example.invalid port 22: Connection refused; "
            "fatal: Could not read from remote repository",
        ),
        (
            GONE,
            "fatal: '../remote.git' does not appear to be a git repository; "
            "fatal: Could not read from remote repository",
        ),
    ],
)
def test_a_failed_fetch_keeps_the_transports_reason(stderr: str, shown: str) -> None:
    assert _fetch_reason(GitError("git fetch failed: x", stderr)) == shown
