"""Where vaultmem keeps its own files in a vault: `vaultmem.toml`, the MCP tokens and the
trash at the root, and the derived state under `.vaultmem/`. Every name under `.vaultmem/`
is spelled here and nowhere else.

The derived state lives in the vault's `.vaultmem/` unless the vault cannot hold it: a
read-only vault (a mounted snapshot, someone else's checkout) keeps it in the user's cache
folder, and `$VAULTMEM_STATE_DIR` puts every vault's elsewhere (a vault on a file system
SQLite cannot use, such as a network share): `state_dir` decides, for every reader alike.

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
# git's lock on its index, in the git dir (not ours, though .vaultmem/ has one of that name):
# sync and commit name it when a git stopped mid-way left it (services/commits.py).
GIT_INDEX_LOCK = "index.lock"
# In the git dir too: journal lines not yet committed, kept while sync has git merge and
# put back after it (vault/journal_aside.py); left only by a sync killed mid-merge.
GIT_JOURNAL_ASIDE = "vaultmem-journal-aside.json"

# Derived state is the owner's alone (SPEC §3: it holds titles, paths and words of private notes).
STATE_DIR_MODE = 0o700
STATE_FILE_MODE = 0o600

# Inside STATE_DIR.
STATE_DB = "state.db"
INDEX_LOCK = "index.lock"
# git's own lock of its index, in the repository's git dir (not here): the same name as ours
GIT_INDEX_LOCK = INDEX_LOCK
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

STATE_DIR_ENV = "VAULTMEM_STATE_DIR"  # a folder for every vault's derived state, one folder each
CACHE_DIR_ENV = "VAULTMEM_CACHE_DIR"


def cache_home() -> str:
    """vaultmem's cache folder: $VAULTMEM_CACHE_DIR, else $XDG_CACHE_HOME/vaultmem, else
    ~/.cache/vaultmem."""
    import os

    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vaultmem")


def state_dir(root: str) -> tuple[str, str]:
    """(the folder of `root`'s derived state, why there): "vault" for its own `.vaultmem/`,
    "env" under $VAULTMEM_STATE_DIR, "read-only" in the cache folder when the vault can hold
    none (its `.vaultmem/` cannot be written, nor made)."""
    import os

    base = os.environ.get(STATE_DIR_ENV)
    if base:
        return os.path.join(base, _vault_key(root)), "env"
    inside = os.path.join(root, STATE_DIR)
    if os.access(inside, os.W_OK) if os.path.isdir(inside) else os.access(root, os.W_OK):
        return inside, "vault"
    return os.path.join(cache_home(), "state", _vault_key(root)), "read-only"


def _vault_key(root: str) -> str:
    """A folder name for one vault: its name and a hash of where it is."""
    import hashlib
    import os

    real = os.path.realpath(root)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real))[:40] or "vault"
    return f"{name}-{hashlib.sha256(os.fsencode(real)).hexdigest()[:16]}"


class StatePaths:
    """The files of one vault's derived state (its `.vaultmem/`, or where `state_dir` puts
    it), and the vaultmem files beside it that must outlive it."""

    __slots__ = ("dir", "root", "where")

    def __init__(self, root: Path) -> None:
        from pathlib import Path as _Path

        self.root = root
        folder, self.where = state_dir(str(root))
        self.dir = _Path(folder)

    def __repr__(self) -> str:
        return f"StatePaths({self.root!r})"

    def make(self) -> Path:
        """The state folder, created owner-only (0700) when missing: it holds titles, paths
        and words of every note, private ones included."""
        import os

        if self.where == "vault":
            os.makedirs(self.dir, mode=STATE_DIR_MODE, exist_ok=True)
        else:  # its parents too: the cache folder may not exist yet
            os.makedirs(self.dir.parent, mode=STATE_DIR_MODE, exist_ok=True)
            os.makedirs(self.dir, mode=STATE_DIR_MODE, exist_ok=True)
        return self.dir

    def secure(self, deep: bool = False) -> bool:
        """Owner-only derived state: the folder 0700 and, when it was not (a vault made by an
        earlier version) or with `deep`, every folder under it 0700 and file 0600. Symlinks
        are left alone. Whether anything was changed."""
        import os
        import stat

        try:
            st = os.lstat(self.dir)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode):
            return False
        changed = False
        if st.st_mode & 0o777 != STATE_DIR_MODE:
            try:
                os.chmod(self.dir, STATE_DIR_MODE)
            except OSError:
                return False  # not ours, or a read-only vault: nothing to change here
            deep = changed = True
        if not deep:
            return changed
        for folder, dirs, files in os.walk(self.dir):
            for name, mode in [(d, STATE_DIR_MODE) for d in dirs] + [(f, STATE_FILE_MODE) for f in files]:
                path = os.path.join(folder, name)
                try:
                    st = os.lstat(path)
                    if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o777 & ~mode:
                        os.chmod(path, st.st_mode & 0o777 & mode)
                        changed = True
                except OSError:
                    continue  # gone meanwhile (a Whoosh merge, a temp file)
        return changed

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
        return self.root / TOKENS_NAME

    @property
    def legacy_tokens(self) -> Path:
        return self.root / STATE_DIR / LEGACY_TOKENS

    @property
    def tokens_lock(self) -> Path:
        return self.dir / TOKENS_LOCK

    @property
    def tokens_used(self) -> Path:
        return self.dir / TOKENS_USED
