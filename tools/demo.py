"""`make demo`: build a demo vault from the template, fill it as two agents would, index
it, search it, and print what an agent and a person would see.

Every step runs the installed `vaultmem` command, exactly as an agent shells out to it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tools.repo import REPO

VAULT = REPO / "demo-vault"
BIN = Path(sys.executable).parent / "vaultmem"


def run(
    *args: str, ghost: str | None = None, stdin: str | None = None, show: bool = True, json_out: bool = True
) -> object:
    argv = [str(BIN), *args, "--vault", str(VAULT)]
    if ghost:
        argv += ["--ghost", ghost]
    if json_out:
        argv.append("--json")
    shown = " ".join(a if " " not in a else repr(a) for a in ["vaultmem", *argv[1:]]).replace(str(VAULT), "demo-vault")
    if show:
        print(f"\n$ {shown}", flush=True)
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if proc.stderr.strip() and show:
        print(proc.stderr.strip(), file=sys.stderr)
    if not json_out:
        print(proc.stdout.rstrip())
        return proc.returncode
    data = json.loads(proc.stdout) if proc.stdout.strip() else None
    if show:
        print(json.dumps(data, indent=2, ensure_ascii=False)[:1500])
    return data


def heading(text: str) -> None:
    print(f"\n{'=' * 78}\n{text}\n{'=' * 78}", flush=True)


def main() -> int:
    if VAULT.exists():
        shutil.rmtree(VAULT)
    heading("1. A new vault for two agents, alice and bob")
    subprocess.run([str(BIN), "init", str(VAULT), "--ghost", "alice", "--ghost", "bob"], check=True)
    print(f"created {VAULT.relative_to(REPO)}/ with", ", ".join(sorted(p.name for p in VAULT.iterdir())))

    heading("2. Agents write memories")
    run("note", "create", "--title", "Burgundy wine basics", "--type", "fact", "--scope", "shared",
        "--tag", "wine", "--tag", "burgundy", "--trust", "0.8",
        "--body", "Red Burgundy is Pinot Noir; white Burgundy is Chardonnay. Vintages from cool years "
        "taste lighter and more acidic. See also [[Welcome to the vault]].")  # fmt: skip
    run("note", "create", "--title", "Serving temperature for red wine", "--type", "fact", "--scope", "shared",
        "--tag", "wine", "--body", "Light reds such as Pinot Noir show best slightly cool, around 14 degrees; "
        "full-bodied reds at 16 to 18 degrees. Related: [[Burgundy wine basics]].")  # fmt: skip
    pref = run("note", "create", "--title", "User wine preferences", "--type", "preference", "--scope", "private",
               "--tag", "wine", "--body", "The user prefers light, earthy reds and dislikes oaky Chardonnay. "
               "Budget around 40 euros. Builds on [[Burgundy wine basics]].", ghost="alice")  # fmt: skip
    run("write", ghost="bob", stdin=json.dumps([
        {"type": "episodic", "content": "Called weather_api for Paris, received 15°C and clouds.",
         "tags": ["weather", "paris"], "confidence": 0.99, "ttl_days": 30},
        {"type": "semantic", "content": "The weather API gives reliable forecasts for European cities.",
         "tags": ["weather"], "confidence": 1.5},
        {"type": "conversation", "content": "User asked whether to pack an umbrella for Paris.", "role": "user"},
    ]))  # fmt: skip
    cap = run("capture", "Idea: keep a list of wine regions the user has visited.", "--tag", "wine", ghost="alice")
    assert isinstance(cap, dict)
    run(
        "inbox",
        "promote",
        cap["id"],
        "--title",
        "Wine regions visited",
        "--type",
        "observation",
        "--scope",
        "private",
        ghost="alice",
    )
    assert isinstance(pref, dict)
    run("note", "validate", pref["id"], "--by", "alice/gpt-x", "--trust", "0.9", ghost="alice")

    heading("3. Reading back: privacy is absolute")
    run("get", "User wine preferences", ghost="alice", json_out=False)
    print("\nbob asks for alice's private note (exit 3, same as a note that does not exist):")
    run("get", "User wine preferences", ghost="bob")

    heading("4. Index: Whoosh (BM25), Chroma (vectors), link graph")
    run("index")
    run("status", json_out=False)

    heading("5. Search as agents do")
    run("search", "which grape is in red burgundy", "--limit", "3", ghost="alice", json_out=False)
    run("search", "what does the user like to drink", "--limit", "3", "--budget-tokens", "400", ghost="alice")
    print("\nthe same question from bob cannot see alice's preferences:")
    run("search", "what does the user like to drink", "--limit", "3", ghost="bob", json_out=False)
    run(
        "search",
        "forecast reliability",
        "--memory-type",
        "semantic",
        "--explain",
        "--limit",
        "2",
        ghost="bob",
        json_out=False,
    )
    run("query", "pinot noir temperature", ghost="bob", json_out=False)
    run("reference", "search", "vault conventions", "how do I add a ghost", "--limit", "2", json_out=False)

    heading("6. Lint, as a pre-commit hook would")
    run("lint", json_out=False)

    heading("7. Stop the background indexer the searches started")
    # A read command that finds no watcher starts one (it would exit after 30 idle minutes);
    # the demo stops what it started rather than leave it running.
    subprocess.run([str(BIN), "watch", "--stop", "--vault", str(VAULT)], check=False)
    print(f"\nThe demo vault is in {VAULT.relative_to(REPO)}/ - open it in Obsidian or browse it with git.")
    print("Searching it again starts a watcher in the background; `vaultmem watch --stop` in it stops that.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
