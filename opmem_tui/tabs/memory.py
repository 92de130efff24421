"""The Memory tab: the graph explorer, the core.md preview and the timeline.

Every read goes through the app's data layer (`StoreData.memory`) in thread workers, one
exclusive group per kind of read, so a fast typist or a quick recentre drops stale answers.
The tab follows the memory folder (file-change notifications, a poll where those cannot run):
core.md as the file changes, and everything shown once the logs change (a distillation in
another process: `opmem distill`, `opmem watch`, an agent's hook). A jump to a turn bubbles up
as `LinkedTurnChosen`, which the screen opens.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import TabbedContent, TabPane
from watchfiles import awatch

from opmem_tui.backend.memory.core_files import CoreFile, CoreLineTarget, CoreText
from opmem_tui.backend.memory.entity_finder import EntityMatch
from opmem_tui.backend.model import OpmemError
from opmem_tui.widgets.core_view import CoreView
from opmem_tui.widgets.graph_explorer import GraphExplorer
from opmem_tui.widgets.messages import LinkedTurnChosen
from opmem_tui.widgets.safe_text import one_line
from opmem_tui.widgets.timeline_view import TimelineView

from ..memory_data import GraphView, MemoryData, MemoryOverview, TimelineSlice
from ..screens.ask_date import AskDateScreen
from ..workers import FOLLOW_GROUP, ReportsWorkerErrors, deliver
from . import Tab

if TYPE_CHECKING:
    from ..app import OpmemApp

NO_MEMORY = "No memory yet: run `opmem distill` or ctrl+p → Distil now."

CORE_DEBOUNCE_MS = 200


def _followed(_change: object, path: str) -> bool:
    """The files whose change the tab shows: core.md files and the memory's JSONL logs (not
    the derived caches and index beside them)."""
    return path.endswith(("core.md", ".jsonl"))


class MemoryTab(Tab, ReportsWorkerErrors, Vertical):
    BINDINGS = [
        Binding("g", "view('memory-graph')", "Graph", id="memory.graph"),
        Binding("c", "view('memory-core')", "core.md", id="memory.core"),
        Binding("t", "view('memory-timeline')", "Timeline", id="memory.timeline"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.overview: MemoryOverview | None = None
        self._core_stamp: tuple[int, int] | None = None
        self._logs_stamp: tuple[tuple[str, int, int], ...] | None = None  # the logs the overview read
        self._problems_told: set[str] = set()  # unreadable log lines already named to the user
        self._poll: Timer | None = None
        self._started_graph = False
        self._shown = False

    @property
    def opmem(self) -> OpmemApp:
        return self.app  # type: ignore[return-value]

    @property
    def data(self) -> MemoryData:
        return self.opmem.data.memory

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="memory-core", id="memory-views"):
            with TabPane("Graph (g)", id="memory-graph"):
                yield GraphExplorer(id="graph-explorer")
            with TabPane("core.md (c)", id="memory-core"):
                yield CoreView(id="core-view")
            with TabPane("Timeline (t)", id="memory-timeline"):
                yield TimelineView(id="timeline-view")

    @property
    def graph(self) -> GraphExplorer:
        return self.query_one(GraphExplorer)

    @property
    def core(self) -> CoreView:
        return self.query_one(CoreView)

    @property
    def timeline(self) -> TimelineView:
        return self.query_one(TimelineView)

    def default_focus(self) -> Widget | None:
        active = self.query_one("#memory-views", TabbedContent).active
        if active == "memory-core":
            return self.core.lines
        if active == "memory-timeline":
            return self.timeline.lines
        return self.graph.default_focus()

    def action_view(self, pane: str) -> None:
        self.query_one("#memory-views", TabbedContent).active = pane
        focus = self.default_focus()
        if focus is not None:  # now, not queued: see MainScreen.show_tab
            self.screen.set_focus(focus)

    def on_mount(self) -> None:
        if self.opmem.start_tab == "memory":  # the app opens here (the demo): keys land in the tab
            self.focus_default()
        self.call_after_refresh(self.memory_changed)
        if self.opmem.watch_store:
            self._watch_core()
        elif self.opmem.poll_interval and self.opmem.poll_interval > 0:
            self._poll = self.set_interval(self.opmem.poll_interval, self._check_memory)

    def on_show(self) -> None:
        if not self._shown:  # the names for the finder: read when the tab is first looked at
            self._shown = True
            self._load_names()

    @work(thread=True, exclusive=True, group="entity-names", exit_on_error=False, description="Reading entity names")
    def _load_names(self) -> None:
        if self.data.exists():
            self.data.finder.load()

    # -- the whole memory ------------------------------------------------------------------
    def memory_changed(self) -> None:
        """Re-read what is shown (after a distillation, an unmerge, ...)."""
        self._load_overview()

    @work(thread=True, exclusive=True, group="memory-overview", exit_on_error=False, description="Reading the memory")
    def _load_overview(self) -> None:
        logs = self.data.logs_stamp()  # before the read: a write during it is seen as new
        overview = self.data.overview()
        files = self.data.core_files()
        opening = self.data.opening_core(files) if self.core.current is None else None
        deliver(self, self._apply_overview, overview, files, logs, opening)

    def _apply_overview(
        self,
        overview: MemoryOverview,
        files: list[CoreFile],
        logs: tuple[tuple[str, int, int], ...],
        opening: CoreFile | None = None,
    ) -> None:
        self.overview = overview
        self._logs_stamp = logs
        self._tell_problems(overview)
        first = self.core.current is None
        self.core.set_files(files)
        if first and opening in files:  # a first look opens on a project's brief
            self.core.current = opening
        self._load_core(self.core.current or files[0])
        if not overview.exists:
            self.graph.show_empty(NO_MEMORY)
            self.timeline.show_empty(NO_MEMORY)
            return
        self._load_matches(self.graph.finder.value)
        if self.graph.center is not None:
            self.graph.choose(self.graph.center, remember=False)
        self._load_timeline(self.timeline.kinds, self.timeline.entity)

    def _tell_problems(self, overview: MemoryOverview) -> None:
        """Lines of the logs the memory skipped (a torn write, a hand edit), named once each."""
        new = [p for p in overview.problems if p not in self._problems_told]
        if not new:
            return
        self._problems_told.update(new)
        count = len(new) + max(overview.problem_count - len(overview.problems), 0)  # and those past the first few
        lines = "\n".join(one_line(p, 200) for p in new[:5])
        if count > min(len(new), 5):
            lines += f"\n… and {count - min(len(new), 5)} more"
        self.app.notify(
            f"{count} line{'s' if count != 1 else ''} of the memory could not be read: skipped, the files "
            f"left as they are.\n{lines}",
            title="Memory",
            severity="warning",
            markup=False,
            timeout=15,
        )

    # -- graph -----------------------------------------------------------------------------
    def on_graph_explorer_query_changed(self, message: GraphExplorer.QueryChanged) -> None:
        self._load_matches(message.query)

    @work(thread=True, exclusive=True, group="entity-find", exit_on_error=False, description="Finding entities")
    def _load_matches(self, query: str) -> None:
        matches = self.data.find_entities(query)
        deliver(self, self._show_matches, query, matches)

    def _show_matches(self, query: str, matches: tuple[EntityMatch, ...]) -> None:
        graph = self.graph
        graph.show_matches(query, matches)
        if not self._started_graph and graph.center is None and matches and not query:
            self._started_graph = True  # open on the newest entity rather than on nothing
            graph.open_on(matches[0].id)

    def on_graph_explorer_requested(self, message: GraphExplorer.Requested) -> None:
        self._load_graph(message.entity_id, message.hops, message.as_of, message.superseded)

    @work(thread=True, exclusive=True, group="graph", exit_on_error=False, description="Reading the graph")
    def _load_graph(self, entity_id: str, hops: int, as_of: float | None, superseded: bool) -> None:
        try:
            view = self.data.graph(entity_id, hops, as_of, superseded)
        except OpmemError as exc:  # the entity went away (an unmerge, a deleted session)
            deliver(self, self.graph.show_error, one_line(str(exc), 300))
            return
        deliver(self, self._show_graph, view)

    def _show_graph(self, view: GraphView) -> None:
        self.graph.show_graph(
            view.center,
            view.edges,
            dict(view.names),
            aliases=view.aliases,
            merges=view.merges,
            hidden=view.hidden_superseded,
            truncated=view.truncated,
        )

    def on_graph_explorer_as_of_wanted(self, message: GraphExplorer.AsOfWanted) -> None:
        current = time.strftime("%Y-%m-%d", time.localtime(self.graph.as_of)) if self.graph.as_of else ""

        def chosen(text: str | None) -> None:
            if text is None:
                return
            if not text:
                self.graph.set_as_of(None)
                return
            try:
                when = self.data.parse_day(text, self.opmem.now())
            except OpmemError as exc:
                self.app.notify(str(exc), title="As of", severity="warning", markup=False)
                return
            self.graph.set_as_of(when)

        self.app.push_screen(AskDateScreen("Graph as of (what was true then)", current), chosen)

    def on_graph_explorer_turn_wanted(self, message: GraphExplorer.TurnWanted) -> None:
        self._open_turn(message.session_id, message.turn, message.node_ids)

    def _open_turn(self, session_id: str, turn: int | None, node_ids: tuple[str, ...]) -> None:
        if not session_id:
            self.app.notify("This record points at no session (a project commit).", markup=False)
            return
        last, first = (node_ids[-1], node_ids[0]) if node_ids else ("", "")
        self.post_message(LinkedTurnChosen(session_id, turn, None, last, first))

    # -- core.md ---------------------------------------------------------------------------
    def on_core_view_file_wanted(self, message: CoreView.FileWanted) -> None:
        self._load_core(message.file)

    @work(thread=True, exclusive=True, group="core", exit_on_error=False, description="Reading core.md")
    def _load_core(self, file: CoreFile) -> None:
        core = self.data.core(file)
        deliver(self, self._show_core, core)

    def _show_core(self, core: CoreText) -> None:
        changed = self._core_stamp is not None and core.stamp != self._core_stamp and core.exists
        self._core_stamp = core.stamp
        self.core.show_core(core, updated=self.opmem.now() if changed else None)

    @work(exclusive=True, group=FOLLOW_GROUP, exit_on_error=False, description="Following the memory")
    async def _watch_core(self) -> None:
        try:
            folder = self.opmem.data.home.memory_dir
            await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
            async for _changes in awatch(folder, debounce=CORE_DEBOUNCE_MS, watch_filter=_followed):
                self._check_memory()
        except Exception as exc:  # no notifications (watch limit, file system): poll instead
            self.log.warning(f"file-change notifications unavailable ({exc}); polling the memory")
            interval = self.opmem.poll_interval or 2.0
            self._poll = self.set_interval(interval, self._check_memory)

    def _check_memory(self) -> None:
        self._stat_memory(self.core.current)

    @work(thread=True, exclusive=True, group="core-stat", exit_on_error=False, description="Checking the memory")
    def _stat_memory(self, file: CoreFile | None) -> None:
        shown = self._logs_stamp  # None: the first read is still on its way
        if shown is not None and self.data.logs_stamp() != shown:
            deliver(self, self.memory_changed)  # re-reads core.md too
        elif file is not None and self.data.core_stamp(file) != self._core_stamp:
            deliver(self, self._core_file_changed, file)

    def _core_file_changed(self, file: CoreFile) -> None:
        if self.overview is None or not self.overview.exists:
            self.memory_changed()  # the first distillation: everything appears
        else:
            self._load_core(file)

    def on_core_view_line_chosen(self, message: CoreView.LineChosen) -> None:
        self._core_target(message.line)

    @work(thread=True, exclusive=True, group="core-target", exit_on_error=False, description="Finding the turn")
    def _core_target(self, line: str) -> None:
        try:
            target = self.data.core_target(line)
        except OpmemError as exc:  # a short pointer two sessions now share, or one deleted: say which
            deliver(self, self._core_target_failed, str(exc))
            return
        deliver(self, self._open_core_target, target)

    def _core_target_failed(self, message: str) -> None:
        self.app.notify(one_line(message, 400), title="core.md", severity="error", markup=False)

    def _open_core_target(self, target: CoreLineTarget | None) -> None:
        if target is None:
            return
        if target.turn is None:
            self.app.notify("The record behind this line is gone; opening its session.", title="core.md", markup=False)
        self._open_turn(target.session_id, target.turn, target.node_ids)

    # -- timeline --------------------------------------------------------------------------
    def on_timeline_view_filter_changed(self, message: TimelineView.FilterChanged) -> None:
        self._load_timeline(message.kinds, message.entity)

    @work(thread=True, exclusive=True, group="timeline", exit_on_error=False, description="Reading the timeline")
    def _load_timeline(self, kinds: tuple[str, ...], entity: str) -> None:
        try:
            page = self.data.timeline(kinds=kinds, entity=entity)
        except OpmemError as exc:  # an unknown entity: say so, with the close names
            deliver(self, self.timeline.show_empty, one_line(str(exc), 400))
            return
        deliver(self, self._show_timeline, page, False)

    def on_timeline_view_more_wanted(self, message: TimelineView.MoreWanted) -> None:
        self._more_timeline(self.timeline.kinds, self.timeline.entity, message.until, message.skip)

    @work(thread=True, exclusive=True, group="timeline", exit_on_error=False, description="Reading the timeline")
    def _more_timeline(self, kinds: tuple[str, ...], entity: str, until: float, skip: frozenset[str]) -> None:
        page = self.data.timeline(kinds=kinds, entity=entity, until=until, skip=skip)
        deliver(self, self._show_timeline, page, True)

    def _show_timeline(self, page: TimelineSlice, append: bool) -> None:
        parts = []
        if page.kinds:
            parts.append("/".join(page.kinds))
        if page.entity is not None:
            parts.append(one_line(page.entity.name, 40))
        self.timeline.show_events(page.events, page.more, append=append, label=" · ".join(parts))

    @on(TimelineView.EventChosen)
    def _event_chosen(self, message: TimelineView.EventChosen) -> None:
        prov = message.event.provenance
        self._open_turn(prov.session_id, prov.turn, prov.node_ids)
