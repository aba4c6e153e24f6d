#!/usr/bin/env python3
"""How closely vaultmem's `get` links match Obsidian's own link resolution on a real vault.

    python -m tools.evalkit.linkcheck ../shared/corpora/obsidian-help-en [--work bench-work/linkcheck]

Copies the corpus into a new vault's shared/ folder, then for every wikilink outside code
compares the note `vaultmem get` lists in `links.out` (or `dangling`) with the file
Obsidian resolves it to, computed here independently of vaultmem's resolver: the link path
(heading and label dropped) matches a file whose vault path without `.md` equals it or ends
with `/` + it, case-insensitively; several matches: the one in the linking note's folder,
else the shortest path; a link with a non-markdown extension points at an attachment; in
`[[Target\\|label]]` (a table cell's escaped pipe) the `\\|` separates target and label. It
also checks that `links.in` is the mirror image of `links.out`, and counts the escaped-pipe
links apart.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tools.sections import write_section

WIKI = re.compile(r"!?\[\[([^\[\]\n]*?)\]\]")
FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
INLINE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


def code_free(text: str) -> str:
    out, fence = [], None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0]
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence:
                fence = None
            continue
        out.append(line)
    return INLINE.sub(" ", "\n".join(out))


def body_of(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :]
    return text


def link_path(link: str) -> str:
    """The path part of a wikilink's inside: no label (after `|` or an escaped `\\|`), no heading."""
    path = link.split("|", 1)[0]
    if "|" in link and path.endswith("\\"):
        path = path[:-1]
    return path.split("#", 1)[0].strip()


def obsidian_target(link: str, source: str, paths: list[str]) -> str | None:
    target = link_path(link)
    if not target:
        return "self"
    suffix = target.rsplit(".", 1)[-1].lower() if "." in target.rsplit("/", 1)[-1] else ""
    if suffix and suffix != "md":
        return None  # an attachment; the corpus holds markdown only
    want = target[:-3] if target.lower().endswith(".md") else target
    want = want.strip("/").lower()
    matches = [p for p in paths if p[:-3].lower() == want or p[:-3].lower().endswith("/" + want)]
    if not matches:
        return None
    here = source.rsplit("/", 1)[0]
    local = sorted(p for p in matches if p.rsplit("/", 1)[0] == here)
    return local[0] if local else min(matches, key=lambda p: (len(p), p))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--work", type=Path, default=Path("bench-work/linkcheck"))
    parser.add_argument("--out", type=Path, help="also write the figures into this markdown file's links section")
    args = parser.parse_args()
    vault = args.work / "vault"
    if vault.exists():
        shutil.rmtree(vault)
    bin_ = Path(sys.executable).parent / "vaultmem"
    subprocess.run([str(bin_), "init", str(vault), "--json"], check=True, capture_output=True)
    for example in [p for p in vault.rglob("*.md")]:
        example.unlink()
    shutil.copytree(args.corpus, vault / "shared", dirs_exist_ok=True)
    (vault / "vaultmem.toml").write_text(
        (vault / "vaultmem.toml").read_text().replace('backend = "auto"', 'backend = "none"')
    )

    from vaultmem.services.app import App
    from vaultmem.services.documents import get_note

    app = App.open(vault, None)
    app.catch_up()
    paths = sorted(app.db.note_paths())
    total = agree = escaped = escaped_agree = 0
    misses: list[str] = []
    outs: dict[str, set[str]] = {}
    ins: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        links = get_note(app, path).links
        ours_out = {o.note.path for o in links.out}
        outs[path] = ours_out
        for item in links.in_:
            ins[path].add(item.note.path)
        text = (vault / path).read_text(encoding="utf-8")
        for m in WIKI.finditer(code_free(body_of(text))):
            expected = obsidian_target(m.group(1), path, paths)
            if expected == "self":
                continue
            total += 1
            target = link_path(m.group(1)).lower()
            dangling = {d.target.lower() for d in links.dangling}
            ok = (expected in ours_out) if expected is not None else (target in dangling)
            agree += ok
            if "\\|" in m.group(1):
                escaped += 1
                escaped_agree += ok
            if not ok:
                misses.append(f"{path}: [[{m.group(1)}]] -> obsidian {expected}")
    # A note linking to itself lists it under links.out; like Obsidian's backlinks pane,
    # links.in leaves the note itself out.
    mirror = sum(1 for src, dsts in outs.items() for dst in dsts if dst != src and src in ins.get(dst, set()))
    edges = sum(len(d - {src}) for src, d in outs.items())
    print(f"wikilinks outside code: {total}; resolved as Obsidian does: {agree} ({100 * agree / max(total, 1):.1f}%)")
    print(
        f"  with an escaped pipe ([[Target\\|label]], in tables): {escaped}; resolved as Obsidian does: {escaped_agree}"
    )
    print(f"links.in mirrors links.out for {mirror} of {edges} resolved links")
    for miss in misses[:20]:
        print("  differs:", miss)
    app.close()
    if args.out:
        section = (
            "## Link resolution (tools/evalkit/linkcheck.py)\n\n"
            f"On the Obsidian Help vault ({len(paths)} notes): {agree} of {total} wikilinks outside code "
            f"({100 * agree / max(total, 1):.1f}%) resolve in `vaultmem get` to the note Obsidian resolves them to "
            f"(labels, headings, embeds, folder-qualified targets, duplicate names; {escaped_agree} of the {escaped} "
            "with a table's escaped pipe, `[[Target\\|label]]`); `links.in` mirrors "
            f"`links.out` for {mirror} of {edges} resolved links.\n"
        )
        start, end = "<!-- links:start -->", "<!-- links:end -->"
        write_section(args.out, f"{start}\n{section}{end}", (start, end))
    return 0


if __name__ == "__main__":
    sys.exit(main())
