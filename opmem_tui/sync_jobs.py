"""The sync in the app: with a `[sync] remote`, a sync every `[sync] every_minutes` (the first at
start) and "Sync now" in the palette, each in a thread worker; the footer's SyncStatus says how
it went. Mixed into MainScreen (which composes the status); the backend is reached through
SyncData only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.worker import Worker

from opmem_tui.widgets.safe_text import one_line
from opmem_tui.widgets.sync_status import FAILED, NEVER, SYNCED, SYNCING, SyncStatus

from .commands import PaletteCommand
from .sync_data import SyncData, SyncOutcome

if TYPE_CHECKING:
    from .app import OpmemApp

SYNC_GROUP = "sync"
CHECK_EVERY = 15.0  # seconds between looks at whether the periodic sync is due (a clock compare)


class SyncJobs:
    if TYPE_CHECKING:  # provided by the screen
        app: OpmemApp

        def query(self, selector: type[SyncStatus]) -> object: ...
        def set_interval(self, interval: float, callback: object) -> object: ...
        def sync_changed_here(self) -> None: ...

    _sync_data: SyncData | None = None
    _sync_worker: Worker[SyncOutcome] | None = None

    def sync_status(self) -> SyncStatus | None:
        found = self.query(SyncStatus)
        return found.first() if found else None  # type: ignore[attr-defined]

    @property
    def sync_data(self) -> SyncData:
        if self._sync_data is None:
            self._sync_data = SyncData(self.app.home)
        return self._sync_data

    @property
    def syncing(self) -> bool:
        return self._sync_worker is not None

    def start_sync_schedule(self) -> None:
        """At mount: the last sync's time on the footer, then the periodic sync (when set)."""
        if not self.sync_data.configured:
            return
        if self.sync_data.every_minutes > 0:
            self._sync_tick()  # the first sync at start
            self.set_interval(CHECK_EVERY, self._sync_tick)
        else:
            self._read_last_sync()  # not beside a sync: both would make machine.json the first time

    def _sync_tick(self) -> None:
        if self._sync_worker is None and self.sync_data.due():
            self._start_sync(now=False)

    def sync_now(self) -> None:
        if self._sync_worker is not None:
            self.app.notify("A sync is running; its result shows in the footer.", markup=False)
            return
        self._start_sync(now=True)

    def sync_commands(self) -> list[PaletteCommand]:
        if not self.sync_data.configured:
            return []
        return [
            PaletteCommand(
                "Sync now",
                f"Pull what other machines pushed to {one_line(self.sync_data.remote, 60)}, then push what is new here",
                self.sync_now,
            )
        ]

    # -- workers ---------------------------------------------------------------------------
    @work(thread=True, group=SYNC_GROUP, exit_on_error=False, description="Reading the last sync")
    def _read_last_sync(self) -> None:
        at = self.sync_data.last_sync()
        self.app.call_from_thread(self._show_last, at)

    def _show_last(self, at: float | None) -> None:
        if self._sync_worker is None:  # a sync started meanwhile says more
            self._show_sync(SYNCED if at is not None else NEVER, at, "")

    def _start_sync(self, *, now: bool) -> None:
        self._show_sync(SYNCING, None, "")
        self._sync_worker = self._sync(now)

    @work(thread=True, group=SYNC_GROUP, exit_on_error=False, description="Syncing")
    def _sync(self, now: bool) -> SyncOutcome:
        outcome = SyncOutcome(False, error="the sync did not end")
        try:
            outcome = self.sync_data.run(now=now)
        finally:
            self.app.call_from_thread(self._synced, outcome, now)
        return outcome

    def _synced(self, outcome: SyncOutcome, asked: bool) -> None:
        self._sync_worker = None
        if not outcome.ran and not outcome.error:  # not due after all: as it was
            self._read_last_sync()
            return
        if outcome.error:  # the footer is short: the remote it names is the one configured
            self._show_sync(FAILED, None, outcome.error.replace(f"sync remote {self.sync_data.remote}", "remote"))
            if asked:
                self.app.notify(one_line(outcome.error, 300), title="Sync failed", severity="error", markup=False)
            return
        self._show_sync(SYNCED, self.app.now(), "")
        if asked:
            lines = [*outcome.lines, *(one_line(p, 160) for p in outcome.problems[:3])]
            self.app.notify(
                "\n".join(lines),
                title="Synced",
                severity="warning" if outcome.problems else "information",
                markup=False,
            )
        if outcome.changed_here:
            self.sync_changed_here()

    def _show_sync(self, state: str, at: float | None, error: str) -> None:
        status = self.sync_status()
        if status is not None:
            status.set_state(state, at=at, error=error)
