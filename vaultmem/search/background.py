"""A call on a thread of its own, for the dense side of a search (search/hybrid.py): the
query's embedding and Chroma's search release the GIL, so BM25 runs meanwhile."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class Background(Generic[T]):
    """A call on a thread of its own; `result()` joins it and returns or raises what it did."""

    def __init__(self, call: Callable[[], T]) -> None:
        self._call = call
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="vaultmem-dense", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._call()
        except BaseException as exc:  # handed to the caller of result()
            self._error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return cast(T, self._value)
