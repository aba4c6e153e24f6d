"""Secrets in note text (vault/secrets.py): which text holds one, which lines a write adds,
and that a refusal names the kind and line but never the secret. Real detect-secrets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.errors import InvalidInput
from vaultmem.vault.secrets import _scanner, _screen, added_lines, find_secrets, refuse_secrets

# Well-known documentation values of each format (not live credentials).
AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        (f"aws_access_key_id = {AWS}", ["AWS Access Key"]),
        (f"Use {GITHUB} for the bot.", ["GitHub Token"]),
        (f"slack bot: {SLACK}", ["Slack Token"]),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", ["Private Key"]),
        ('db_password = "Xk9#mP2$vL8qR4wN"', ["Secret Keyword"]),
        # prose, ids, hashes and links of an ordinary note hold none
        ("The recipe uses 200 g of flour and 3 eggs; see https://example.com/a/b?c=d.", []),
        ("id: 01M8BR4GFWPMTB2VRK5YCD55VG", []),
        ("hash: sha256:00d534b15c4b0799e9107b7c426f3f70716082b2b4a9d823f132a204b3f97ca8", []),
        ("Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8.", []),
        ("The password policy asks for twelve characters.", []),
    ],
    ids=["aws", "github", "slack", "private-key", "password", "prose", "ulid", "hash", "commit", "word-password"],
)
def test_find_secrets(text: str, kinds: list[str]) -> None:
    assert [s.kind for s in find_secrets(text)] == kinds


@pytest.mark.parametrize(
    ("old", "new", "lines"),
    [
        ("a\nb\nc", "a\nb\nc", set()),
        ("a\nb\nc", "a\nb\nc\nd", {4}),
        ("a\nb\nc", "a\nB\nc", {2}),
        ("a\nb\nc", "x\na\nb\nc", {1}),
        ("", "a\nb", {1, 2}),
    ],
    ids=["same", "appended", "changed", "prepended", "new"],
)
def test_added_lines(old: str, new: str, lines: set[int]) -> None:
    assert added_lines(old, new) == lines


def test_a_refusal_names_kind_and_line_never_the_secret() -> None:
    with pytest.raises(InvalidInput) as caught:
        refuse_secrets(f"# Deploy\n\nkey: {AWS}\n", what="shared/Deploy.md")
    message = caught.value.message
    assert "AWS Access Key on line 3" in message and "shared/Deploy.md" in message and "--allow-secret" in message
    assert AWS not in message and AWS[:8] not in message
    assert caught.value.exit_code == 5 and caught.value.code == "invalid_input"


def test_only_what_a_write_adds_is_checked() -> None:
    held = f"# Deploy\n\nkey: {AWS}\n"  # a person put the key there
    refuse_secrets(held + "Another line.\n", held)  # an agent appends: not refused
    with pytest.raises(InvalidInput):
        refuse_secrets(held + f"token {GITHUB}\n", held)
    refuse_secrets(f"key: {AWS}", allow=True)  # --allow-secret


KEYISH = "AKIAghp_xoxb-sk_live_SG.eyJ0123456789abcdefABCDEF+/=:@'\" -passwordsecretapi_keyBEGIN PRIVATE KEY"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(KEYISH), max_size=80) | st.sampled_from([AWS, GITHUB, SLACK]))
def test_the_screen_passes_every_line_the_scan_flags(line: str) -> None:
    """Lines the screen turns away are not scanned (speed): it must never turn away a line
    detect-secrets itself would flag."""
    flagged = list(_scanner()(lines=[(1, line)], filename="note.md"))
    if flagged:
        assert _screen()(line), (line, [s.type for s in flagged])
