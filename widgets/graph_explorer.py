"""The graph explorer: find an entity, see its neighbourhood as a tree, walk it.

Left: a search box (fuzzy, as you type) and the entities it matches. Right: the centre entity
and its edges within 1-3 hops as a tree (each edge with relation, confidence and time), and
what the cursor is on: an edge's provenance, or the centre's aliases and why each was merged.
`enter` on a neighbour recentres on it, `o` opens the turn an edge came from. The widget only
draws and posts messages; the tab reads the memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from opmem_tui.backend.memory.entity_finder import EntityMatch
from opmem_tui.backend.memory.results import AliasInfo, EntityRef, GraphEdge

from .graph_tree import GraphItem, GraphLines, day, graph_items
from .item_lines import ItemLines
from .safe_text import one_line
from .styling import theme_style
from .typing_pause import EVENT_CLOCK, TimedInput, TypingPause

FIND_DEBOUNCE = 0.12  # keys closer than this are one run, found when it stops
MAX_HOPS = 3


def merge_text(info: AliasInfo, muted: Style) -> Text:
    """One alias merge: which name, why, how sure, and whether it was undone."""
    name = one_line(info.merged.name if info.merged else info.merge.merged, 40)
    text = Text.assemble(
        ("merged ", muted), (name, "bold"), (f": {one_line(info.merge.reason, 60) or 'no reason given'}", "")
    )
    text.append(f" (score {info.merge.score:.2f}, {day(info.merge.at)})", style=muted)
    if not info.active:
        text.append(" · undone", style=muted)
    return text


class GraphExplorer(Horizontal):
    """Entity finder beside the neighbourhood tree."""

    BINDINGS = [
        Binding("slash", "find", "Find entity", id="graph.find"),
        Binding("o", "open_turn", "Open turn", id="graph.open_turn"),
        Binding("plus,equals_sign", "hops(1)", "More hops", id="graph.more_hops"),
        Binding("minus", "hops(-1)", "Fewer hops", id="graph.fewer_hops"),
        Binding("s", "toggle_superseded", "Superseded", id="graph.superseded"),
        Binding("a", "as_of", "As of…", id="graph.as_of"),
        Binding("backspace", "back", "Back", show=False, id="graph.back"),
        Binding("escape", "leave_finder", "Back to the graph", show=False, id="graph.leave_find"),
    ]

    DEFAULT_CSS = """
    GraphExplorer { height: 1fr; }
    GraphExplorer > #graph-side { width: 34%; min-width: 30; border-right: vkey $panel; }
    GraphExplorer #entity-find { background: $boost; }
    GraphExplorer #entity-matches { height: 1fr; border: none; scrollbar-size-vertical: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    GraphExplorer > #graph-main { width: 1fr; }
    GraphExplorer #graph-header { height: 1; background: $boost; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    GraphExplorer #graph-tree { height: 1fr; }
    GraphExplorer #graph-detail { height: 6; border-top: hkey $panel; padding: 0 1; color: $text-muted; }
    GraphExplorer #graph-empty { padding: 1; color: $text-muted; }
    """

    class QueryChanged(Message):
        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class Requested(Message):
        """Show this entity's neighbourhood with these options."""

        def __init__(self, entity_id: str, hops: int, as_of: float | None, superseded: bool) -> None:
            super().__init__()
            self.entity_id = entity_id
            self.hops = hops
            self.as_of = as_of
            self.superseded = superseded

    class AsOfWanted(Message):
        """`a`: ask the user for a date."""

    class TurnWanted(Message):
        """`o` on an edge: open the turn it came from."""

        def __init__(self, session_id: str, turn: int | None, node_ids: tuple[str, ...]) -> None:
            super().__init__()
            self.session_id = session_id
            self.turn = turn
            self.node_ids = node_ids

    def __init__(self, *, id: str | None = None, clock: Callable[[], float] = EVENT_CLOCK) -> None:
        super().__init__(id=id)
        self.center: str | None = None
        self.hops = 1
        self.as_of: float | None = None
        self.superseded = False
        self.names: dict[str, EntityRef] = {}
        self.history: list[str] = []
        self.aliases: list[str] = []
        self.merges: list[AliasInfo] = []
        self._matches: list[EntityMatch] = []
        self.matches_query = ""  # the finder text the shown matches answer
        self.typing = TypingPause(self, FIND_DEBOUNCE, self._find, clock=clock)
        self._focus_tree = False  # an entity was picked from the finder: the tree takes the focus once shown
        self._pick_first = False  # enter came before the matches of the text typed: pick the first on arrival

    def compose(self) -> ComposeResult:
        with Vertical(id="graph-side"):
            yield TimedInput(placeholder="Find an entity…  (/)", compact=True, id="entity-find")
            yield OptionList(id="entity-matches")
        with Vertical(id="graph-main"):
            yield Static("", id="graph-header", markup=False)
            yield Static("", id="graph-empty", markup=False)
            yield GraphLines(id="graph-tree")
            yield Static("", id="graph-detail", markup=False)

    @property
    def tree(self) -> GraphLines:
        return self.query_one("#graph-tree", GraphLines)

    @property
    def finder(self) -> TimedInput:
        return self.query_one("#entity-find", TimedInput)

    @property
    def matches(self) -> OptionList:
        return self.query_one("#entity-matches", OptionList)

    def on_mount(self) -> None:
        self._show_message("Find an entity on the left (type a name), then enter.")
        self.watch(self.app, "theme", self._retheme, init=False)  # colours baked into the rows follow

    def _retheme(self) -> None:
        if self._matches:
            self.show_matches(self.matches_query, self._matches)
        if self.center is not None and self.tree.display:
            self._describe(self.tree.cursor_item)

    # -- finding ---------------------------------------------------------------------------
    def default_focus(self) -> Widget:
        """Never the finder: keys typed on arrival are view keys, not a name (`/` finds)."""
        return self.tree if self.tree.display else self.matches

    def action_find(self) -> None:
        # Now, not queued (Widget.focus waits its turn): keys typed right after `/` are already
        # queued behind it and must land in the box, not act as the graph's keys.
        self.screen.set_focus(self.finder)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_finder":  # else escape goes on to the screen
            return self.finder.has_focus
        return True

    def action_leave_finder(self) -> None:
        self.screen.set_focus(self.default_focus())

    @on(Input.Changed, "#entity-find")
    def _query_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.typing.typed(event.value, self.finder.typed_at(event))

    def _find(self, query: str) -> None:
        self.post_message(GraphExplorer.QueryChanged(query))

    @on(Input.Submitted, "#entity-find")
    def _query_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        # The keys come back at once: a `+` typed right after enter is More hops, not text.
        self.screen.set_focus(self.default_focus())
        self._focus_tree = True
        if self.matches_query != self.finder.value:
            self._pick_first = True  # the matches for what was typed are on their way
        elif self._matches:
            self.choose(self._matches[0].id)

    def on_key(self, event) -> None:  # down from the search box goes to its matches
        if event.key == "down" and self.finder.has_focus and self._matches:
            event.stop()
            self.matches.focus()
            self.matches.highlighted = 0

    def show_matches(self, query: str, matches: Sequence[EntityMatch]) -> None:
        if query != self.finder.value:
            return  # typed on since
        self.matches_query = query
        self._matches = list(matches)
        if self._pick_first:
            self._pick_first = False
            if matches:
                self.choose(matches[0].id)
        options = []
        for match in matches:
            label = Text(no_wrap=True, overflow="ellipsis")
            label.append(one_line(match.name, 60), style="bold")
            label.append("  " + one_line(match.type, 16), style=theme_style(self, "text-muted"))
            if match.matched:
                label.append(f"  aka {one_line(match.matched, 40)}", style=theme_style(self, "secondary"))
            options.append(Option(label, id=match.id))
        matches_list = self.matches
        matches_list.set_options(options)
        if not options:
            text = f"No entity like “{one_line(query, 40)}”." if query.strip() else "No entities yet."
            matches_list.set_options([Option(Text(text, style=theme_style(self, "text-muted")), disabled=True)])

    @on(OptionList.OptionSelected, "#entity-matches")
    def _match_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self._focus_tree = True
            self.choose(event.option.id)

    # -- the neighbourhood -----------------------------------------------------------------
    def choose(self, entity_id: str, *, remember: bool = True) -> None:
        """Recentre on an entity (the tab reads it and calls show_graph)."""
        if remember and self.center and self.center != entity_id:
            self.history.append(self.center)
        self.center = entity_id
        self._request()

    def open_on(self, entity_id: str) -> None:
        """The first entity shown; the focus, on the match list only while nothing was, moves to it."""
        self._focus_tree = self.matches.has_focus
        self.choose(entity_id)

    def _request(self) -> None:
        if self.center is not None:
            self.post_message(GraphExplorer.Requested(self.center, self.hops, self.as_of, self.superseded))

    def show_graph(
        self,
        center: EntityRef,
        edges: Sequence[GraphEdge],
        names: dict[str, EntityRef],
        *,
        aliases: Sequence[str] = (),
        merges: Sequence[AliasInfo] = (),
        hidden: int = 0,
        truncated: bool = False,
    ) -> None:
        self.center = center.id
        self.names = names
        self.aliases = list(aliases)
        self.merges = list(merges)
        self.query_one("#graph-empty").display = False
        tree = self.tree
        tree.display = True
        tree.show_tree(graph_items(center.id, edges, names), center, names)
        self._header(center, len(edges), hidden, truncated)
        self._describe(tree.cursor_item)
        if self._focus_tree:  # the match list held the focus until the entity was on screen
            self._focus_tree = False
            if self.matches.has_focus:
                self.screen.set_focus(tree)

    def _header(self, center: EntityRef, count: int, hidden: int, truncated: bool) -> None:
        parts = [
            f"{one_line(center.name, 50)} · {count} edge{'s' if count != 1 else ''} within {self.hops} hop{'s' if self.hops != 1 else ''}"
        ]
        if self.as_of is not None:
            parts.append(f"as of {day(self.as_of)}")
        if self.superseded:
            parts.append("superseded shown")
        elif hidden:
            parts.append(f"{hidden} superseded hidden (s)")
        if truncated:
            parts.append("cut at the limit")
        self.query_one("#graph-header", Static).update(Content(" · ".join(parts)), layout=False)  # fixed height

    def show_empty(self, message: str) -> None:
        self.center = None
        self._matches = []
        self.matches.set_options([])
        self._show_message(message)
        self.query_one("#graph-header", Static).update(Content(""), layout=False)

    def _show_message(self, message: str) -> None:
        empty = self.query_one("#graph-empty", Static)
        empty.update(Content(message))
        empty.display = True
        self.tree.display = False
        self.query_one("#graph-detail", Static).update(Content(""), layout=False)

    def show_error(self, message: str) -> None:
        self._show_message(message)

    # -- the cursor ------------------------------------------------------------------------
    def on_item_lines_highlighted(self, message: ItemLines.Highlighted) -> None:
        message.stop()
        self._describe(self.tree.cursor_item)  # where the cursor is now (a recentre may be newer)

    def on_item_lines_chosen(self, message: ItemLines.Chosen) -> None:
        message.stop()
        if message.item != self.tree.selected_item:
            return  # chosen in a neighbourhood shown before this one
        item = self.tree.item_for(message.item)
        if item is not None and item.edge is not None and item.entity != self.center:
            self.choose(item.entity)

    def _describe(self, item: GraphItem | None) -> None:
        detail = self.query_one("#graph-detail", Static)
        if item is None:
            detail.update(Content(""), layout=False)  # fixed height: no new layout per cursor move
            return
        if item.edge is None:
            detail.update(self._center_text(), layout=False)
            return
        g = item.edge
        names = self.names
        source = one_line(names[g.source].name if g.source in names else g.source, 50)
        target = one_line(names[g.target].name if g.target in names else g.target, 50)
        prov = g.edge.provenance
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(g.edge.event_time))
        lines = [
            Text(f"{source} ──{one_line(g.relation, 30)}──► {target}", style="bold"),
            Text(f"confidence {g.confidence:.2f} · true from {when}"),
        ]
        if g.edge.superseded_by is not None:
            reason = f" ({one_line(g.superseded_reason, 60)})" if g.superseded_reason else ""
            lines.append(Text(f"superseded {day(g.valid_to)}{reason}", style=theme_style(self, "warning")))
        turn = f", turn {prov.turn}" if prov.turn else ""
        lines.append(Text(f"from session {one_line(prov.session_id, 60)}{turn} · o opens it"))
        lines.append(
            Text(f"enter recentres on {one_line(names[item.entity].name if item.entity in names else item.entity, 50)}")
        )
        detail.update(Text("\n").join(lines), layout=False)

    def _center_text(self) -> Text:
        ref = self.names.get(self.center or "")
        if ref is None:
            return Text("")
        lines = [Text(f"{one_line(ref.name, 60)} · {one_line(ref.type, 20)} · {one_line(ref.id, 60)}", style="bold")]
        if self.aliases:
            lines.append(Text("also known as " + ", ".join(one_line(a, 30) for a in self.aliases[:8])))
        for info in self.merges[:3]:
            lines.append(merge_text(info, theme_style(self, "text-muted")))
        if len(self.merges) > 3:
            lines.append(Text(f"… {len(self.merges) - 3} more merges (ctrl+p → Undo an alias merge)"))
        if not self.aliases and not self.merges:
            lines.append(Text("no aliases", style=theme_style(self, "text-muted")))
        return Text("\n").join(lines)

    # -- options ---------------------------------------------------------------------------
    def action_hops(self, delta: int) -> None:
        hops = max(1, min(MAX_HOPS, self.hops + delta))
        if hops != self.hops:
            self.hops = hops
            self._request()

    def action_toggle_superseded(self) -> None:
        self.superseded = not self.superseded
        self._request()

    def action_as_of(self) -> None:
        self.post_message(GraphExplorer.AsOfWanted())

    def set_as_of(self, when: float | None) -> None:
        self.as_of = when
        self._request()

    def action_back(self) -> None:
        if self.history:
            self.choose(self.history.pop(), remember=False)

    def action_open_turn(self) -> None:
        item = self.tree.cursor_item
        if item is None or item.edge is None:
            self.notify("Put the cursor on an edge to open the turn it came from.", markup=False)
            return
        prov = item.edge.edge.provenance
        self.post_message(GraphExplorer.TurnWanted(prov.session_id, prov.turn, prov.node_ids))
