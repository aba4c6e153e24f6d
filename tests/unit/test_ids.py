"""ULIDs for notes vaultmem creates; path-derived ids for files without one."""

from __future__ import annotations

import time

import pytest

from vaultmem.vault import ids
from vaultmem.vault.ids import _CROCKFORD, derived_id, is_ulid, new_ulid


@pytest.fixture
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the last issued ULID, so explicit times here do not leak into other tests."""
    monkeypatch.setattr(ids, "_last", (0, 0))


def _decode_time(ulid: str) -> int:
    value = 0
    for ch in ulid[:10]:
        value = value * 32 + _CROCKFORD.index(ch)
    return value


def test_ulid_shape_and_time() -> None:
    before = int(time.time() * 1000)
    ulid = new_ulid()
    after = int(time.time() * 1000)
    assert len(ulid) == 26 and is_ulid(ulid)
    assert before <= _decode_time(ulid) <= after


@pytest.mark.usefixtures("fresh_clock")
def test_ulid_encodes_a_given_time() -> None:
    ulid = new_ulid(now_ms=1_700_000_000_123)
    assert _decode_time(ulid) == 1_700_000_000_123


def test_ulids_are_unique_and_monotonic_within_a_process() -> None:
    ids = [new_ulid() for _ in range(5000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)


@pytest.mark.usefixtures("fresh_clock")
def test_ulid_stays_ordered_when_the_clock_steps_back() -> None:
    late = new_ulid(now_ms=2_000_000_000_000)
    early = new_ulid(now_ms=1)
    same = new_ulid(now_ms=2_000_000_000_000)
    assert late < early < same
    assert _decode_time(early) == 2_000_000_000_000


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("01ARZ3NDEKTSV4RRFFQ69G5FAV", True),
        ("01arz3ndektsv4rrffq69g5fav", False),  # vaultmem writes upper case
        ("01ARZ3NDEKTSV4RRFFQ69G5FA", False),
        ("01ARZ3NDEKTSV4RRFFQ69G5FAVX", False),
        ("01ARZ3NDEKTSV4RRFFQ69G5FAI", False),  # I, L, O, U are not Crockford
        ("p-0123456789abcdef0123", False),
        ("", False),
    ],
)
def test_is_ulid(value: str, ok: bool) -> None:
    assert is_ulid(value) is ok


def test_derived_id_is_stable_per_path() -> None:
    a = derived_id("shared/a.md")
    assert a == derived_id("shared/a.md")
    assert a != derived_id("shared/b.md")
    assert a.startswith("p-") and len(a) == 22
    assert not is_ulid(a)
