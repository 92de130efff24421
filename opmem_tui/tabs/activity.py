"""The Activity tab: sessions, turns, tokens and cost per day, summed by the backend from the
usage index (backend/activity.py, through the app's data layer) in a thread worker when the tab
is shown and the session listing changed since; only sessions whose meta.json changed are read.
A missing or old index is rebuilt first, its progress shown in the tab's header. Nothing is
counted while the tab is hidden (it would compete with the replay)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from textual import work
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget

from opmem_tui.backend.activity import Activity
from opmem_tui.widgets.activity_view import ActivityView

from ..data import ListingView
from ..workers import ReportsWorkerErrors, deliver
from . import Tab

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from ..app import OpmemApp


class ActivityTab(Tab, ReportsWorkerErrors, Vertical):
    class Ready(Message):
        """Mounted (the tab is lazy): the screen hands it the listing it has."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.listing: ListingView | None = None
        self._counted: ListingView | None = None  # the listing the view shows

    @property
    def opmem(self) -> OpmemApp:
        return self.app  # type: ignore[return-value]

    @property
    def view(self) -> ActivityView:
        return self.query_one(ActivityView)

    def compose(self) -> ComposeResult:
        yield ActivityView(id="activity-view")

    def default_focus(self) -> Widget | None:
        return self.view

    def on_mount(self) -> None:
        self.post_message(ActivityTab.Ready())

    def on_show(self) -> None:
        self._count_if_stale()

    def set_listing(self, listing: ListingView) -> None:
        self.listing = listing
        if self.is_on_screen:
            self._count_if_stale()

    def _count_if_stale(self) -> None:
        if self.listing is not None and self.listing is not self._counted:
            self._counted = self.listing
            self._count(self.listing)

    @work(thread=True, exclusive=True, group="activity", exit_on_error=False, description="Counting activity")
    def _count(self, listing: ListingView) -> None:
        activity = self.opmem.data.activity(
            listing, progress=lambda done, total: deliver(self, self.view.progress, done, total)
        )
        deliver(self, self._show, activity)

    def _show(self, activity: Activity) -> None:
        today = dt.datetime.fromtimestamp(self.opmem.now()).date()
        self.view.show(activity, today)
