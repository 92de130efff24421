"""The Sessions tab: the session list and the replay of the session under its cursor.

It reads through the app's StoreData in thread workers (one exclusive group per kind of
read), follows the store through file-change notifications (a poll where those cannot run),
and keeps the reader's place when the open session changes on disk.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker
from watchfiles import awatch

from opmem_tui.backend.model import SessionMeta
from opmem_tui.backend.privacy.exclusions import is_private
from opmem_tui.widgets.messages import SessionChosen, SessionHighlighted
from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.safe_text import one_line
from opmem_tui.widgets.session_list import EMPTY_STORE_HELP, SessionList

from ..data import ListingView, ReplayData, StoreData
from ..workers import FOLLOW_GROUP, ReportsWorkerErrors, cancelled, deliver
from . import Tab
from .session_branches import BranchesAndHistory
from .session_edits import SessionEdits

if TYPE_CHECKING:
    from ..app import OpmemApp

FIRST_FRAME_WAIT_S = 0.5  # at most, before reading the whole of a session opened on its last turn
WATCH_DEBOUNCE_MS = 300  # a burst of writes (an import) becomes one re-listing

Stamp = tuple[float, int, str | None, str, str, bool]


def stamp(meta: SessionMeta) -> Stamp:
    """What changes in the listing when a session changes on disk."""
    return (meta.updated_at, meta.turn_count, meta.head_id, meta.title, meta.project_id, is_private(meta))


class SessionsTab(BranchesAndHistory, SessionEdits, Tab, ReportsWorkerErrors, Horizontal):
    """Session list on the left, replay on the right."""

    class ListingChanged(Message):
        """A new listing is on screen (the Projects tab takes its project records)."""

        def __init__(self, view: ListingView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.listing_view: ListingView | None = None
        self._open_id: str | None = None
        self._open_head: str | None = None  # following a branch other than the session's head
        self._select_node = ""  # the message to select once the opened session is shown
        self._open_label = ""  # set while a read-only commit view is shown: no live reloads
        self._branch_label = ""  # "on <branch>" while following a branch other than the head's
        self._open_stamp: Stamp | None = None
        self._problems_shown: set[str] = set()
        self._problems_told: set[str] = set()
        self._deleting: set[str] = set()  # deleted from here: no "deleted elsewhere" note
        self._listing_worker: Worker[None] | None = None
        self._listing_stale = False  # the store changed while a listing was being read
        self._poll_timer: Timer | None = None

    @property
    def opmem(self) -> OpmemApp:
        return self.app  # type: ignore[return-value]

    @property
    def data(self) -> StoreData:
        return self.opmem.data

    def compose(self) -> ComposeResult:
        yield SessionList(now=self.opmem.now, id="session-list")
        yield ReplayPane(id="replay")

    @property
    def session_list(self) -> SessionList:
        return self.query_one(SessionList)

    @property
    def replay(self) -> ReplayPane:
        return self.query_one(ReplayPane)

    @property
    def open_id(self) -> str | None:
        return self._open_id

    def default_focus(self) -> Widget | None:
        return self.session_list.table

    def on_mount(self) -> None:
        if self.opmem.start_tab == "sessions":  # focus in a hidden tab would show it instead
            self.focus_default()
        # Paint first, then fill: the listing is read once the first frame is on screen.
        self.call_after_refresh(self._start)

    def _start(self) -> None:
        self.refresh_listing()
        if self.opmem.watch_store:
            self._watch_store()
        else:
            self._start_polling()

    # -- following the store ---------------------------------------------------------------
    @work(exclusive=True, group=FOLLOW_GROUP, exit_on_error=False, description="Following the store")
    async def _watch_store(self) -> None:
        try:
            folders = await asyncio.to_thread(self.data.watched_folders)
            async for _changes in awatch(*folders, recursive=False, debounce=WATCH_DEBOUNCE_MS):
                self.store_changed()
        except Exception as exc:  # no notifications here (watch limit, file system): poll instead
            self.log.warning(f"file-change notifications unavailable ({exc}); polling the store")
            self._start_polling()

    def _start_polling(self) -> None:
        interval = self.opmem.poll_interval
        if interval and interval > 0 and self._poll_timer is None:
            self._poll_timer = self.set_interval(interval, self.store_changed)

    def store_changed(self) -> None:
        """Something in the store may have changed: re-list, one read at a time."""
        worker = self._listing_worker
        if worker is not None and worker.is_running:
            self._listing_stale = True
            return
        self._listing_stale = False
        self._listing_worker = self._load_listing(quiet=True)

    # -- listing ---------------------------------------------------------------------------
    def refresh_listing(self, rescan: bool = False) -> None:
        """Re-read the session list now (`rescan`: every meta.json, for edits made outside opmem)."""
        self._listing_stale = False
        self._listing_worker = self._load_listing(rescan=rescan)

    @work(thread=True, exclusive=True, group="listing", exit_on_error=False, description="Listing sessions")
    def _load_listing(self, quiet: bool = False, rescan: bool = False) -> None:
        view = self.data.listing(rescan=rescan)
        previous = self.listing_view
        if quiet and previous is not None and previous.signature == view.signature:
            deliver(self, self._listing_done)
            return
        deliver(self, self._apply_listing, view)

    def _listing_done(self) -> None:
        if self._listing_stale:
            self._listing_stale = False
            self._listing_worker = self._load_listing(quiet=True)

    def _apply_listing(self, view: ListingView) -> None:
        self.listing_view = view
        self.session_list.set_listing(view.listing, dict(view.project_names), view.withheld, view.costs)
        self.post_message(SessionsTab.ListingChanged(view))
        self._report_new_problems(view)
        self._refresh_open_session(view)
        self._listing_done()

    def _report_new_problems(self, view: ListingView) -> None:
        """Each broken folder is reported once, when it first shows up."""
        new_problems = [p for p in view.listing.problems if p not in self._problems_shown]
        if not new_problems:
            return
        self._problems_shown.update(new_problems)
        lines = "\n".join(one_line(self.opmem.in_store(p), 160) for p in new_problems[:5])
        if len(new_problems) > 5:
            lines += f"\n… and {len(new_problems) - 5} more"
        count = len(new_problems)
        self.app.notify(
            f"{count} session folder{'s' if count != 1 else ''} skipped:\n{lines}",
            title="Sessions",
            severity="warning",
            markup=False,
            timeout=10,
        )

    def _refresh_open_session(self, view: ListingView) -> None:
        """Reload the replay when the open session changed on disk; keep the reader's place."""
        if self._open_id is None:
            if not view.listing.sessions:
                self.replay.show_empty(EMPTY_STORE_HELP)
            return
        meta = view.find(self._open_id)
        if meta is None:
            self._open_session_gone()
            return
        if stamp(meta) != self._open_stamp and not self._open_label:
            follow = self.replay.total and self.replay.index == self.replay.total - 1
            label = self._branch_label if self._open_head else ""
            self._load_replay(meta.id, self._open_head, follow=bool(follow), label=label)

    def _open_session_gone(self) -> None:
        gone_id = self._open_id
        if gone_id is None:
            return
        if gone_id not in self._deleting:
            gone = self.replay.meta
            title = one_line(gone.display_title, 60) if gone is not None and gone.id == gone_id else gone_id
            self.app.notify(
                f"“{title}” was deleted by another program.",
                title="Session",
                severity="warning",
                markup=False,
                timeout=8,
            )
        self._deleting.discard(gone_id)
        self.replay.show_empty("This session was deleted.")
        self._open_id = None

    # -- replay ----------------------------------------------------------------------------
    def on_session_highlighted(self, message: SessionHighlighted) -> None:
        if message.session_id is None:
            if self.listing_view is not None and not self.listing_view.listing.sessions:
                self.replay.show_empty(EMPTY_STORE_HELP)
            return
        if message.session_id != self._open_id:
            self._open_id = message.session_id
            self._open_head = None
            self._open_label = ""
            self._load_replay(message.session_id, None, reset=True)

    def on_session_chosen(self, message: SessionChosen) -> None:
        self.replay.view.focus()

    def open_session(
        self,
        session_id: str,
        *,
        head_id: str | None = None,
        turn: int | None = None,
        branch: str = "",
        select: str = "",
    ) -> None:
        """Show a session in the replay (from a project commit...), the list cursor on it too.
        `head_id`/`branch`: follow that branch instead of the session's current one; `select`:
        the message to put the cursor on once the turn is shown."""
        self._open_id = session_id
        self._select_node = select
        self._open_head = head_id
        self._open_label = ""
        self._branch_label = f"on {branch}" if head_id and branch else ""
        if not self.session_list.select_session(session_id, announce=False):
            self.session_list.clear_filter()  # a filter hid it (the focus goes to the replay below)
            self.session_list.select_session(session_id, announce=False)
        self._load_replay(session_id, head_id, turn=turn, reset=True, label=self._branch_label)
        self.replay.view.focus()

    def is_listed(self, session_id: str) -> bool:
        return self.listing_view is None or self.listing_view.find(session_id) is not None

    @work(thread=True, exclusive=True, group="replay", exit_on_error=False, description="Loading the session")
    def _load_replay(
        self,
        session_id: str,
        head_id: str | None,
        *,
        turn: int | None = None,
        reset: bool = False,
        follow: bool = False,
        label: str = "",
    ) -> None:
        listing = self.listing_view
        projects = listing.projects if listing is not None else {}
        try:
            if reset and head_id is None and turn is None:  # opening on its latest turn: that first
                drawn = threading.Event()
                if deliver(self, self._show_first, self.data.last_turn(session_id, projects), label, drawn):
                    drawn.wait(FIRST_FRAME_WAIT_S)  # reading the rest would hold the GIL off that frame
                if cancelled():
                    return
                reset = False  # the whole session keeps the reader's place, wherever it is by then
            data = self.data.replay(session_id, head_id, projects)
        except Exception as exc:  # a broken session must say so in the pane, not leave the last one up
            deliver(self, self._replay_failed, session_id, exc)
            return
        deliver(self, self._show_replay, data, turn, reset, follow, label)

    def _show_first(self, data: ReplayData, label: str, drawn: threading.Event) -> None:
        self._show_replay(data, None, True, False, label)
        self.call_after_refresh(drawn.set)

    def _replay_failed(self, session_id: str, exc: Exception) -> None:
        if session_id != self._open_id:
            return
        listed = self.listing_view.find(session_id) if self.listing_view is not None else None
        # Remember the listing's stamp, so the next change does not retry (and re-notify) forever.
        self._open_stamp = stamp(listed) if listed is not None else None
        self.replay.show_empty(f"This session cannot be read: {self.opmem.in_store(str(exc))}")
        self.opmem.report_error(exc, "Loading the session")
        self.screen.refresh_bindings()

    def _show_replay(self, data: ReplayData, turn: int | None, reset: bool, follow: bool, label: str) -> None:
        if data.meta.id != self._open_id:
            return
        self._open_stamp = stamp(data.meta)
        if data.problems and data.meta.id not in self._problems_told:
            self._problems_told.add(data.meta.id)
            lines = "\n".join(one_line(self.opmem.in_store(p), 200) for p in data.problems[:5])
            self.app.notify(
                f"Some of this session could not be read:\n{lines}",
                title="Session",
                severity="warning",
                markup=False,
                timeout=10,
            )
        if follow or (reset and turn is None):  # a session opens on its latest turn
            turn = data.turn_total
        self.replay.show_session(
            data.meta,
            data.turns,
            project=data.project,
            head_id=data.head_id,
            turn_number=turn,
            view_label=label,
            total=data.turn_total,
            originals=data.originals,
            cost=data.cost,
        )
        if self._select_node:
            self.replay.select_node(self._select_node)
            self._select_node = ""
        self.screen.refresh_bindings()

    # -- open a linked turn ----------------------------------------------------------------
    @work(thread=True, exclusive=True, group="linking", exit_on_error=False, description="Finding the turn")
    def open_linked(self, session_id: str, turn: int | None, node_id: str, select: str = "") -> None:
        """Open the session at the turn a project commit came from, on the branch that made it;
        `select`: a message of that turn to put the cursor on."""
        head_id, branch = self.data.branch_for_node(session_id, node_id or select)
        deliver(self, lambda: self.open_session(session_id, head_id=head_id, turn=turn, branch=branch, select=select))
