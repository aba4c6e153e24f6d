"""The embedding cache of `reference search`: chunk vectors by (fingerprint, text hash), so
a topic's files are embedded once."""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Sequence
from pathlib import Path


class EmbeddingCache:
    """Chunk embeddings by (fingerprint, text hash) so a topic is embedded once."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, timeout=30.0)
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS vec (fp TEXT, key TEXT, dims INTEGER, data BLOB, PRIMARY KEY (fp, key))"
        )

    def get_many(self, fp: str, keys: Sequence[str]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            batch = list(keys[start : start + 500])
            marks = ",".join("?" for _ in batch)
            for key, dims, data in self.conn.execute(
                f"SELECT key, dims, data FROM vec WHERE fp=? AND key IN ({marks})", (fp, *batch)
            ):
                out[key] = list(struct.unpack(f"{dims}f", data))
        return out

    def put_many(self, fp: str, items: dict[str, list[float]]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO vec VALUES (?, ?, ?, ?)",
                [(fp, k, len(v), struct.pack(f"{len(v)}f", *v)) for k, v in items.items()],
            )

    def close(self) -> None:
        self.conn.close()
