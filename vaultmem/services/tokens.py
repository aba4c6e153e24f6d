"""Bearer tokens of `vaultmem mcp --http`, one or more per ghost.

`add` makes a random token, returns it once, and keeps only its SHA-256 (with the ghost, a
short id and when it was made) in `<vault>/.vaultmem-tokens.json`, mode 0600, beside — not
inside — the disposable `.vaultmem/`: deleting the derived state never revokes a token.
`revoke` drops one token by its id; `list` shows them without the secret. Rewrites happen
under a lock, through a unique temp file renamed into place (store.write_whole), so parallel
`token add`s each keep their token and a reader never sees half a file.

`TokenBook` is the server's side: which ghost a presented token belongs to (constant-time
hash comparison), the file read again whenever it changed (a revoke holds at the next
request, a hand edit too: vault/racy.py), and when each token was last used. A file it
cannot read refuses every token.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from vaultmem.clock import iso
from vaultmem.clock import now as utc_now
from vaultmem.config import load_config, validate_ghost_name
from vaultmem.errors import InvalidInput, NotFound
from vaultmem.index.lock import IndexLock
from vaultmem.models import TokenCreated, TokenInfo, TokenList, TokenRevoked
from vaultmem.paths import StatePaths
from vaultmem.services.vaults import append_ignore_rule
from vaultmem.vault import racy
from vaultmem.vault.store import write_whole

PREFIX = "vmt_"
ID_HEX = 12  # the short id: the first hex digits of the token's hash (48 bits)
LOCK_WAIT_S = 30.0
USED_FLUSH_S = 60.0  # how often the server records when tokens were last used

log = logging.getLogger("vaultmem.tokens")


class DamagedTokens(InvalidInput):
    """The token file is not one vaultmem wrote: nothing is rewritten over it."""


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    ghost: str
    hash: str
    created: str


def _digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def _id(digest: str) -> str:
    return digest.removeprefix("sha256:")[:ID_HEX]


def _read(path: Path) -> list[Entry] | None:
    """The entries of a token file; None when there is none; DamagedTokens when it cannot
    be read as one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise DamagedTokens(f"{path} cannot be read: {exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise DamagedTokens(f"{path} is not a token file vaultmem wrote ({exc}); fix or remove it") from None
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, list):
        raise DamagedTokens(f'{path} has no "tokens" list; fix or remove it')
    out = []
    for item in tokens:
        digest = item.get("hash") if isinstance(item, dict) else None
        ghost = item.get("ghost") if isinstance(item, dict) else None
        if not isinstance(digest, str) or not digest.startswith("sha256:") or not isinstance(ghost, str):
            raise DamagedTokens(f"{path} holds an entry that is not a token: {item!r}; fix or remove it")
        out.append(Entry(_id(digest), ghost, digest, str(item.get("created", ""))))
    return out


def load_entries(root: Path) -> list[Entry]:
    """Every token of the vault (those of the former `.vaultmem/mcp_tokens.json` while the
    new file is not written yet)."""
    paths = StatePaths(root)
    entries = _read(paths.tokens)
    if entries is None:
        entries = _read(paths.legacy_tokens)
    return entries or []


def _locked(root: Path) -> IndexLock:
    """The lock `token add|revoke` hold while they rewrite the token file (as `ghost add` holds
    its own while it rewrites vaultmem.toml)."""
    return IndexLock(StatePaths(root).tokens_lock, role="token", wait_s=LOCK_WAIT_S)


def _write(root: Path, entries: list[Entry]) -> Path:
    """The token file replaced whole: a unique temp file, fsync, rename, 0600 throughout."""
    paths = StatePaths(root)
    target = paths.tokens
    data = {"tokens": [{"id": e.id, "ghost": e.ghost, "hash": e.hash, "created": e.created} for e in entries]}
    write_whole(target, (json.dumps(data, indent=1) + "\n").encode("utf-8"), 0o600)
    with contextlib.suppress(FileNotFoundError):
        paths.legacy_tokens.unlink()  # moved: a revoke must not be undone by the old copy
    return target


def add_token(root: Path, ghost: str, acting: str | None = None) -> TokenCreated:
    """A new token for `ghost` (a registered ghost), shown once. A ghost (`acting`) makes
    tokens for itself only: a token is an identity."""
    validate_ghost_name(ghost)
    if acting is not None and acting != ghost:
        raise InvalidInput(f"ghost {acting!r} may make tokens for itself only, not for {ghost!r}")
    if ghost not in load_config(root).ghosts:
        raise InvalidInput(f"unknown ghost {ghost!r}: register it with `vaultmem ghost add {ghost}`")
    token = PREFIX + secrets.token_urlsafe(32)
    digest = _digest(token)
    entry = Entry(_id(digest), ghost, digest, iso(utc_now()))
    with _locked(root):
        path = _write(root, [*load_entries(root), entry])
        gitignore = root / ".gitignore"
        if gitignore.is_file() and not gitignore.is_symlink():
            append_ignore_rule(gitignore, path.name)  # a vault made before tokens lived here
    return TokenCreated(ghost, token, entry.id, entry.created, str(path))


def list_tokens(root: Path, acting: str | None = None) -> TokenList:
    """Every token (a person's view), or the acting ghost's own."""
    used = _read_used(root)
    entries = [e for e in load_entries(root) if acting is None or e.ghost == acting]
    tokens = [TokenInfo(e.id, e.ghost, e.created, used.get(e.id)) for e in entries]
    return TokenList(tokens, str(StatePaths(root).tokens))


def revoke_token(root: Path, token_id: str, acting: str | None = None) -> TokenRevoked:
    """Drop the token whose id is `token_id` (as `token list` shows it); a ghost (`acting`)
    revokes its own only (another's is not found, as it is not listed)."""
    wanted = token_id.strip().lower()
    if not wanted:
        raise InvalidInput("which token? give its id (`vaultmem token list`)")
    with _locked(root):
        entries = load_entries(root)
        gone = [e for e in entries if e.id == wanted and (acting is None or e.ghost == acting)]
        if not gone:
            raise NotFound(f"no token with id {token_id!r} (`vaultmem token list` shows them)")
        _write(root, [e for e in entries if e.id != wanted])
    return TokenRevoked(gone[0].id, gone[0].ghost)


def _read_used(root: Path) -> dict[str, str]:
    try:
        data = json.loads(StatePaths(root).tokens_used.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # derived: losing it loses only "last used"
    return (
        {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}
    )


class TokenBook:
    """The tokens as the server checks them: the file is read again whenever it changed, so
    `token add`, `token revoke` and a hand edit hold at the next request. Its stat alone
    cannot prove it unchanged (an edit in the tick of its mtime keeps size and mtime):
    vault/racy.py hashes it again while that may be so."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._paths = StatePaths(root)
        self._lock = threading.Lock()
        self._seen: tuple[racy.SeenFile | None, ...] | None = None  # None: never read
        self._entries: list[Entry] = []
        self._damaged: str | None = None
        self._used: dict[str, str] = {}
        self._flushed = time.monotonic()

    def _changed(self) -> bool:
        """Whether the token files (the former one too) hold other bytes than when last
        read, or came or went; True before the first read. Looked at before load_entries
        reads them: an edit made in between is then seen at the next request."""
        paths = (self._paths.tokens, self._paths.legacy_tokens)
        before = self._seen
        looks = [racy.look_again(None if before is None else before[i], p) for i, p in enumerate(paths)]
        self._seen = tuple(seen for seen, _ in looks)
        return before is None or any(changed for _, changed in looks)

    def _current(self) -> list[Entry]:
        if self._changed():
            try:
                self._entries, self._damaged = load_entries(self.root), None
            except InvalidInput as exc:
                self._entries, self._damaged = [], exc.message
                log.error("every request is refused until the token file is fixed: %s", exc.message)
        return self._entries

    def identify(self, token: str | None) -> Entry | None:
        """The entry of a presented token, or None (none given, unknown, revoked, or the
        token file cannot be read)."""
        if not token:
            return None
        digest = _digest(token)
        with self._lock:
            found = None
            for entry in self._current():
                if hmac.compare_digest(entry.hash, digest):
                    found = entry
            if found is not None:
                self._note_use(found.id)
            return found

    @property
    def damaged(self) -> str | None:
        return self._damaged

    def check(self) -> str | None:
        """Why no token can be accepted now (the file cannot be read), or None; the file
        is read again if it changed, as for a request."""
        with self._lock:
            self._current()
            return self._damaged

    def _note_use(self, token_id: str) -> None:
        self._used[token_id] = iso(utc_now())
        if time.monotonic() - self._flushed >= USED_FLUSH_S:
            self.flush()

    def flush(self) -> None:
        """Record when tokens were last used (best effort: it is only for `token list`)."""
        self._flushed = time.monotonic()
        if not self._used:
            return
        merged = {**_read_used(self.root), **self._used}
        path = self._paths.tokens_used
        with contextlib.suppress(OSError):
            self._paths.make()
            write_whole(path, json.dumps(merged).encode("utf-8"), 0o600)
