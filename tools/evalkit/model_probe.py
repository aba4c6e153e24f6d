"""How well an embedding model alone separates answers from off-topic questions (issue 24).

The default cut must keep 99% of recall@5 and leave 80% of off-topic questions empty; on the
agent-memory set no bar on all-MiniLM-L6-v2's cosine does both. This asks the same of any
sentence-transformers model directory, exact cosine over the set's notes as the peers index
them: its recall@5 and MRR@10, and the share of the answers it finds in the top 5 whose
cosine clears the bar that leaves 80% (then 90%) of the off-topic questions without a note
above it. A share near 1 would make a plain cut possible with that model.

    python -m tools.evalkit.model_probe [MODEL_DIR ...]   (none: the bundled MiniLM)
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from tools.evalkit.agent import agent_task, load_set


def probe(model: Any) -> dict[str, float]:
    import numpy as np

    task = agent_task(*load_set())
    started = time.perf_counter()
    docs = model.encode(task.texts, normalize_embeddings=True, batch_size=32)
    asked = model.encode(task.queries, normalize_embeddings=True)
    off = model.encode(task.offtopic, normalize_embeddings=True)
    seconds = time.perf_counter() - started
    found, mrr = [], 0.0
    for qid, vector in zip(task.query_ids, asked, strict=True):
        scores = docs @ vector
        answer = scores[task.doc_ids.index(next(iter(task.qrels[qid])))]
        rank = int((scores > answer).sum())
        if rank < 5:
            found.append(answer)
        mrr += 1 / (rank + 1) if rank < 10 else 0.0
    best_off = np.sort([(docs @ v).max() for v in off])
    out = {"recall@5": len(found) / len(task.queries), "mrr@10": mrr / len(task.queries), "seconds": seconds}
    for share in (0.8, 0.9):
        bar = best_off[math.ceil(share * len(best_off)) - 1]  # the share of off-topic tops at or below it
        out[f"kept at {share:.0%} off-topic empty"] = float((np.array(found) > bar).mean())
        out[f"bar at {share:.0%}"] = float(bar)
    return out


def main(argv: list[str]) -> int:
    from sentence_transformers import SentenceTransformer

    from tools.evalkit.peers import load_minilm

    models = [(path, SentenceTransformer(path, device="cpu")) for path in argv] or [("all-MiniLM-L6-v2", load_minilm())]
    for name, model in models:
        figures = probe(model)
        print(name, "  ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
