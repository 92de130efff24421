"""The app's way to `opmem sync` (backend/sync): the settings, the last sync, a sync now and the
periodic one. Every call but `configured`/`every_minutes` blocks on git: thread workers only."""

from __future__ import annotations

from dataclasses import dataclass, field

from opmem_tui.backend.home import Home
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.sync import Sync, SyncReport
from opmem_tui.backend.sync.periodic import PeriodicSync


@dataclass(frozen=True)
class SyncOutcome:
    """One sync's end: `error` (one line) when it failed, else what it did."""

    ran: bool  # False: a periodic check that found no sync due
    error: str = ""
    lines: tuple[str, ...] = ()
    changed_here: bool = False  # sessions, titles or memory pulled: the lists are read again
    problems: tuple[str, ...] = field(default_factory=tuple)


class SyncData:
    def __init__(self, home: Home) -> None:
        self.home = home
        try:
            settings = home.config.sync
            self.remote, self.every_minutes = settings.remote, settings.every_minutes
        except OpmemError:  # a config problem is shown by the app at start; no sync then
            self.remote, self.every_minutes = "", 0
        self._got: tuple[SyncReport | None, str | None] = (None, None)
        self.periodic = PeriodicSync(home, self.every_minutes, self._result)

    @property
    def configured(self) -> bool:
        return bool(self.remote)

    def due(self) -> bool:
        return self.configured and self.periodic.due()

    def last_sync(self) -> float | None:
        """When the last sync of this store ended (no network)."""
        try:
            last = Sync(Home(self.home.path, durable=self.home.durable), self.remote).status().get("last_sync")
        except (OpmemError, OSError):
            return None
        return float(last) if isinstance(last, (int, float)) else None

    def _result(self, report: SyncReport | None, error: str | None) -> None:
        self._got = (report, error)

    def run(self, *, now: bool) -> SyncOutcome:
        """A sync (`now`), or the periodic one when due; the period starts again either way."""
        if not (now or self.periodic.due()):
            return SyncOutcome(False)
        self._got = (None, None)
        try:
            self.periodic(now=True)
        except Exception as exc:  # a background sync ends in a status, not a dead worker
            return SyncOutcome(True, error=f"{type(exc).__name__}: {exc}")
        report, error = self._got
        if error is not None or report is None:
            return SyncOutcome(True, error=error or "the sync did not run")
        changed = bool(report.pulled_sessions or report.updated_sessions or report.memory_records or report.titles)
        return SyncOutcome(True, lines=tuple(report.lines()), changed_here=changed, problems=tuple(report.problems))
