"""Search as you type, timed by the keys themselves: one implementation for every search box.

The first key after a pause runs the search at once; keys in a quick run (closer than `pause`)
run it once, `pause` after the last of them. Every time is the key event's own (stamped when the
key arrived), not when the UI got round to it: a busy UI that handles two keys late neither
merges keys typed apart into one run nor waits a whole pause more after it caught up.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable

from textual import events
from textual.message_pump import MessagePump
from textual.timer import Timer
from textual.widgets import Input

# The clock textual stamps events with (Message.time): monotonic, perf_counter on Windows.
EVENT_CLOCK: Callable[[], float] = time.perf_counter if sys.platform == "win32" else time.monotonic


class TimedInput(Input):
    """An Input that keeps the time its last key was typed (the key event's own time)."""

    key_time: float | None = None

    def on_key(self, event: events.Key) -> None:  # runs before Input's own key handler (MRO order)
        self.key_time = event.time

    def typed_at(self, changed: Input.Changed) -> float:
        """When the edit behind `changed` was typed: its key's time (a Changed is created when
        the key is handled, later under load); the Changed's own for an edit with no key."""
        key_time = self.key_time
        return min(key_time, changed.time) if key_time is not None else changed.time


class TypingPause:
    """Calls `run(text)` for what was typed, at once after a pause, else once a run of keys stops.

    `clock` is the clock key times are on (EVENT_CLOCK; a test passes its own to drive keys
    without waiting): a run's search is due `pause` after its last key on that clock, and a
    timer that fires before then (by that clock) waits the rest.
    """

    def __init__(
        self,
        owner: MessagePump,
        pause: float,
        run: Callable[[str], None],
        *,
        clock: Callable[[], float] = EVENT_CLOCK,
    ) -> None:
        self.owner = owner
        self.pause = pause
        self.run = run
        self.clock = clock
        self.due: float | None = None  # when the pending run's search is due (None: none pending)
        self._text = ""
        self.last_key = -math.inf  # the time of the last key handled
        self._timer: Timer | None = None
        self._wait_id = 0  # which wait a wake-up belongs to

    def typed(self, text: str, key_time: float) -> None:
        """`text` is what the box holds after a key typed at `key_time` (on `clock`)."""
        self.cancel()
        if key_time - self.last_key >= self.pause:  # the first key after a pause: now
            self.run(text)
        else:  # a quick run of keys: once it stops
            self._text = text
            self.due = key_time + self.pause
            self._wait()
        self.last_key = key_time

    def cancel(self) -> None:
        """Nothing pending any more (the text was submitted or searched another way)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.due = None
        self._wait_id += 1  # a wake-up already queued finds itself stale

    def _wait(self) -> None:
        assert self.due is not None
        self._wait_id += 1
        wait, wait_id = self.due - self.clock(), self._wait_id
        if wait > 0:
            self._timer = self.owner.set_timer(wait, lambda: self._fire(wait_id))
        else:  # already due (keys handled late): next, not through a 0 s timer (textual divides by it)
            self.owner.call_later(self._fire, wait_id)

    def _fire(self, wait_id: int) -> None:
        if wait_id != self._wait_id or self.due is None:
            return  # cancelled or replaced by a newer key
        self._timer = None
        if self.clock() < self.due:  # early by the key clock: wait the rest
            self._wait()
            return
        self.due = None
        self.run(self._text)
