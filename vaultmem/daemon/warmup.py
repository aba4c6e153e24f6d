"""The watcher's warm-up: the modules the first request would import, the embedding model
loaded on a thread of its own (searches run lexically meanwhile, and say so), and the
lexical index's posting lists decoded ahead while nobody waits."""

from __future__ import annotations

import contextlib
import importlib
import time

from vaultmem.daemon.base import WARM_MODULES, WatcherBase, log
from vaultmem.services.app import App


class WarmUp(WatcherBase):
    def _warm_up(self) -> None:
        """Load now what the first request would otherwise load while a client waits. The
        vector side (the embedding model, Chroma) loads on a thread of its own, started
        before the catch-up (_load_model): requests are served meanwhile (a hybrid or
        vector search waits for the model: services/search.py), and the vectors of what changed wait for the
        reconcile that follows the loading."""
        self._run_command = self._load_commands()
        for name in WARM_MODULES:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
        if self.lean:
            return  # the first request loads the model and starts the decoding (_wake)
        self._start_warming()
        self._warm_more()  # until the first request; the rest when idle

    def _wake(self) -> None:
        """A lean watcher's first request: load the model and decode posting lists, as a
        watcher does at its start (a hybrid search waits for the model meanwhile)."""
        self.lean = False
        log.info("a request after the idle restart: loading the model, decoding posting lists")
        self._load_model(self.app)
        self._start_warming()

    def _start_warming(self) -> None:
        self.cold_segments = True
        self.postings_decoded = False
        self._warming_since = time.monotonic()

    def _warm_more(self) -> None:
        """Decode the posting lists of the index as it was at the start (~2 s at 50k notes),
        then read what a dense search looks up of each note (~0.35 s at 10k notes), while
        nothing else waits; a request cuts it short and it goes on at the next idle moment
        (a search meanwhile reads what it needs itself). Until both are done the status
        says the posting lists are decoding: a search then costs more than when warm.
        Segments written later (one per commit, a merged one now and then) are read on
        demand and kept within the cache's budget: decoding each merged segment whole
        again made the watcher grow 24% over 2,000 edits at 10k notes (issue 14: 15%)."""
        try:
            fulltext = self.app.indexes.fulltext()
            if not self.postings_decoded:
                if not fulltext.warm(keep_going=self._idle):
                    return
                self.postings_decoded = True
                seconds = time.monotonic() - (self._warming_since or time.monotonic())
                log.info("posting lists decoded: %d held (%.2f s)", fulltext.postings_held, seconds)
                self._trim(True)  # the decoding's temporary arrays
            if self.app.db.get_meta("vector_fingerprint") is not None and not (
                self.app.indexes.views.warm_note_lookup(self.app.db, self._idle)
            ):
                return
            self.cold_segments = False
            with contextlib.suppress(OSError):
                self.status.write()
        except Exception as exc:  # Whoosh's own types; searches read on demand, as before
            self.cold_segments = False
            log.warning("decoding posting lists ahead failed: %s: %s", type(exc).__name__, exc)

    def _load_model(self, app: App) -> None:
        fingerprint = app.db.get_meta("vector_fingerprint")
        if not app.indexes.embedding_choice().enabled or fingerprint is None:
            # No vectors yet: the first reconcile loads the model and builds them, and a
            # search waits for it (a hybrid search then is what the vault will answer).
            return
        started = time.monotonic()

        def done(error: BaseException | None) -> None:
            if error is not None:
                # Model and Chroma libraries raise their own types; a request will meet the
                # same problem and report it to its caller, so log it and serve on.
                self._error(f"warming up the vector index failed: {type(error).__name__}: {error}")
                return
            log.info("embedding model ready in %.2f s", time.monotonic() - started)
            with self.cond:
                # Embed what was indexed without vectors meanwhile (run_index defer_vectors).
                self.next_rescan = 0.0
                self.cond.notify_all()

        app.indexes.load_model_in_background(fingerprint, done)
