"""Query vectors are kept by (fingerprint, text): the same question asked again skips the
model; another model's fingerprint or another text embeds again; the cache is bounded."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from vaultmem.services import search as search_service


class CountingEmbedder:
    backend = "test"
    model = "counting"
    dims = 2

    def __init__(self) -> None:
        self.calls: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.extend(texts)
        return [[float(len(t)), 1.0] for t in texts]


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    search_service._QUERY_VECTORS.clear()


def test_same_question_embeds_once() -> None:
    model = CountingEmbedder()
    embed = search_service.query_vector(model, "fp-a")
    assert embed("heat transfer") == embed("heat transfer") == [13.0, 1.0]
    assert model.calls == ["heat transfer"]


def test_another_fingerprint_or_text_embeds_again() -> None:
    model = CountingEmbedder()
    search_service.query_vector(model, "fp-a")("heat")
    search_service.query_vector(model, "fp-b")("heat")
    search_service.query_vector(model, "fp-a")("heat flux")
    assert model.calls == ["heat", "heat", "heat flux"]


def test_cache_is_bounded_least_recently_used_first_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_service, "QUERY_VECTORS_MAX", 2)
    model = CountingEmbedder()
    embed = search_service.query_vector(model, "fp")
    embed("a")
    embed("b")
    embed("a")  # used again: "b" is now the oldest
    embed("c")  # evicts "b"
    assert len(search_service._QUERY_VECTORS) == 2
    embed("a")
    embed("b")
    assert model.calls == ["a", "b", "c", "b"]
