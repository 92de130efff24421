"""A sync every `[sync] every_minutes`, for long-running front ends (`opmem watch`): called from
their idle tick, it syncs when one is due and hands each outcome to `on_result`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..model import OpmemError

if TYPE_CHECKING:
    from ..home import Home
    from .engine import SyncReport


class PeriodicSync:
    def __init__(
        self,
        home: Home,
        every_minutes: int,
        on_result: Callable[[SyncReport | None, str | None], object],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.home = home
        self.every = every_minutes * 60.0
        self.on_result = on_result
        self.clock = clock
        self.last: float | None = None  # the first tick syncs at once

    def due(self) -> bool:
        return self.every > 0 and (self.last is None or self.clock() - self.last >= self.every)

    def __call__(self, *, now: bool = False) -> None:
        """A sync when one is due (or `now`: at once, and the next one a period later)."""
        if not (now or self.due()):
            return
        self.last = self.clock()
        from ..home import Home
        from .engine import Sync

        try:
            report = Sync(Home(self.home.path, durable=self.home.durable)).run()
        except OpmemError as exc:  # unreachable, refused: said, and tried again next period
            self.on_result(None, str(exc))
            return
        self.on_result(report, None)
