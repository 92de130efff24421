"""A hand-off from the UI thread to one worker thread that keeps only the newest request.

Search as you type asks for a search on every pause in the typing. A search cannot be stopped
half-way (SQLite and the snippet reads run in a thread), so the screen runs them one at a time
in a single long-lived thread (its index connection stays open and warm) and hands requests
over through this slot: a request replaced by a newer one before the thread took it is never
run, and the thread can ask whether the request it just ran is still the newest query. The
slot also says what the screen waits for (`awaited`): the newest request until its answer is
shown, the screen's one record of a search under way.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class SearchRequest:
    query: str
    limit: int  # hits wanted, counted from the best


class NewestRequest:
    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._pending: SearchRequest | None = None
        self._closed = False
        self.query = ""  # the newest query handed over ("" once the box is emptied)
        self.awaited: SearchRequest | None = None  # the newest request, until answered (UI thread)

    def put(self, request: SearchRequest) -> None:
        """Hand over a request; one still waiting is dropped (it will never run)."""
        with self._ready:
            self._pending = request
            self.query = request.query
            self.awaited = request
            self._ready.notify()

    def forget(self) -> None:
        """Nothing is wanted any more (the box was emptied): drop what waits."""
        with self._ready:
            self._pending = None
            self.query = ""
            self.awaited = None

    def answered(self, request: SearchRequest) -> bool:
        """The answer to `request` (hits or a failure) is in: is it the one awaited? Then
        nothing is awaited any more. An answer to an older request changes nothing."""
        if request != self.awaited:
            return False
        self.awaited = None
        return True

    def take(self, timeout: float) -> SearchRequest | None:
        """The newest request, waiting up to `timeout` seconds; None on timeout or once closed."""
        with self._ready:
            if self._pending is None and not self._closed:
                self._ready.wait(timeout)
            request, self._pending = self._pending, None
            return None if self._closed else request

    def is_newest(self, request: SearchRequest) -> bool:
        """Is `request` for the query typed last (so its answer is worth showing)?"""
        return request.query == self.query

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._pending = None
            self._ready.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed
