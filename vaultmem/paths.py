"""Where vaultmem keeps its own files in a vault: `vaultmem.toml`, the MCP tokens and the
trash at the root, and the derived state under `.vaultmem/`. Every name under `.vaultmem/`
is spelled here and nowhere else.

Imports nothing: the CLI's fast path (daemon/client.py) reads these names before anything
heavy is loaded, and even `typing` or `pathlib` would cost it milliseconds.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `from typing import ...`: see above
if TYPE_CHECKING:
    from pathlib import Path

CONFIG_NAME = "vaultmem.toml"
STATE_DIR = ".vaultmem"
# At the vault's root, beside STATE_DIR because they must outlive it (SPEC §8: what is under
# STATE_DIR can all be rebuilt). `vaultmem token add`: SHA-256 hashes of the MCP server's
# HTTP bearer tokens, never the tokens; kept out of git by the vault's .gitignore.
TOKENS_NAME = ".vaultmem-tokens.json"
# Deleted notes, `<TRASH_RELPATH>/<UTC time>/<path>`: the folder Obsidian moves deleted
# files to, so a person finds vaultmem's deletes where their own go.
TRASH_RELPATH = ".trash"

# Inside STATE_DIR.
STATE_DB = "state.db"
INDEX_LOCK = "index.lock"
CONFIG_LOCK = "config.lock"  # held while vaultmem edits vaultmem.toml (`ghost add`)
WHOOSH_DIR = "whoosh"
WHOOSH_SCHEMA = "VAULTMEM_SCHEMA"  # inside WHOOSH_DIR: the layout version of that index
CHROMA_DIR = "chroma"
CHROMA_STORE = "chroma.sqlite3"  # Chroma's own file inside CHROMA_DIR, once a store exists
REFERENCE_DIR = "reference"
REFERENCE_EMBEDDINGS = "embeddings.db"  # inside REFERENCE_DIR
LEGACY_TRASH_DIR = "trash"  # where deleted notes went before TRASH_RELPATH; still restorable
WATCHER_SOCKET = "watcher.sock"
WATCHER_STATUS = "watcher.json"
WATCHER_PID = "watcher.pid"
WATCHER_LOG = "watcher.log"
LEGACY_TOKENS = "mcp_tokens.json"  # where tokens were kept before TOKENS_NAME; read once, moved
TOKENS_LOCK = "tokens.lock"  # held while `token add|revoke` rewrite TOKENS_NAME
TOKENS_USED = "tokens_used.json"  # when each token was last used (the MCP server writes it)

# Vault-relative: trashed notes of earlier versions, `.vaultmem/trash/<stamp>/<path>`.
LEGACY_TRASH_RELPATH = f"{STATE_DIR}/{LEGACY_TRASH_DIR}"


class StatePaths:
    """The files under one vault's `.vaultmem/`."""

    __slots__ = ("dir",)

    def __init__(self, root: Path) -> None:
        self.dir = root / STATE_DIR

    def __repr__(self) -> str:
        return f"StatePaths({self.dir.parent!r})"

    @property
    def db(self) -> Path:
        return self.dir / STATE_DB

    @property
    def lock(self) -> Path:
        return self.dir / INDEX_LOCK

    @property
    def config_lock(self) -> Path:
        return self.dir / CONFIG_LOCK

    @property
    def whoosh(self) -> Path:
        return self.dir / WHOOSH_DIR

    @property
    def whoosh_schema(self) -> Path:
        return self.dir / WHOOSH_DIR / WHOOSH_SCHEMA

    @property
    def chroma(self) -> Path:
        return self.dir / CHROMA_DIR

    @property
    def chroma_store(self) -> Path:
        return self.dir / CHROMA_DIR / CHROMA_STORE

    @property
    def reference_embeddings(self) -> Path:
        return self.dir / REFERENCE_DIR / REFERENCE_EMBEDDINGS

    @property
    def watcher_socket(self) -> Path:
        return self.dir / WATCHER_SOCKET

    @property
    def watcher_status(self) -> Path:
        return self.dir / WATCHER_STATUS

    @property
    def watcher_pid(self) -> Path:
        return self.dir / WATCHER_PID

    @property
    def watcher_log(self) -> Path:
        return self.dir / WATCHER_LOG

    @property
    def tokens(self) -> Path:
        return self.dir.parent / TOKENS_NAME

    @property
    def legacy_tokens(self) -> Path:
        return self.dir / LEGACY_TOKENS

    @property
    def tokens_lock(self) -> Path:
        return self.dir / TOKENS_LOCK

    @property
    def tokens_used(self) -> Path:
        return self.dir / TOKENS_USED
