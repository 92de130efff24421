"""The Sessions tab: the session list and the replay of the session under its cursor.

It reads through the app's StoreData in thread workers (one exclusive group per kind of
read), follows the store through file-change notifications (a poll where those cannot run),
and keeps the reader's place when the open session changes on disk.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker
from watchfiles import awatch

from opmem_tui.backend.model import OpmemError, SessionMeta
from opmem_tui.backend.privacy.exclusions import is_private
from opmem_tui.widgets.messages import BranchPickRequested, HistoryRequested, SessionChosen, SessionHighlighted
from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.safe_text import one_line
from opmem_tui.widgets.session_list import EMPTY_STORE_HELP, SessionList

from ..commands import PaletteCommand
from ..data import BranchChoice, ListingView, ReplayData, StoreData
from ..screens.ask_text import AskTextScreen
from ..screens.branch_picker import BranchPick, BranchPickerScreen
from ..screens.confirm import ConfirmScreen
from ..screens.history import HistoryScreen
from ..screens.rename import RenameScreen
from ..workers import FOLLOW_GROUP, ReportsWorkerErrors, cancelled, deliver
from . import Tab

if TYPE_CHECKING:
    from ..app import OpmemApp

FIRST_FRAME_WAIT_S = 0.5  # at most, before reading the whole of a session opened on its last turn
WATCH_DEBOUNCE_MS = 300  # a burst of writes (an import) becomes one re-listing

Stamp = tuple[float, int, str | None, str, str, bool]


def stamp(meta: SessionMeta) -> Stamp:
    """What changes in the listing when a session changes on disk."""
    return (meta.updated_at, meta.turn_count, meta.head_id, meta.title, meta.project_id, is_private(meta))


class SessionsTab(Tab, ReportsWorkerErrors, Horizontal):
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
        self.session_list.set_listing(view.listing, dict(view.project_names), view.withheld)
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
        )
        if self._select_node:
            self.replay.select_node(self._select_node)
            self._select_node = ""
        self.screen.refresh_bindings()

    # -- branches --------------------------------------------------------------------------
    def on_branch_pick_requested(self, message: BranchPickRequested) -> None:
        self._load_branches(message.session_id, message.number, message.fork_heads)

    @work(thread=True, exclusive=True, group="branches", exit_on_error=False, description="Reading branches")
    def _load_branches(self, session_id: str, number: int, fork_heads: tuple[str, ...]) -> None:
        choices = self.data.branch_choices(session_id, number, fork_heads, self._open_head)
        deliver(self, self._pick_branch, session_id, number, choices)

    def _pick_branch(self, session_id: str, number: int, choices: list[BranchChoice]) -> None:
        def chosen(pick: BranchPick | None) -> None:
            if pick is None or session_id != self._open_id:
                return
            name = next((c.name for c in choices if c.head_id == pick.head_id), pick.head_id)
            if pick.make_current:
                self._switch_head(session_id, pick.head_id, name, number)
                return
            self._open_head = pick.head_id
            self._open_label = ""
            self._branch_label = f"on {name}"
            self._load_replay(session_id, pick.head_id, turn=number, label=self._branch_label)

        self.app.push_screen(BranchPickerScreen(number, choices), chosen)

    @property
    def can_make_head(self) -> bool:
        return bool(self._open_id and self._open_head and not self._open_label)

    @property
    def can_go_live(self) -> bool:
        return bool(self._open_id and (self._open_label or self._open_head))

    def make_head(self) -> None:
        """`B`: the branch being viewed becomes the session's current branch."""
        if self._open_id and self._open_head and not self._open_label:
            turn = self.replay.turn
            name = self._branch_label.removeprefix("on ") or self._open_head
            self._switch_head(self._open_id, self._open_head, name, turn.number if turn else None)

    @work(thread=True, group="edits", exit_on_error=False, description="Switching the branch")
    def _switch_head(self, session_id: str, head_id: str, name: str, turn: int | None) -> None:
        self.data.switch_head(session_id, head_id)
        deliver(self, self._head_switched, session_id, name, turn)

    def _head_switched(self, session_id: str, name: str, turn: int | None) -> None:
        self.app.notify(
            f"{name} is now the current branch: new messages continue from it.", title="Branch", markup=False
        )
        if session_id == self._open_id:
            self._open_head = None
            self._open_label = ""
            self._branch_label = ""
            self._load_replay(session_id, None, turn=turn)
        self.refresh_listing()

    # -- history ---------------------------------------------------------------------------
    def on_history_requested(self, message: HistoryRequested) -> None:
        turn = self.replay.turn
        self._load_history(message.session_id, turn.commit if turn is not None else None)

    @work(thread=True, exclusive=True, group="history", exit_on_error=False, description="Reading the history")
    def _load_history(self, session_id: str, current: str | None) -> None:
        history = self.data.history(session_id)
        screen = HistoryScreen(history.title, history.commits, current)
        deliver(self, self.app.push_screen, screen, lambda oid: self._show_commit(session_id, oid) if oid else None)

    def _show_commit(self, session_id: str, oid: str) -> None:
        self._open_label = f"@ {oid[:7]} read-only"
        self._load_commit(session_id, oid)

    @work(thread=True, exclusive=True, group="replay", exit_on_error=False, description="Reading the commit")
    def _load_commit(self, session_id: str, oid: str) -> None:
        listing = self.listing_view
        data = self.data.commit_view(session_id, oid, listing.projects if listing is not None else {})
        label = f"@ {oid[:7]} (read-only; esc: live)"
        deliver(self, self._show_replay, data, len(data.turns), False, False, label)

    def live_view(self) -> None:
        if self._open_id and (self._open_label or self._open_head):
            self._open_label = ""
            self._open_head = None
            turn = self.replay.turn.number if self.replay.turn else None
            self._load_replay(self._open_id, None, turn=turn)

    # -- open a linked turn ----------------------------------------------------------------
    @work(thread=True, exclusive=True, group="linking", exit_on_error=False, description="Finding the turn")
    def open_linked(self, session_id: str, turn: int | None, node_id: str, select: str = "") -> None:
        """Open the session at the turn a project commit came from, on the branch that made it;
        `select`: a message of that turn to put the cursor on."""
        head_id, branch = self.data.branch_for_node(session_id, node_id or select)
        deliver(self, lambda: self.open_session(session_id, head_id=head_id, turn=turn, branch=branch, select=select))

    # -- rename, delete --------------------------------------------------------------------
    def palette_commands(self) -> list[PaletteCommand]:
        current = self.session_list.current
        if current is None:
            return []
        title = one_line(current.display_title, 40)
        if is_private(current):
            privacy = PaletteCommand(
                "Make this session public again",
                f"Let the memory distil and index “{title}” again",
                lambda: self.set_private_current(False),
            )
        else:
            privacy = PaletteCommand(
                "Make this session private",
                f"Keep “{title}” out of the memory, search and recall (it stays here)",
                lambda: self.set_private_current(True),
            )
        return [
            PaletteCommand("Rename session…", f"Give “{title}” a new title", self.rename_current),
            privacy,
            PaletteCommand("Delete session…", f"Delete “{title}” and its git history", self.delete_current),
            PaletteCommand(
                "Export this session…", f"“{title}” as one HTML file to share (or .md, .json)", self.export_current
            ),
        ]

    def export_current(self) -> None:
        """Ask where, then write the session there (redacted; HTML unless the name ends .md or .json)."""
        meta = self.session_list.current
        if meta is None:
            return

        def done(raw: str | None) -> None:
            if raw:
                self._export(meta.id, Path(raw).expanduser())

        default = str(Path.cwd() / f"{meta.id}.html")
        self.app.push_screen(
            AskTextScreen(
                f"Export “{one_line(meta.display_title, 50)}”",
                default,
                hint="enter writes it · .html: an offline replay · .md: a transcript · .json: the nodes · esc cancels",
            ),
            done,
        )

    @work(thread=True, group="edits", exit_on_error=False, description="Exporting the session")
    def _export(self, session_id: str, path: Path) -> None:
        try:
            written = self.data.export_session(session_id, path)
        except (OpmemError, OSError) as exc:  # OSError: a folder it may not write in, a name too long
            reason = f"{path}: {exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.app.notify(f"Export failed: {reason}", severity="error", markup=False)
            return
        self.app.notify(f"Exported to {written} (secrets redacted)", markup=False)

    def set_private_current(self, private: bool) -> None:
        meta = self.session_list.current
        if meta is not None:
            self._set_private(meta.id, private)

    @work(thread=True, group="edits", exit_on_error=False, description="Changing the session's privacy")
    def _set_private(self, session_id: str, private: bool) -> None:
        change = self.data.set_private(session_id, private)
        if private:
            text = "Private: kept out of the memory, search and recall; what it gave is withdrawn."
        elif change.reason:
            text = f"Public again, but still kept out: {change.reason}"
        else:
            text = "Public again: the next distillation takes it from its first turn."
        self.app.notify(text, title="Session", markup=False)
        deliver(self, self.refresh_listing)

    def rename_current(self) -> None:
        meta = self.session_list.current
        if meta is None:
            return

        def done(title: str | None) -> None:
            if title:
                self._rename(meta.id, title)

        self.app.push_screen(RenameScreen(meta.display_title), done)

    @work(thread=True, group="edits", exit_on_error=False, description="Renaming the session")
    def _rename(self, session_id: str, title: str) -> None:
        self.data.rename(session_id, title)
        self.app.notify(f"Renamed to “{one_line(title, 60)}”", markup=False)
        deliver(self, self.refresh_listing)

    def delete_current(self) -> None:
        meta = self.session_list.current
        if meta is None:
            return
        question = (
            f"Delete the session “{one_line(meta.display_title, 60)}” ({meta.id})?\n"
            "Its folder and git history are removed; this cannot be undone."
        )

        def done(yes: bool | None) -> None:
            if yes:
                self._deleting.add(meta.id)
                self._delete(meta.id)

        self.app.push_screen(ConfirmScreen(question), done)

    @work(thread=True, group="edits", exit_on_error=False, description="Deleting the session")
    def _delete(self, session_id: str) -> None:
        try:
            self.data.delete(session_id)
        except Exception:
            self._deleting.discard(session_id)
            raise
        self.app.notify(f"Deleted session {session_id}", markup=False)
        deliver(self, self.refresh_listing)
