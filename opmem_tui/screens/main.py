"""The main screen: one tab per view (Sessions, Projects), the job bar and the footer.

The screen holds the keys that act on a tab from anywhere inside it and routes what crosses
tabs (a listing feeds the Projects tab; a linked commit opens its turn in the Sessions tab).
Each tab does its own reading, through the app's data layer, in its own workers. A new tab is
a module in opmem_tui/tabs/, a TabPane here, and its key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.lazy import Lazy
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, TabbedContent, TabPane

from opmem_tui.backend.memory.search import SearchHit
from opmem_tui.widgets.messages import LinkedTurnChosen, SearchRequested
from opmem_tui.widgets.projects_pane import ProjectsPane
from opmem_tui.widgets.sync_status import FooterRow, SyncStatus

from ..commands import PaletteCommand
from ..jobs import Jobs
from ..screens.search import SearchScreen
from ..sync_jobs import SyncJobs
from ..tabs import Tab
from ..tabs.activity import ActivityTab
from ..tabs.memory import MemoryTab
from ..tabs.projects import ProjectsTab
from ..tabs.sessions import SessionsTab
from .go_to import GoTo

if TYPE_CHECKING:
    from ..app import OpmemApp


class MainScreen(SyncJobs, GoTo, Screen[None]):
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
        Binding("3", "show_tab('memory')", "Memory", show=False, id="view.memory"),
        Binding("4", "show_tab('activity')", "Activity", show=False, id="view.activity"),
        Binding("r", "refresh", "Refresh", show=False, id="app.refresh"),
        Binding("ctrl+f", "search_everywhere", "Search all", id="search.everywhere"),
        # priority: ahead of a text box's own ctrl+x (cut), while a job runs (check_action)
        Binding("ctrl+x", "cancel_job", "Cancel job", show=False, id="jobs.cancel", priority=True),
    ]

    def __init__(self) -> None:
        super().__init__()

    @property
    def opmem(self) -> OpmemApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with TabbedContent(initial=self.opmem.start_tab, id="tabs"):
            with TabPane("Sessions", id="sessions"):
                yield SessionsTab(id="sessions-split")
            with TabPane("Projects", id="projects"):
                # Mounted after the first paint: the hidden tab must not slow the start.
                yield Lazy(ProjectsTab(now=self.opmem.now, id="projects-pane"))
            with TabPane("Memory", id="memory"):
                yield Lazy(MemoryTab(id="memory-pane"))
            with TabPane("Activity", id="activity"):
                yield Lazy(ActivityTab(id="activity-pane"))
        yield Jobs(id="job-bar")
        if self.sync_data.configured:  # the sync's status at the footer's right
            with FooterRow():
                yield Footer()
                yield SyncStatus(now=self.opmem.now, id="sync-status")
        else:
            yield Footer()

    @property
    def sessions(self) -> SessionsTab:
        return self.query_one(SessionsTab)

    @property
    def jobs(self) -> Jobs:
        return self.query_one(Jobs)

    @property
    def active_tab(self) -> str:
        return self.query_one(TabbedContent).active

    def on_mount(self) -> None:
        self.jobs.start_idle_distillation(self.opmem.idle_distil)
        if self.opmem.offer_import:
            self.jobs.offer_found_agents()
        self.start_sync_schedule()

    # -- what crosses tabs -----------------------------------------------------------------
    def on_sessions_tab_listing_changed(self, message: SessionsTab.ListingChanged) -> None:
        for tab in self.query(ProjectsTab):  # none until the lazy tab is mounted
            tab.set_listing(message.view)
        for activity in self.query(ActivityTab):
            activity.set_listing(message.view)

    def on_activity_tab_ready(self, message: ActivityTab.Ready) -> None:
        view = self.sessions.listing_view
        if view is not None:
            self.query_one(ActivityTab).set_listing(view)

    def on_projects_pane_ready(self, message: ProjectsPane.Ready) -> None:
        view = self.sessions.listing_view
        if view is not None:
            self.query_one(ProjectsTab).set_listing(view)

    def on_search_requested(self, message: SearchRequested) -> None:
        self.action_search_everywhere(message.query)

    def on_linked_turn_chosen(self, message: LinkedTurnChosen) -> None:
        if not self.sessions.is_listed(message.session_id):
            self.app.notify(
                f"Session {message.session_id} is not in the store (deleted or not imported).",
                severity="warning",
                markup=False,
            )
            return
        self.show_tab("sessions", self.sessions.replay.view)
        self.sessions.open_linked(message.session_id, message.turn, message.head_id, message.node_id)

    # -- focus across a tab switch ---------------------------------------------------------
    def show_tab(self, tab: str, focus: Widget | None) -> None:
        """Show `tab` and focus `focus` in it, now. The switch shows and hides the panes at once;
        Screen.set_focus is immediate too (Widget.focus() waits its turn in the app's queue), so
        the widget focused in the hidden tab gets its Blur before the Hide of the next layout.
        Still focused at its Hide, it would blur itself (Widget._on_hide), the focus would go to
        a sibling in the hidden tab, and the TabbedContent, following the focus, would show that
        tab again."""
        self.query_one(TabbedContent).active = tab
        if focus is not None:
            self.set_focus(focus)

    def on_jobs_finished(self, message: Jobs.Finished) -> None:
        self.sessions.refresh_listing()
        for memory in self.query(MemoryTab):  # a job may have changed the memory too
            memory.memory_changed()

    def sync_changed_here(self) -> None:
        """A sync pulled sessions, titles or memory: the lists are read again."""
        self.on_jobs_finished(Jobs.Finished())

    # -- keys ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        tabs = self.query(SessionsTab)
        if not tabs:  # the footer asks before the tabs are mounted
            return action not in ("prev_turn", "next_turn", "replay", "live_view", "make_head")
        if action in ("prev_turn", "next_turn", "replay"):
            return self.active_tab == "sessions"
        if action == "live_view":
            return tabs.first().can_go_live
        if action == "make_head":
            return tabs.first().can_make_head
        if action == "cancel_job":  # no job: the key goes on (a text box cuts with it)
            return self.jobs.running
        return True

    def action_prev_turn(self) -> None:
        self.sessions.replay.step(-1)

    def action_next_turn(self) -> None:
        self.sessions.replay.step(1)

    def action_replay(self, action: str) -> None:
        getattr(self.sessions.replay, f"action_{action}")()

    def action_make_head(self) -> None:
        self.sessions.make_head()

    def action_live_view(self) -> None:
        self.sessions.live_view()

    def action_show_tab(self, tab: str) -> None:
        pane = self.query_one(f"TabPane#{tab}")
        view = next((node for node in pane.walk_children() if isinstance(node, Tab)), None)
        self.show_tab(tab, view.default_focus() if view is not None else None)  # a lazy tab not mounted: none

    def action_refresh(self) -> None:
        # An explicit refresh re-reads every meta.json, for edits made outside opmem.
        self.sessions.refresh_listing(rescan=True)

    def action_cancel_job(self) -> None:
        self.jobs.cancel()

    def action_connect_agents(self) -> None:
        from ..screens.connect import ConnectScreen

        self.app.push_screen(ConnectScreen(self.opmem.home))

    def action_search_everywhere(self, query: str = "") -> None:
        view = self.sessions.listing_view
        titles = {m.id: m.display_title for m in view.listing.sessions} if view is not None else {}
        self.app.push_screen(SearchScreen(titles, query), self._open_hit)

    def _open_hit(self, hit: SearchHit | None) -> None:
        if hit is None:
            return
        if not hit.session_id:
            self.app.notify("This hit points at no session (a project commit).", markup=False)
            return
        node = hit.node_ids[0] if hit.node_ids else ""
        self.post_message(LinkedTurnChosen(hit.session_id, hit.turn, hit.commit, "", node))

    # -- palette ---------------------------------------------------------------------------
    def _current_session(self) -> tuple[str | None, str]:
        current = self.sessions.session_list.current
        return (current.id, current.display_title) if current is not None else (None, "")

    def _projects_commands(self) -> list[PaletteCommand]:
        """The Projects tab's own commands (Blame a file…), while it is the tab on screen."""
        if self.active_tab != "projects":
            return []
        return [command for tab in self.query(ProjectsTab) for command in tab.palette_commands()]

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            *self.jobs.import_commands(),
            *self.go_to_commands(),
            *self.sessions.palette_commands(),
            *self._projects_commands(),
            *self.jobs.store_commands(),
            *self.sync_commands(),
            *self.jobs.memory_commands(*self._current_session()),
            PaletteCommand("Switch theme…", "Pick a colour theme (saved to config.toml)", self.app.search_themes),
            PaletteCommand(
                "Show keys", "Every key binding and its id for config.toml [keys]", self.opmem.action_show_keys
            ),
            PaletteCommand("Refresh sessions", "Re-read the session list now", self.action_refresh),
            PaletteCommand(
                "Connect an agent…",
                "Give Claude Code, Codex, Gemini, Cursor, OpenCode or Copilot the memory (or take it back)",
                self.action_connect_agents,
            ),
            PaletteCommand(
                "Search everywhere",
                "Every message of every session and the memory (ctrl+f)",
                self.action_search_everywhere,
            ),
            *self.jobs.cancel_commands(),
        ]
