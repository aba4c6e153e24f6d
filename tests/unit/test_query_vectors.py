"""Query vectors are kept by (fingerprint, text) in the warm views (index/views.py): the same
question asked again skips the model; another model's fingerprint or another text embeds
again; the cache is bounded."""

from __future__ import annotations

import pytest

from vaultmem.index import views as views_module
from vaultmem.index.views import WarmViews


class Counting:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, text: str) -> list[float]:
        self.calls.append(text)
        return [float(len(text)), 1.0]


def test_same_question_embeds_once() -> None:
    views, model = WarmViews(), Counting()
    assert views.query_vector("fp-a", "heat transfer", model) == views.query_vector("fp-a", "heat transfer", model)
    assert model.calls == ["heat transfer"]


def test_another_fingerprint_or_text_embeds_again() -> None:
    views, model = WarmViews(), Counting()
    views.query_vector("fp-a", "heat", model)
    views.query_vector("fp-b", "heat", model)
    views.query_vector("fp-a", "heat flux", model)
    assert model.calls == ["heat", "heat", "heat flux"]


def test_cache_is_bounded_least_recently_used_first_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views_module, "QUERY_VECTORS_MAX", 2)
    views, model = WarmViews(), Counting()
    for text in ("a", "b", "a", "c"):  # "a" used again: "b" is the oldest, and "c" evicts it
        views.query_vector("fp", text, model)
    views.query_vector("fp", "a", model)
    views.query_vector("fp", "b", model)
    assert model.calls == ["a", "b", "c", "b"]
