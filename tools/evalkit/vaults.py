"""vaultmem's side of the evaluation: each corpus as a vault, indexed once, searched in
process through the search service (the CLI when the service cannot be imported)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


def vaultmem_bin() -> str:
    local = Path(sys.executable).parent / "vaultmem"
    return str(local) if local.exists() else "vaultmem"


def run_cli(args: Sequence[str], timeout: float = 3600) -> Any:
    """Run `vaultmem ARGS --json`; return its JSON or raise with the CLI's own error text."""
    proc = subprocess.run(
        [vaultmem_bin(), *args, "--json"], capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        detail = (proc.stdout.strip() or proc.stderr.strip() or "no output").splitlines()[-1]
        raise RuntimeError(f"vaultmem {args[0]} exited {proc.returncode}: {detail[:300]}")
    return json.loads(proc.stdout)


def _write_if_changed(path: Path, text: str) -> None:
    # Unchanged files keep their mtime, so a rerun's `vaultmem index` is a cheap no-op reconcile.
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _sync_vault(vault: Path, files: Mapping[str, str]) -> None:
    """Make `vault` hold exactly `files` (vault-relative path -> text) as its markdown notes.

    The template's example notes are removed: they would take slots in the top 10 and are not
    part of the corpus.
    """
    if not (vault / "vaultmem.toml").exists():
        if vault.exists():
            shutil.rmtree(vault)
        vault.parent.mkdir(parents=True, exist_ok=True)
        run_cli(["init", str(vault)])
    for path in list(vault.rglob("*.md")):  # listed first: deleting while walking is unsafe
        relative = path.relative_to(vault)
        if relative.as_posix() not in files and not any(part.startswith(".") for part in relative.parts):
            path.unlink()
    for rel, text in files.items():
        _write_if_changed(vault / rel, text)


def memory_vault(
    vault: Path, ghost: str, spec: Any, fill: Callable[[Path], dict[str, str]]
) -> tuple[dict[str, str], dict[str, Any]]:
    """A vault an agent writes through the CLI as `ghost` (`fill` writes its notes and
    returns note path -> doc id), written once and kept while `spec`, everything the notes
    are made from, is unchanged; then indexed. Returns (note path -> doc id, the index's
    figures)."""
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode("utf-8")).hexdigest()[:16]
    record = vault / ".vaultmem-eval.json"
    kept = json.loads(record.read_text(encoding="utf-8")) if record.exists() else {}
    if kept.get("digest") == digest:
        paths: dict[str, str] = kept["paths"]
    else:
        if vault.exists():
            shutil.rmtree(vault)
        vault.parent.mkdir(parents=True, exist_ok=True)
        run_cli(["init", str(vault), "--no-examples"])
        run_cli(["ghost", "add", ghost, "--vault", str(vault)])
        paths = fill(vault)
        record.write_text(json.dumps({"digest": digest, "paths": paths}), encoding="utf-8")
    return paths, dict(run_cli(["index", "--vault", str(vault)]))


def write_memories(vault: Path, ghost: str, writes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`vaultmem write FILE` of `writes` as `ghost` (the file beside the vault); its answer."""
    source = vault.parent / f"{vault.name}.writes.json"
    source.write_text(json.dumps(list(writes)), encoding="utf-8")
    return dict(run_cli(["write", str(source), "--vault", str(vault), "--ghost", ghost]))


def set_precision(vault: Path, precision: str) -> None:
    """Write `[embedding] precision` into the vault's vaultmem.toml (a float32 run and an
    int8 run keep vaults of their own: see `vault_dir`)."""
    path = vault / "vaultmem.toml"
    text = path.read_text(encoding="utf-8")
    line = f'precision = "{precision}"'
    if re.search(r"(?m)^precision\s*=.*$", text):
        text = re.sub(r"(?m)^precision\s*=.*$", line, text)
    elif re.search(r"(?m)^\[embedding\][ \t]*$", text):
        text = re.sub(r"(?m)^\[embedding\][ \t]*$", f"[embedding]\n{line}", text, count=1)
    else:
        text = text.rstrip("\n") + f"\n\n[embedding]\n{line}\n"
    _write_if_changed(path, text)


def vault_dir(work: Path, name: str, precision: str | None) -> Path:
    return work / ("vaults" if precision is None else f"vaults-{precision}") / name


def build_and_index(vault: Path, files: Mapping[str, str], precision: str | None = None) -> dict[str, Any]:
    _sync_vault(vault, files)
    if precision is not None:
        set_precision(vault, precision)
    return dict(run_cli(["index", "--vault", str(vault)]))


def _result_paths(result: Any) -> list[str]:
    """Note paths, in rank order, from a SearchResult (SPEC §6) as a dict or an object with to_dict()."""
    if hasattr(result, "to_dict"):
        result = result.to_dict()
    return [str(item["summary"]["path"]) for item in result.get("results", [])]


# (query, mode, limit, min_score) -> the search answer as the CLI's JSON prints it
Searcher = Callable[[str, str, int, float | None], dict[str, Any]]


def _in_process_searcher(vault: Path, ghost: str | None = None) -> tuple[Searcher, Callable[[], None]] | None:
    """IN-PROCESS PATH (preferred): call the search service directly, one App for every query
    on the vault (all modes), so the model and indexes load once instead of once per query.

    Returns None when vaultmem.services.search (or its SearchRequest) is missing; then the
    CLI is used. This is the one place to adapt if the service's entry point changes.
    """
    try:
        from vaultmem.models import to_json
        from vaultmem.services.app import App
        from vaultmem.services.search import SearchRequest
        from vaultmem.services.search import search as search_service
    except ImportError:
        return None
    app = App.open(vault, ghost)
    caught_up = False

    def search(query: str, mode: str, limit: int, min_score: float | None) -> dict[str, Any]:
        # The first query lets the service catch every index up itself (whatever `index` left
        # to do); the vault does not change during the run, so later queries skip that walk.
        nonlocal caught_up
        request = SearchRequest(query=query, mode=mode, limit=limit, min_score=min_score)
        result = search_service(app, request, fresh=caught_up)
        caught_up = True
        return dict(to_json(result))  # what `search --json` prints, same keys and order

    return search, app.close


def _cli_searcher(vault: Path, ghost: str | None = None) -> Searcher:
    """FALLBACK: one `vaultmem search` process per query (slow: each pays the cold start)."""

    def search(query: str, mode: str, limit: int, min_score: float | None) -> dict[str, Any]:
        args = ["search", query, "--vault", str(vault), "--limit", str(limit), "--mode", mode]
        if ghost is not None:
            args += ["--ghost", ghost]
        if min_score is not None:
            args += ["--min-score", str(min_score)]
        return dict(run_cli(args))

    return search


def open_searcher(vault: Path, ghost: str | None = None) -> tuple[Searcher, Callable[[], None]]:
    """The service in process if present, else the CLI, searching as `ghost` (None: no
    ghost); call the second item when done."""
    return _in_process_searcher(vault, ghost) or (_cli_searcher(vault, ghost), lambda: None)
