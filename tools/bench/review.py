"""The review row (issue 25): `vaultmem review` over 1,000 changed notes in a git vault,
beside git's own listing of the same changes, measured in the same run."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

from tools.bench.mcp_http import McpHttpRows
from tools.bench.model import BIN, GHOST
from tools.bench.util import NA, lat, mb, run

REVIEW_CHANGES = 1000
WORDS = [
    "kite",
    "wind",
    "sail",
    "harbour",
    "tide",
    "anchor",
    "rope",
    "gull",
    "ledger",
    "lantern",
    "quay",
    "pilot",
    "breakwater",
    "dune",
    "reef",
]
PERSON = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "Bench",
          "GIT_COMMITTER_EMAIL": "bench@example.com"}  # fmt: skip


class ReviewRows(McpHttpRows):
    def review(self) -> None:
        area = "`review` (git review of memory changes, issue 25)"

        def measure() -> tuple[str, str, str, bool | None]:
            self.require("review")
            git = shutil.which("git")
            if git is None:
                raise NA("git is not installed")
            root = self.work / "review-vault"
            if root.exists():
                shutil.rmtree(root)
            env = {**self.env, **PERSON}
            vm = str(BIN / "vaultmem")
            for argv in ([vm, "init", str(root), "--ghost", GHOST, "--no-examples", "--json"],):
                if not run(argv, env, timeout=120).ok:
                    raise NA("vaultmem init failed")
            config = root / "vaultmem.toml"
            config.write_text(config.read_text().replace('backend = "auto"', 'backend = "none"'))
            for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
                subprocess.run([git, *args], cwd=root, env=env, check=True, capture_output=True)
            rng = random.Random(25)
            writes = [
                {"type": "semantic", "content": " ".join(rng.choice(WORDS) for _ in range(40)) + f" (fact {i})"}
                for i in range(REVIEW_CHANGES)
            ]
            source = self.work / "review-writes.json"
            source.write_text(json.dumps(writes))
            wrote = run([vm, "write", str(source), "--scope", "shared", "--vault", str(root), "--ghost", GHOST,
                         "--json"], env, timeout=600)  # fmt: skip
            if not wrote.ok:
                raise NA(wrote.reason())
            argv = [vm, "review", "--vault", str(root), "--json"]
            first = run(argv, env, timeout=600)  # the BM25 index catches up on the 1,000 new notes
            if not first.ok:
                raise NA(first.reason())
            changes = len(first.json().get("changes", []))
            runs = [run(argv, env, timeout=600) for _ in range(3)]
            if not all(r.ok for r in runs):
                raise NA("a review run failed")
            peer = [run([git, "-C", str(root), "status", "--porcelain", "-uall"], env, timeout=120) for _ in range(3)]
            t = [r.seconds for r in runs]
            ok = max(t) < 5.0 and changes == REVIEW_CHANGES
            return (
                lat(t),
                f"`git status --porcelain -uall` (the same changes, listed): {lat([r.seconds for r in peer])}",
                f"{changes} changes (1,000 facts written by one `write`), digest with flags; the first review after "
                f"the write, which also brings the BM25 index up to date for the near-duplicate check: "
                f"{first.seconds:.2f} s; peak RSS {mb(max(r.maxrss_mb for r in runs))}",
                ok,
            )

        self.add(area, f"`review --json` · {REVIEW_CHANGES:,} changed notes", "< 5 s", measure)
