"""The Sessions tab's branches and history: pick a branch of a turn, make it the current one,
browse the session's commits and view one read-only (a part of SessionsTab, sessions.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work

from opmem_tui.widgets.messages import BranchPickRequested, HistoryRequested
from opmem_tui.widgets.replay_view import ReplayPane

from ..data import BranchChoice, ListingView, ReplayData, StoreData
from ..screens.branch_picker import BranchPick, BranchPickerScreen
from ..screens.history import HistoryScreen
from ..workers import deliver

if TYPE_CHECKING:
    from ..app import OpmemApp


class BranchesAndHistory:
    """A part of SessionsTab: its branch picker and history browser."""

    if TYPE_CHECKING:  # SessionsTab's (sessions.py)
        app: OpmemApp
        data: StoreData
        replay: ReplayPane
        listing_view: ListingView | None
        _open_id: str | None
        _open_head: str | None
        _open_label: str
        _branch_label: str

        def refresh_listing(self, rescan: bool = False) -> None: ...

        def _load_replay(self, session_id: str, head_id: str | None, **kwargs: Any) -> None: ...

        def _show_replay(self, data: ReplayData, turn: int | None, reset: bool, follow: bool, label: str) -> None: ...

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
