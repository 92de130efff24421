"""The main screen: Sessions (list + replay) and Projects (list + commits + diff) tabs.

The screen is the only place that talks to the Home facade, always from thread workers; the
widgets get dataclasses and post messages back.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.lazy import Lazy
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane
from textual.worker import Worker, WorkerState, get_current_worker

from opmem_tui.backend.model import SessionMeta
from opmem_tui.widgets.commit_log import TurnLink
from opmem_tui.widgets.job_bar import JobBar
from opmem_tui.widgets.messages import (
    BranchPickRequested,
    CommitHighlighted,
    HistoryRequested,
    LinkedTurnChosen,
    MoreCommitsWanted,
    ProjectHighlighted,
    SessionChosen,
    SessionHighlighted,
)
from opmem_tui.widgets.projects_pane import NO_PROJECTS, ProjectsPane
from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.safe_text import one_line
from opmem_tui.widgets.session_list import EMPTY_STORE_HELP, SessionList

from ..commands import PaletteCommand
from ..data import ListingView, ReplayData, branch_for_node, load_commit_page, load_listing, load_replay, project_label
from .branch_picker import BranchChoice, BranchPick, BranchPickerScreen
from .confirm import ConfirmScreen
from .history import HistoryScreen
from .import_path import ImportPathScreen, ImportRequest
from .rename import RenameScreen

if TYPE_CHECKING:
    from ..app import OpmemApp


class MainScreen(Screen[None]):
    BINDINGS = [
        Binding("left,h", "prev_turn", "Prev turn", id="replay.prev_turn"),
        Binding("right,l", "next_turn", "Next turn", id="replay.next_turn"),
        Binding("g", "replay('first_turn')", "First turn", show=False, id="replay.first_turn"),
        Binding("G", "replay('last_turn')", "Last turn", show=False, id="replay.last_turn"),
        Binding("b", "replay('pick_branch')", "Branch", id="replay.branch"),
        Binding("B", "make_head", "Make current", id="replay.make_head"),
        Binding("H", "replay('history')", "History", id="replay.history"),
        Binding("t", "replay('toggle_thinking')", "Thinking", show=False, id="replay.thinking"),
        Binding("escape", "live_view", "Live view", id="replay.live"),
        Binding("1", "show_tab('sessions')", "Sessions", show=False, id="view.sessions"),
        Binding("2", "show_tab('projects')", "Projects", show=False, id="view.projects"),
        Binding("r", "refresh", "Refresh", show=False, id="app.refresh"),
        Binding("ctrl+x", "cancel_job", "Cancel job", show=False, id="jobs.cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.listing_view: ListingView | None = None
        self.projects: dict[str, Any] = {}
        self._open_id: str | None = None
        self._open_head: str | None = None
        self._open_label = ""  # set while a read-only commit view is shown: no live reloads
        self._branch_label = ""  # "on <branch>" while following a branch other than the head's
        self._open_stamp: tuple[Any, ...] | None = None
        self._problems_shown: set[str] = set()
        self._problems_told: set[str] = set()
        self._job_cancel: threading.Event | None = None
        self._polling = False
        self._deleting: set[str] = set()  # deleted from here: no "deleted elsewhere" note

    @property
    def opmem(self) -> OpmemApp:
        return self.app  # type: ignore[return-value]

    @property
    def home(self) -> Any:
        return self.opmem.home

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="sessions", id="tabs"):
            with TabPane("Sessions", id="sessions"):
                with Horizontal(id="sessions-split"):
                    yield SessionList(now=self.opmem.now, id="session-list")
                    yield ReplayPane(id="replay")
            with TabPane("Projects", id="projects"):
                # Mounted after the first paint: the hidden tab must not slow the start.
                yield Lazy(ProjectsPane(now=self.opmem.now, id="projects-pane"))
        yield JobBar(id="job-bar")
        yield Footer()

    @property
    def session_list(self) -> SessionList:
        return self.query_one(SessionList)

    @property
    def replay(self) -> ReplayPane:
        return self.query_one(ReplayPane)

    @property
    def projects_pane(self) -> ProjectsPane:
        return self.query_one(ProjectsPane)

    def on_mount(self) -> None:
        self.session_list.table.focus()
        self.refresh_listing()
        interval = self.opmem.poll_interval
        if interval and interval > 0:
            self.set_interval(interval, self._poll)

    # -- errors ----------------------------------------------------------------------------
    def in_store(self, text: str) -> str:
        """Paths in a message relative to the store (`sessions/<id>/...`), home as ~."""
        root = str(self.home.sessions_dir) + "/"
        return _home_relative(text.replace(root, "sessions/"))

    def show_error(self, exc: BaseException, doing: str) -> None:
        self.app.notify(f"{doing}: {self.in_store(str(exc))}", title="opmem", severity="error", markup=False, timeout=8)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.show_error(event.worker.error, event.worker.description or event.worker.name or "Background task")

    # -- listing ---------------------------------------------------------------------------
    def refresh_listing(self, rescan: bool = False) -> None:
        self._load_listing(rescan=rescan)

    @work(thread=True, exclusive=True, group="listing", exit_on_error=False, description="Listing sessions")
    def _load_listing(self, quiet: bool = False, rescan: bool = False) -> None:
        try:
            prefetched = None if rescan else self.opmem.take_prefetched_listing()
            view = prefetched.result() if prefetched is not None else load_listing(self.home, rescan=rescan)
        finally:
            self._polling = False
        if get_current_worker().is_cancelled:
            return
        previous = self.listing_view
        if quiet and previous is not None and previous.signature == view.signature:
            return
        self.app.call_from_thread(self._apply_listing, view)

    def _poll(self) -> None:
        if self._polling:
            return
        self._polling = True
        self._load_listing(quiet=True)

    def _apply_listing(self, view: ListingView) -> None:
        self.listing_view = view
        self.projects = view.projects
        self.session_list.set_listing(view.listing, view.project_names)
        self._feed_projects()
        new_problems = [p for p in view.listing.problems if p not in self._problems_shown]
        if new_problems:  # each broken folder is reported once, when it first shows up
            self._problems_shown.update(new_problems)
            lines = "\n".join(one_line(self.in_store(p), 160) for p in new_problems[:5])
            more = len(new_problems) - 5
            if more > 0:
                lines += f"\n… and {more} more"
            count = len(new_problems)
            self.app.notify(
                f"{count} session folder{'s' if count != 1 else ''} skipped:\n{lines}",
                title="Sessions",
                severity="warning",
                markup=False,
                timeout=10,
            )
        self._refresh_open_session(view)

    def _refresh_open_session(self, view: ListingView) -> None:
        """Reload the replay when the open session changed on disk; keep the reader's place."""
        if self._open_id is None:
            if not view.listing.sessions:
                self.replay.show_empty(EMPTY_STORE_HELP)
            return
        meta = next((m for m in view.listing.sessions if m.id == self._open_id), None)
        if meta is None:
            gone = self.replay.meta
            if self._open_id not in self._deleting:
                title = (
                    one_line(gone.display_title, 60) if gone is not None and gone.id == self._open_id else self._open_id
                )
                self.app.notify(
                    f"“{title}” was deleted by another program.",
                    title="Session",
                    severity="warning",
                    markup=False,
                    timeout=8,
                )
            self._deleting.discard(self._open_id)
            self.replay.show_empty("This session was deleted.")
            self._open_id = None
            return
        if self._stamp(meta) != self._open_stamp and not self._open_label:
            follow = self.replay.turns and self.replay.index == len(self.replay.turns) - 1
            label = self._branch_label if self._open_head else ""
            self._load_replay(meta.id, self._open_head, follow=bool(follow), label=label)

    @staticmethod
    def _stamp(meta: SessionMeta) -> tuple[Any, ...]:
        return (meta.updated_at, meta.turn_count, meta.head_id, meta.title, meta.project_id)

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
        self, session_id: str, *, head_id: str | None = None, turn: int | None = None, branch: str = ""
    ) -> None:
        """Show a session in the replay (from a project commit...), the list cursor on it too.
        `head_id`/`branch`: follow that branch instead of the session's current one."""
        self.query_one(TabbedContent).active = "sessions"
        self._open_id = session_id
        self._open_head = head_id
        self._open_label = ""
        self._branch_label = f"on {branch}" if head_id and branch else ""
        if not self.session_list.select_session(session_id, announce=False):
            self.session_list.action_clear_filter()  # a filter hid it
            self.session_list.select_session(session_id, announce=False)
        self._load_replay(session_id, head_id, turn=turn, reset=True, label=self._branch_label)
        self.replay.view.focus()

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
        try:
            data = load_replay(self.home, session_id, head_id, self.projects)
        except Exception as exc:  # a broken session must say so in the pane, not leave the last one up
            if not get_current_worker().is_cancelled:
                self.app.call_from_thread(self._replay_failed, session_id, exc)
            return
        if get_current_worker().is_cancelled:
            return
        self.app.call_from_thread(self._show_replay, data, turn, reset, follow, label)

    def _replay_failed(self, session_id: str, exc: Exception) -> None:
        if session_id != self._open_id:
            return
        listed = None
        if self.listing_view is not None:
            listed = next((m for m in self.listing_view.listing.sessions if m.id == session_id), None)
        # Remember the listing's stamp, so the next poll does not retry (and re-notify) forever.
        self._open_stamp = self._stamp(listed) if listed is not None else None
        self.replay.show_empty(f"This session cannot be read: {self.in_store(str(exc))}")
        self.show_error(exc, "Loading the session")
        self.refresh_bindings()

    def _show_replay(self, data: ReplayData, turn: int | None, reset: bool, follow: bool, label: str) -> None:
        if data.meta.id != self._open_id:
            return
        self._open_stamp = self._stamp(data.meta)
        if data.problems and data.meta.id not in self._problems_told:
            self._problems_told.add(data.meta.id)
            lines = "\n".join(one_line(self.in_store(p), 200) for p in data.problems[:5])
            self.app.notify(
                f"Some of this session could not be read:\n{lines}",
                title="Session",
                severity="warning",
                markup=False,
                timeout=10,
            )
        if reset and turn is None:
            turn = 1
        if follow:
            turn = len(data.turns)
        self.replay.show_session(
            data.meta, data.turns, project=data.project, head_id=data.head_id, turn_number=turn, view_label=label
        )
        self.refresh_bindings()

    def action_prev_turn(self) -> None:
        self.replay.step(-1)

    def action_next_turn(self) -> None:
        self.replay.step(1)

    def action_replay(self, action: str) -> None:
        getattr(self.replay, f"action_{action}")()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("prev_turn", "next_turn", "replay"):
            return self.query_one(TabbedContent).active == "sessions"
        if action == "live_view":
            return bool(self._open_id and (self._open_label or self._open_head))
        if action == "make_head":
            return bool(self._open_id and self._open_head and not self._open_label)
        return True

    # -- branches --------------------------------------------------------------------------
    def on_branch_pick_requested(self, message: BranchPickRequested) -> None:
        self._load_branches(message.session_id, message.number, message.fork_heads)

    @work(thread=True, exclusive=True, group="branches", exit_on_error=False, description="Reading branches")
    def _load_branches(self, session_id: str, number: int, fork_heads: tuple[str, ...]) -> None:
        store = self.home.sessions
        branches = {b.head_id: b for b in store.branches(session_id)}
        session_head = store.get_meta(session_id).head_id
        shown_head = self._open_head or session_head
        heads = [shown_head] if shown_head else []
        heads += [h for h in fork_heads if h not in heads]
        choices = []
        for head in heads:
            turns = store.get_turns(session_id, head_id=head)
            reply = ""
            if 0 < number <= len(turns):
                chain = [n for n in turns[number - 1].nodes if n.role == "assistant" and not n.is_tool]
                reply = chain[-1].content if chain else ""
            branch = branches.get(head)
            name = branch.name if branch else f"head {head[:8]}"
            current = head == session_head or (branch is not None and branch.is_current)
            choices.append(
                BranchChoice(head, name, one_line(reply, 100), len(turns), current=current, viewing=head == shown_head)
            )
        self.app.call_from_thread(self._pick_branch, session_id, number, choices)

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

    def action_make_head(self) -> None:
        """`B`: the branch being viewed becomes the session's current branch."""
        if self._open_id and self._open_head and not self._open_label:
            turn = self.replay.turn
            name = self._branch_label.removeprefix("on ") or self._open_head
            self._switch_head(self._open_id, self._open_head, name, turn.number if turn else None)

    @work(thread=True, group="edits", exit_on_error=False, description="Switching the branch")
    def _switch_head(self, session_id: str, head_id: str, name: str, turn: int | None) -> None:
        self.home.sessions.switch_head(session_id, head_id)
        self.app.call_from_thread(self._head_switched, session_id, name, turn)

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
        self._load_history(message.session_id)

    @work(thread=True, exclusive=True, group="history", exit_on_error=False, description="Reading the history")
    def _load_history(self, session_id: str) -> None:
        store = self.home.sessions
        commits = store.session_commits(session_id, limit=1000)
        meta = store.get_meta(session_id)
        turn = self.replay.turn
        current = turn.commit if turn is not None else None
        self.app.call_from_thread(
            self.app.push_screen,
            HistoryScreen(meta.display_title, commits, current),
            lambda oid: self._show_commit(session_id, oid) if oid else None,
        )

    def _show_commit(self, session_id: str, oid: str) -> None:
        self._open_label = f"@ {oid[:7]} read-only"
        self._load_commit(session_id, oid)

    @work(thread=True, exclusive=True, group="replay", exit_on_error=False, description="Reading the commit")
    def _load_commit(self, session_id: str, oid: str) -> None:
        store = self.home.sessions
        turns = store.turns_at(session_id, oid)
        meta = store.get_meta(session_id)
        data = ReplayData(meta, turns, None, project_label(meta, self.projects))
        self.app.call_from_thread(
            self._show_replay, data, len(turns), False, False, f"@ {oid[:7]} (read-only; esc: live)"
        )

    def action_live_view(self) -> None:
        if self._open_id and (self._open_label or self._open_head):
            self._open_label = ""
            self._open_head = None
            turn = self.replay.turn.number if self.replay.turn else None
            self._load_replay(self._open_id, None, turn=turn)

    # -- projects --------------------------------------------------------------------------
    def _feed_projects(self) -> None:
        view = self.listing_view
        panes = self.query(ProjectsPane)
        if view is not None and panes:
            panes.first().set_projects(
                list(view.projects.values()), view.projects_message or NO_PROJECTS, missing=view.missing_projects
            )

    def on_projects_pane_ready(self, message: ProjectsPane.Ready) -> None:
        self._feed_projects()

    def on_project_highlighted(self, message: ProjectHighlighted) -> None:
        log = self.projects_pane.commit_log
        log.reset(message.project_id)
        if message.project_id is None:
            return
        project = self.projects.get(message.project_id)
        view = self.listing_view
        if project is not None and view is not None and message.project_id in view.missing_projects:
            self.projects_pane.set_status("")
            self.projects_pane.diff_view.show_message(
                f"The folder {_home_relative(str(project.workdir))} is gone (moved or deleted). "
                "Put it back to see its history, "
                f"or `opmem projects unbind {project.id}`."
            )
            return
        self.projects_pane.diff_view.show_message("Loading commits…")
        self.projects_pane.set_status("Loading commits…")
        self._load_commits(message.project_id, None)

    def on_more_commits_wanted(self, message: MoreCommitsWanted) -> None:
        log = self.projects_pane.commit_log
        if log.project_id == message.project_id and log.commits:
            self.projects_pane.set_status(f"{len(log.commits)} commits loaded, loading more…")
            self._load_commits(message.project_id, log.commits[-1].oid)

    @work(thread=True, exclusive=True, group="commits", exit_on_error=False, description="Reading the project log")
    def _load_commits(self, project_id: str, after: str | None) -> None:
        titles = {}
        if self.listing_view is not None:
            titles = {m.id: m.display_title for m in self.listing_view.listing.sessions}
        page = load_commit_page(self.home, project_id, after, titles)
        if get_current_worker().is_cancelled:
            return
        self.app.call_from_thread(self._add_commits, project_id, page)

    def _add_commits(self, project_id: str, page: Any) -> None:
        log = self.projects_pane.commit_log
        if log.project_id != project_id:
            return
        links = {oid: TurnLink(*link) for oid, link in page.links.items()}
        log.add_page(project_id, page.commits, links, page.complete)
        loaded = len(log.commits)
        if not loaded:
            self.projects_pane.diff_view.show_message("This project has no commits yet.")
        more = "" if page.complete else " (more load as you scroll)"
        slow = f" · {page.millis / 1000:.1f} s" if page.millis >= 1000 else ""  # like tig: say when it took long
        self.projects_pane.set_status(f"{loaded} commit{'s' if loaded != 1 else ''} loaded{more}{slow}")

    def on_commit_highlighted(self, message: CommitHighlighted) -> None:
        self._load_diff(message.project_id, message.oid)

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False, description="Reading the commit")
    def _load_diff(self, project_id: str, oid: str) -> None:
        detail = self.home.projects.show(project_id, oid)
        if get_current_worker().is_cancelled:
            return
        self.app.call_from_thread(self.projects_pane.diff_view.show_detail, detail)

    def on_linked_turn_chosen(self, message: LinkedTurnChosen) -> None:
        if self.listing_view is not None and not any(
            m.id == message.session_id for m in self.listing_view.listing.sessions
        ):
            self.app.notify(
                f"Session {message.session_id} is not in the store (deleted or not imported).",
                severity="warning",
                markup=False,
            )
            return
        self._open_linked(message.session_id, message.turn, message.head_id)

    @work(thread=True, exclusive=True, group="linking", exit_on_error=False, description="Finding the turn")
    def _open_linked(self, session_id: str, turn: int | None, node_id: str) -> None:
        head_id, branch = branch_for_node(self.home, session_id, node_id)
        self.app.call_from_thread(lambda: self.open_session(session_id, head_id=head_id, turn=turn, branch=branch))

    # -- navigation ------------------------------------------------------------------------
    def action_show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        if tab == "sessions":
            self.session_list.table.focus()
        else:
            self.projects_pane.focus_list()

    def action_refresh(self) -> None:
        # An explicit refresh re-reads every meta.json, for edits made outside opmem.
        self.refresh_listing(rescan=True)

    # -- palette commands ------------------------------------------------------------------
    def palette_commands(self) -> list[PaletteCommand]:
        commands: list[PaletteCommand] = []
        sources = self.opmem.import_sources()
        for source, label in sources:
            if self.opmem.import_needs_path(source):
                commands.append(
                    PaletteCommand(
                        f"Import sessions: {label}…",
                        f"Read {label} sessions from a file or folder you choose",
                        lambda source=source: self.ask_import_path(source),
                    )
                )
                continue
            commands.append(
                PaletteCommand(
                    f"Import sessions: {label}",
                    f"Read {label} sessions from their default folder into the store",
                    lambda source=source, label=label: self.start_import(source, label),
                )
            )
        if sources:
            commands.append(
                PaletteCommand(
                    "Import sessions from a path…",
                    "Read sessions of any agent from a file or folder you choose",
                    self.ask_import_path,
                )
            )
        current = self.session_list.current
        if current is not None:
            title = one_line(current.display_title, 40)
            commands.append(PaletteCommand("Rename session…", f"Give “{title}” a new title", self.rename_current))
            commands.append(
                PaletteCommand("Delete session…", f"Delete “{title}” and its git history", self.delete_current)
            )
        commands += [
            PaletteCommand(
                "Verify store",
                "Check every session repo; report problems, change nothing",
                lambda: self.start_verify(False),
            ),
            PaletteCommand(
                "Repair store", "Check every session repo and backfill missing commits", lambda: self.start_verify(True)
            ),
            PaletteCommand("Switch theme…", "Pick a colour theme (saved to config.toml)", self.app.search_themes),
            PaletteCommand(
                "Show keys", "Every key binding and its id for config.toml [keys]", self.opmem.action_show_keys
            ),
            PaletteCommand("Refresh sessions", "Re-read the session list now", self.action_refresh),
        ]
        if self._job_cancel is not None:
            commands.append(
                PaletteCommand(
                    "Cancel running job", "Stop the import or verification in progress", self.action_cancel_job
                )
            )
        return commands

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
        self.home.sessions.rename_session(session_id, title)
        self.app.call_from_thread(self.app.notify, f"Renamed to “{one_line(title, 60)}”", markup=False)
        self.app.call_from_thread(self.refresh_listing)

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
                self._delete(meta.id)

        self.app.push_screen(ConfirmScreen(question), done)

    @work(thread=True, group="edits", exit_on_error=False, description="Deleting the session")
    def _delete(self, session_id: str) -> None:
        self._deleting.add(session_id)
        self.home.sessions.delete_session(session_id)
        self.app.call_from_thread(self.app.notify, f"Deleted session {session_id}", markup=False)
        self.app.call_from_thread(self.refresh_listing)

    # -- long jobs -------------------------------------------------------------------------
    def _begin_job(self, title: str) -> threading.Event | None:
        if self._job_cancel is not None:
            self.app.notify("Another job is running; cancel it first (ctrl+x).", severity="warning", markup=False)
            return None
        self._job_cancel = threading.Event()
        self.query_one(JobBar).start(title)
        return self._job_cancel

    def _end_job(self) -> None:
        self._job_cancel = None
        self.query_one(JobBar).finish()

    def job_progress(self, done: int, total: int | None, label: str = "") -> None:
        """Thread-safe progress callback for backend jobs."""
        name = label.replace("\\", "/").rsplit("/", 1)[-1] if label else ""
        self.app.call_from_thread(self.query_one(JobBar).progress, done, total, one_line(name, 80))

    def action_cancel_job(self) -> None:
        if self._job_cancel is not None:
            self._job_cancel.set()
            self.app.notify("Cancelling…", markup=False)

    def ask_import_path(self, source: str | None = None) -> None:
        def chosen(request: ImportRequest | None) -> None:
            if request is not None:
                self.start_import(request.source, request.label, request.path)

        self.app.push_screen(ImportPathScreen(self.opmem.import_sources(), source), chosen)

    def start_import(self, source: str, label: str, path: Any = None) -> None:
        cancel = self._begin_job(f"Importing {label} sessions")
        if cancel is not None:
            self._import(source, label, cancel, path)

    @work(thread=True, group="jobs", exit_on_error=False, description="Importing sessions")
    def _import(self, source: str, label: str, cancel: threading.Event, path: Any = None) -> None:
        try:
            paths = [path] if path is not None else None
            report = self.opmem.run_import(source, paths, progress=self.job_progress, cancel=cancel.is_set)
            if cancel.is_set():
                message, severity = f"{label} import cancelled", "information"
            else:
                message, severity = _describe_report(label, report)
            self.app.notify(message, title="Import", severity=severity, markup=False, timeout=10)
        finally:
            self.app.call_from_thread(self._end_job)
            self.app.call_from_thread(self.refresh_listing)

    def start_verify(self, repair: bool) -> None:
        cancel = self._begin_job("Repairing the store…" if repair else "Verifying the store…")
        if cancel is not None:
            self._verify(repair)

    @work(thread=True, group="jobs", exit_on_error=False, description="Verifying the store")
    def _verify(self, repair: bool) -> None:
        try:
            report = self.home.sessions.verify(repair=repair)
            lines = [f"{report.checked} sessions checked"]
            if report.repaired:
                lines.append(f"{len(report.repaired)} repaired")
            lines += [one_line(p, 160) for p in report.problems[:8]]
            self.app.notify(
                "\n".join(lines),
                title="Store OK" if report.ok else "Store problems",
                severity="information" if report.ok else "warning",
                markup=False,
                timeout=10,
            )
        finally:
            self.app.call_from_thread(self._end_job)
            self.app.call_from_thread(self.refresh_listing)


def _describe_report(label: str, report: Any) -> tuple[str, SeverityLevel]:
    """The notification for a finished import: what came in, and the first problems by name."""
    if report is None:
        return f"{label}: done", "information"
    new = getattr(report, "new_sessions", 0) or 0
    seen = getattr(report, "sessions", 0) or 0
    turns = getattr(report, "turns", 0) or 0
    skipped = getattr(report, "skipped", 0) or 0
    warnings = list(getattr(report, "warnings", None) or [])
    if seen or skipped:
        parts = [f"{new} new session{'s' if new != 1 else ''}"]
        if seen > new:
            parts.append(f"{seen - new} updated")
        parts.append(f"{turns} turn{'s' if turns != 1 else ''}")
        if skipped:
            parts.append(f"{skipped} unchanged file{'s' if skipped != 1 else ''} skipped")
        lines = [f"{label}: " + ", ".join(parts)]
    else:
        lines = [f"{label}: no sessions found."]
    for warning in warnings[:3]:
        lines.append("• " + one_line(_home_relative(warning), 160))
    if len(warnings) > 3:
        lines.append(f"… and {len(warnings) - 3} more problems")
    if not seen and not skipped:
        lines.append("Another folder? ctrl+p → Import sessions from a path…")
    severity: SeverityLevel = "warning" if warnings or not (seen or skipped) else "information"
    return "\n".join(lines), severity


def _home_relative(text: str) -> str:
    home = str(Path.home())
    return text.replace(home + "/", "~/") if home not in ("", "/") else text
