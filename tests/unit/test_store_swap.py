"""A save that lands during a write and cannot be put back (a third writer replaced the
write meanwhile) is kept beside the note, never deleted with the temp file (a reviewer's
reading of store._swap_if_unchanged), and the write is a plain conflict, not retried."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultmem.errors import ChangedOnDisk, Conflict
from vaultmem.vault import store


def test_a_save_that_cannot_be_put_back_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    note = tmp_path / "shared" / "N.md"
    note.parent.mkdir()
    note.write_text("read\n")
    _, stamp = store.read_file(tmp_path, "shared/N.md")
    real = store.exchange
    calls = []

    def racing(a: Path, b: Path) -> bool:
        calls.append(1)
        if len(calls) == 1:
            b.write_text("a person's save\n")  # lands between our check and our rename
            done = real(a, b)
            third = b.with_name("third.tmp")
            third.write_text("a third write\n")
            os.replace(third, b)  # and a third writer replaces ours before we put it back
            return done
        return real(a, b)

    monkeypatch.setattr(store, "exchange", racing)
    with pytest.raises(Conflict) as raised:
        store.replace_file(tmp_path, "shared/N.md", b"ours\n", stamp)
    assert not isinstance(raised.value, ChangedOnDisk)  # an addition does not retry it
    kept = [p for p in note.parent.iterdir() if "conflicted copy" in p.name]
    assert len(kept) == 1 and kept[0].read_text() == "a person's save\n"
    assert kept[0].name in str(raised.value)
    assert note.read_text() == "a third write\n"
