"""Building blocks for integration tests: vaults on disk, notes, fresh copies, subprocesses."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from tests._embedders import REPO

VAULTMEM = REPO / ".venv" / "bin" / "vaultmem"


def make_vault(
    root: Path,
    backend: str = "none",
    ghosts: Iterable[str] = ("alice", "bob"),
    projects: dict[str, list[str] | None] | None = None,
    extra: str = "",
) -> Path:
    """A vault with only a vaultmem.toml (no template notes)."""
    root.mkdir(parents=True, exist_ok=True)
    lines = ["[vault]", "ghosts = [" + ", ".join(f'"{g}"' for g in ghosts) + "]", ""]
    for name, members in (projects or {}).items():
        lines.append(f"[projects.{name}]")
        if members is not None:
            lines.append("members = [" + ", ".join(f'"{m}"' for m in members) + "]")
        lines.append("")
    lines += ["[embedding]", f'backend = "{backend}"', ""]
    (root / "vaultmem.toml").write_text("\n".join(lines) + extra)
    return root


def note(root: Path, relpath: str, body: str = "", **front: Any) -> Path:
    """Write a note; `front` becomes its YAML front matter (none when empty)."""
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    text = body if body.endswith("\n") else body + "\n"
    if front:
        fm = yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
        text = f"---\n{fm}---\n{text}"
    path.write_text(text, encoding="utf-8")
    return path


def fresh_copy(src: Path, dst: Path) -> Path:
    """The vault's files without .vaultmem/ (mtimes kept): what a fresh clone would index."""
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".vaultmem"))
    return dst


def paths_of(result: dict[str, Any]) -> list[str]:
    return [r["summary"]["path"] for r in result["results"]]


def comparable(result: dict[str, Any]) -> list[Any]:
    """Search results without timings: what must be identical between two indexes."""
    return json.loads(json.dumps(result["results"]))


def run(*args: str, env: dict[str, str], timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([str(VAULTMEM), *args], env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert res.returncode == 0, f"exit {res.returncode}\nstdout: {res.stdout}\nstderr: {res.stderr}"
    return res


_SEARCH_MANY = """
import contextlib, io, json, sys
import tests._embedders as e
e.install_from_env()
from vaultmem.cli.main import app
vault, modes, queries = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
out = {}
for mode in modes:
    for q in queries:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = app(["search", q, "--mode", mode, "--limit", "15", "--vault", vault, "--json"], standalone_mode=False)
        assert code == 0, buf.getvalue()
        out[mode + ":" + q] = json.loads(buf.getvalue())["results"]
print(json.dumps(out))
"""


def search_many(root: Path, env: dict[str, str], modes: Iterable[str], queries: Iterable[str]) -> dict[str, Any]:
    """Several searches in one fresh process (its own Chroma client): mode:query -> results."""
    res = subprocess.run(
        [sys.executable, "-c", _SEARCH_MANY, str(root), json.dumps(list(modes)), json.dumps(list(queries))],
        env=env, capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def spawn(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([str(VAULTMEM), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def generate(root: Path, n: int, seed: int = 7, folder: str = "shared/gen") -> list[str]:
    """`n` plausible notes with tags, links between them and a few paragraphs each."""
    import random

    rng = random.Random(seed)
    words = [
        "vector",
        "index",
        "search",
        "graph",
        "link",
        "note",
        "vault",
        "memory",
        "agent",
        "ghost",
        "token",
        "budget",
        "chunk",
        "embedding",
        "model",
        "lexical",
        "stemming",
        "query",
        "filter",
        "trust",
        "score",
        "project",
        "diary",
        "inbox",
        "reference",
        "topic",
        "parent",
        "alias",
        "heading",
        "paragraph",
        "sentence",
        "markdown",
        "front",
        "matter",
        "yaml",
        "sqlite",
        "chroma",
        "whoosh",
        "networkx",
        "python",
        "typer",
        "rich",
        "watcher",
        "reconcile",
        "lock",
        "crash",
        "recovery",
        "fingerprint",
        "collection",
        "distance",
        "cosine",
        "fusion",
        "rank",
        "budget",
        "pack",
    ]
    titles = [f"Generated note {i:05d}" for i in range(n)]
    rels = []
    for i, title in enumerate(titles):
        paras = []
        for _ in range(rng.randint(2, 4)):
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(20, 45)))
            paras.append(sentence.capitalize() + ".")
        links = " ".join(f"[[{titles[rng.randrange(n)]}]]" for _ in range(rng.randint(0, 3)))
        body = f"# {title}\n\n" + "\n\n".join(paras) + f"\n\nSee {links}\n"
        rel = f"{folder}/note-{i:05d}.md"
        kind = rng.choice(["note", "fact", "pattern"])
        front = f"---\ntitle: {title}\ntype: {kind}\ntags: [{rng.choice(words)}]\n---\n"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(front + body, encoding="utf-8")
        rels.append(rel)
    return rels


def index_contents(root: Path) -> dict[str, Any]:
    """What Whoosh and Chroma hold for this vault right now, read directly from disk."""
    from vaultmem.index.fulltext import FullTextIndex
    from vaultmem.index.vectors import COLLECTION_PREFIX, make_client

    state = root / ".vaultmem"
    ft = FullTextIndex(state / "whoosh")
    try:
        whoosh = ft.paths()
    finally:
        ft.close()
    client = make_client("embedded", state, None)
    collections = {}
    for col in client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name.startswith(COLLECTION_PREFIX):
            c = client.get_collection(name)
            got = c.get(include=["metadatas"])
            collections[name] = {
                "count": c.count(),
                "fingerprint": (c.metadata or {}).get("fingerprint"),
                "metadatas": got["metadatas"] or [],
            }
    chroma_paths = {str(m["path"]) for col in collections.values() for m in col["metadatas"]}
    return {"whoosh": whoosh, "collections": collections, "chroma": chroma_paths}


# The NoteSummary keys of SPEC §6: every search result and graph neighbour carries them.
SUMMARY_KEYS = frozenset(
    {
        "id",
        "title",
        "type",
        "scope",
        "path",
        "owner",
        "project",
        "score",
        "snippet",
        "trust_score",
        "created",
        "updated",
    }
)
