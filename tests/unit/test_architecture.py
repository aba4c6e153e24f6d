"""The shape of the code, parsed from the source so a violation fails before it runs.

Layers import downwards only: errors/config/models/paths -> vault -> index -> search ->
services -> daemon -> mcp -> cli. Note files are read only in vaultmem/vault/ (one reader, one
size limit); SQL is written only in index/statedb/, as named queries; the files under
.vaultmem/ are named only in vaultmem/paths.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "vaultmem"
# The CLI's entry point forwards to a running watcher and `watch` starts one; the watcher
# runs the CLI's own commands only through the runner `watch` hands it (cli/serve.py), so
# the daemon never imports the CLI. The MCP server is a front end beside the CLI: its tools
# call the use cases with typed arguments (vaultmem/mcp/tools.py), and only the `mcp`
# command (cli/mcp.py) starts it; the MCP package never imports the CLI.
RANK = {"base": 0, "vault": 1, "index": 2, "search": 3, "services": 4, "daemon": 5, "mcp": 6, "cli": 7}
PEERS: set[tuple[str, str]] = set()


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] == "__main__":
        return "cli"  # `python -m vaultmem`: the CLI's entry point, as bin/vaultmem
    if len(parts) < 2 or parts[1] not in RANK:
        return "base"  # vaultmem, vaultmem.errors, .config, .models
    return parts[1]


def imports_of(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.startswith("vaultmem")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("vaultmem"):
            found.append((node.module, node.lineno))
    return found


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "vault_template" not in p.parts)
TOOLS = PACKAGE.parent / "tools"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    module = "vaultmem." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    mine = layer(module)
    for target, line in imports_of(path):
        theirs = layer(target)
        if theirs == mine or (mine, theirs) in PEERS:
            continue
        assert RANK[theirs] < RANK[mine], f"{path.relative_to(PACKAGE)}:{line} imports {target} ({mine} -> {theirs})"


def test_the_mcp_server_never_imports_the_cli() -> None:
    """No command line is built from tool arguments and no printed output is parsed back:
    nothing under vaultmem/mcp imports vaultmem.cli (or click and typer, its machinery)."""
    offending = []
    for path in sorted((PACKAGE / "mcp").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offending += [
                f"{path.name}:{node.lineno} {name}"
                for name in names
                if name.startswith("vaultmem.cli") or name.split(".")[0] in ("typer", "click")
            ]
    assert not offending, offending


MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_are_small(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(PACKAGE)} has {lines} lines: split it by reason to change"


def _own_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's own lines: from its body (a Typer command's option declarations are its
    signature) without its docstring, less the functions and classes defined inside it."""
    body = fn.body[1:] if len(fn.body) > 1 and isinstance(fn.body[0], ast.Expr) else fn.body
    lines = set(range(body[0].lineno, (fn.end_lineno or fn.lineno) + 1))
    for node in ast.walk(fn):
        if node is not fn and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines -= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return len(lines)


def test_functions_are_short() -> None:
    long = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _own_lines(node) > MAX_FUNCTION_LINES:
                long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({_own_lines(node)} lines)")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The modules of `modules` that `path` imports when it runs, function-level imports
    included; those under `if TYPE_CHECKING:` are for the type checker only."""
    roots = {m.split(".")[0] for m in modules}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] in roots}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in roots:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
    return {m for m in found if m in modules}


TOOL_SOURCES = sorted(TOOLS.rglob("*.py"))


@pytest.mark.parametrize("sources", [SOURCES, TOOL_SOURCES], ids=["vaultmem", "tools"])
def test_no_import_cycles(sources: list[Path]) -> None:
    """Modules import each other in one direction only, at module level and inside
    functions alike (a function-level import hides a cycle; it does not remove it): in
    vaultmem and in the bench and eval tools."""
    names = {_module_name(p): p for p in sources}
    graph = {name: _runtime_imports(path, set(names)) - {name} for name, path in names.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                walk(nxt, [*path, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


_MUTATORS = {
    "append", "add", "pop", "popitem", "update", "clear", "setdefault", "move_to_end", "extend", "remove",
    "discard", "insert", "appendleft",
}  # fmt: skip


def test_no_module_level_mutable_state_in_services() -> None:
    """Warm state has one owner (index/views.py, held by the composition root): a service
    module holds constants and functions, never a cache — no module-level name it changes
    (an item set, a container's mutator called, a `global` rebound)."""
    offending = []
    for path in sorted((PACKAGE / "services").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {
            t.id
            for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(tree):
            changed = None
            if isinstance(node, ast.Global):
                changed = ", ".join(node.names)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                hit = [t.value.id for t in targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)]
                changed = next((n for n in hit if n in names), None)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if isinstance(owner, ast.Name) and owner.id in names and node.func.attr in _MUTATORS:
                    changed = owner.id
            if changed:
                offending.append(f"{path.name}:{node.lineno} changes module-level {changed}")
    assert not offending, offending


def test_the_tools_never_edit_sys_path() -> None:
    """The bench and eval tools are packages run with `python -m`: no `sys.path` edits (a
    call on it, an assignment to it) and no modules planted in `sys.modules`, in tools/ or
    in a scripts/ folder should one come back."""
    assert TOOL_SOURCES, "tools/ holds the bench and eval packages"
    offending = []
    for path in [*TOOL_SOURCES, *sorted((PACKAGE.parent / "scripts").rglob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            edited = None
            if isinstance(node, ast.Call):
                edited = ast.unparse(node.func)
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                edited = " ".join(ast.unparse(t) for t in targets)
            if edited and ("sys.path" in edited or "sys.modules" in edited):
                offending.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {edited}")
    assert not offending, offending


def test_heavy_libraries_are_imported_lazily() -> None:
    """chromadb, torch, sentence_transformers, networkx, watchdog and numpy are imported
    inside the functions that need them, never at module level."""
    heavy = ("chromadb", "torch", "sentence_transformers", "networkx", "watchdog", "numpy")
    allowed: set[str] = set()
    for path in SOURCES:
        rel = str(path.relative_to(PACKAGE))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in heavy:
                    assert rel in allowed, f"{rel}:{node.lineno} imports {name} at module level"


def _relative(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _calls(path: Path) -> list[tuple[str, str, int]]:
    """(enclosing function or class path, called name, line) of every call in a file, the
    called name as written: `open`, `os.open`, `path.read_text`, `self.conn.execute`."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{where}.{child.name}" if where else child.name
            if isinstance(child, ast.Call):
                found.append((where, ast.unparse(child.func), child.lineno))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def _reads_a_file(called: str) -> bool:
    """open(), os.open/io.open/Path.open, os.fdopen, os.read, Path.read_text/read_bytes.
    (`.read()` needs a handle, which one of these made.) App.open builds the App."""
    last = called.rsplit(".", 1)[-1]
    if called in ("open", "os.fdopen", "os.read"):
        return True
    return "." in called and last in ("open", "read_text", "read_bytes") and called != "App.open"


# Reads outside vaultmem/vault/ of files that are not notes, by "file::function".
NOT_NOTES = {
    "config.py::load_config": "vaultmem.toml",
    "cli/common.py::read_file_arg": "a file the user names for a command's text (--body-file ...)",
    "daemon/client.py::forward": "os.devnull",
    "daemon/control.py::running": "/proc/<pid>/stat",
    "daemon/control.py::_log_tail": "watcher.log",
    "daemon/control.py::start_detached": "watcher.log, appended to",
    "daemon/paths.py::read_status": "watcher.json",
    "index/fulltext.py::_open_existing": "whoosh's schema marker",
    "index/healing.py::sqlite_problem": "the header of a derived SQLite file (state db, chroma.sqlite3)",
    "index/lock.py::IndexLock.holder": "index.lock",
    "index/lock.py::IndexLock.acquire": "index.lock",
    "index/onnx_export.py::max_seq_length": "the embedding model's own config",
    "search/fusion.py::_load_fit": "fusion_fit.json, the fitted constants (package data)",
    "services/indexing.py::watcher_info": "watcher.json",
    "services/indexing.py::status": "whoosh's schema marker",
    "services/vaults.py::_copy_tree": "vaultmem's own template files (package data), copied by init",
    "services/vaults.py::_copy_ghost_tree": "vaultmem's own template files (package data), copied by init",
    "services/vaults.py::append_ignore_rule": ".gitignore",
    "services/vaults.py::append_attribute": ".gitattributes",
    "services/vaults.py::_write_vault": "vaultmem's template vaultmem.toml and .gitignore",
    "services/vaults.py::add_ghost": "vaultmem.toml",
    "cli/autostart.py::start_in_background": "watcher.log, appended to",
    "services/tokens.py::_read": ".vaultmem-tokens.json (or the former .vaultmem/mcp_tokens.json)",
    "services/tokens.py::_read_used": "tokens_used.json",
}


def test_note_files_are_read_only_in_vault() -> None:
    """vault/ is the one reader of note files (store.read_note_bytes, load_note, read_entry,
    read_file), so the size limit and the symlink rules hold everywhere."""
    offending, seen = [], set()
    for path in SOURCES:
        rel = _relative(path)
        if rel.startswith("vault/"):
            continue
        for where, called, line in _calls(path):
            if not _reads_a_file(called):
                continue
            key = f"{rel}::{where}"
            if key in NOT_NOTES:
                seen.add(key)
            else:
                offending.append(f"{rel}:{line} {called}() in {where or 'module'}")
    assert not offending, "read note files through vaultmem/vault/ (or list a non-note read in NOT_NOTES):\n" + (
        "\n".join(offending)
    )
    assert not set(NOT_NOTES) - seen, f"NOT_NOTES names reads that are gone: {sorted(set(NOT_NOTES) - seen)}"


def test_sql_only_in_statedb() -> None:
    """Every query is a named StateDB method; a WHERE string passed around is SQL too, so
    StateDB takes none (its generic selects are private)."""
    offending = []
    for path in SOURCES:
        rel = _relative(path)
        if rel.startswith("index/statedb/"):
            continue
        for _, called, line in _calls(path):
            last = called.rsplit(".", 1)[-1]
            if last in ("execute", "executemany", "executescript", "create_function") or called == "sqlite3.connect":
                offending.append(f"{rel}:{line} {called}()")
            elif last.startswith("_select") or last in ("records", "light_records"):
                offending.append(f"{rel}:{line} {called}(): a WHERE string; add a named StateDB method")
    assert not offending, "SQL belongs in index/statedb/:\n" + "\n".join(offending)


def _state_names() -> tuple[set[str], set[str]]:
    """(names distinctive enough to look for in any string, every name under .vaultmem/)."""
    from vaultmem import paths

    distinct = {
        paths.CONFIG_NAME, paths.STATE_DIR, paths.STATE_DB, paths.INDEX_LOCK, paths.WHOOSH_SCHEMA,
        paths.CHROMA_STORE, paths.REFERENCE_EMBEDDINGS, paths.WATCHER_SOCKET, paths.WATCHER_STATUS,
        paths.WATCHER_PID, paths.WATCHER_LOG, paths.TOKENS_NAME, paths.LEGACY_TOKENS, paths.TOKENS_LOCK,
        paths.TOKENS_USED,
    }  # fmt: skip
    return distinct, distinct | {paths.WHOOSH_DIR, paths.CHROMA_DIR, paths.REFERENCE_DIR, paths.LEGACY_TRASH_DIR}


# Path joins with a name that is also a .vaultmem/ name, but elsewhere.
OTHER_PLACES = {"index/embedder.py": "Chroma's own model cache under ~/.cache"}


def test_state_files_are_named_only_in_paths() -> None:
    """A file under .vaultmem/ is spelled in vaultmem/paths.py alone: a string naming one
    (outside docstrings and prose), or a name of one joined onto a path with `/`."""
    distinct, every = _state_names()
    offending = []
    for path in SOURCES:
        rel = _relative(path)
        if rel == "paths.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        joined = {
            id(node.right)
            for node in ast.walk(tree)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and rel not in OTHER_PLACES
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docstrings:
                continue
            named = distinct if id(node) not in joined else every
            if any(part in named for part in node.value.split("/")):
                offending.append(f"{rel}:{node.lineno} {node.value!r}")
    assert not offending, "name files under .vaultmem/ through vaultmem/paths.py (StatePaths):\n" + "\n".join(offending)
