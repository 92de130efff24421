"""The graph explorer's neighbourhood as a tree drawn with plain lines.

The centre entity is the root; each row under it is an edge to a neighbour, later hops under the
row that first reached the entity they start from. Rows with rows under them expand and collapse
(`space`, or a click on their ▶/▼). Only the visible lines are drawn (a LineView), and a row's
label is built the first time it is shown, so a recentre costs what it shows, not what it read.
Names and relations come from sessions: they are drawn as plain segments, never as markup.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding

from opmem_tui.backend.memory.core import ACTIVITY_RELATIONS
from opmem_tui.backend.memory.results import EntityRef, GraphEdge

from .item_lines import ItemLines
from .line_view import Line
from .safe_text import one_line

# Tree's own guides (textual.widgets.Tree at guide_depth 4) and expand icons.
SPACE, VERTICAL, LAST, CROSS = "    ", "│   ", "└── ", "├── "
COLLAPSED, EXPANDED = "▶ ", "▼ "


def day(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts)) if ts else "?"


@dataclass
class GraphItem:
    """One row of the tree: an edge to a neighbour (the root row has no edge)."""

    entity: str  # the entity this row leads to
    edge: GraphEdge | None = None
    outgoing: bool = True  # the parent row's entity is the edge's source
    children: list[GraphItem] = field(default_factory=list)
    index: int = 0  # the row's place in GraphTree.items: its item number in the lines
    parent: int = -1  # the index of the row above it in the tree; -1 for the root
    fold: str = ""  # a row that folds the activity edges of one kind (`ran`, `uses model`): its kind


@dataclass
class GraphTree:
    root: GraphItem
    items: list[GraphItem]  # every row, indexed by GraphItem.index


ACTIVITY = ACTIVITY_RELATIONS  # folded, one row per kind
FOLD_MIN = 2  # a kind with fewer activity edges is not folded (a fold of one row is one more key)
ACTIVITY_USES = frozenset({"tool", "model"})  # `session ──uses──► Bash` is activity, `project ──uses──► Django` is not


def activity_kind(g: GraphEdge, names: Mapping[str, EntityRef] | None) -> str:
    """The fold an edge goes under ("" for a knowledge edge, shown first)."""
    if g.relation in ACTIVITY:
        return g.relation
    if g.relation == "uses" and names is not None:
        ref = names.get(g.target)
        if ref is not None and ref.type in ACTIVITY_USES:
            return f"uses {ref.type}"
    return ""


def graph_items(center: str, edges: Sequence[GraphEdge], names: Mapping[str, EntityRef] | None = None) -> GraphTree:
    """The neighbourhood as a tree: hop-1 edges under the centre, each later hop under the
    first row that reached the entity it starts from (breadth first, so a path is shortest).
    Under the centre, knowledge edges come first; activity edges (ran, read, edited, uses a
    tool or model, part-of) are folded under one collapsed row per kind."""
    root = GraphItem(center)
    items = [root]
    reached: dict[str, GraphItem] = {center: root}
    for hop in sorted({g.hop for g in edges}):
        found: dict[str, GraphItem] = {}
        for g in (g for g in edges if g.hop == hop):
            if g.source in reached:
                parent, other, outgoing = reached[g.source], g.target, True
            elif g.target in reached:
                parent, other, outgoing = reached[g.target], g.source, False
            else:
                continue  # its path was cut by a limit
            item = GraphItem(other, g, outgoing, index=len(items), parent=parent.index)
            items.append(item)
            parent.children.append(item)
            found.setdefault(other, item)
        for entity, item in found.items():
            reached.setdefault(entity, item)
    _fold(items, names)
    return GraphTree(root, items)


def _fold(items: list[GraphItem], names: Mapping[str, EntityRef] | None) -> None:
    """Under the centre only: a later hop is shown when its row is opened, already chosen."""
    for parent in items[:1]:
        if not parent.children:
            continue
        knowledge: list[GraphItem] = []
        folds: dict[str, GraphItem] = {}
        for child in parent.children:
            assert child.edge is not None
            kind = activity_kind(child.edge, names)
            if not kind:
                knowledge.append(child)
                continue
            fold = folds.get(kind)
            if fold is None:
                fold = folds[kind] = GraphItem(
                    parent.entity, None, True, index=len(items), parent=parent.index, fold=kind
                )
                items.append(fold)
            child.parent = fold.index
            fold.children.append(child)
        single = [fold.children[0] for fold in folds.values() if len(fold.children) < FOLD_MIN]
        for child in single:  # one edge of a kind: shown as it is, after the knowledge
            child.parent = parent.index
        kept = [fold for fold in folds.values() if len(fold.children) >= FOLD_MIN]
        if folds:
            parent.children = knowledge + single + kept


Span = tuple[str, str]  # (text, style name: a `line--<name>` component class)


def entity_spans(ref: EntityRef) -> list[Span]:
    return [(one_line(ref.name, 80), "center"), (f"  {one_line(ref.type, 20)}", "muted")]


def edge_spans(item: GraphItem, names: Mapping[str, EntityRef]) -> list[Span]:
    """An edge row: arrow with the relation (pointing away from the row above when it is the
    edge's source), the neighbour's name and type, confidence and time, and when retired."""
    edge = item.edge
    assert edge is not None
    ref = names.get(item.entity) or EntityRef(item.entity, "", item.entity, "")
    relation = one_line(edge.relation, 30)
    arrow = f"──{relation}──► " if item.outgoing else f"◄──{relation}── "
    retired = edge.edge.superseded_by is not None
    spans: list[Span] = [
        (arrow, "muted" if retired else "arrow"),
        (one_line(ref.name, 60), "retired" if retired else "name"),
        (f"  {one_line(ref.type, 16)}", "muted"),
        (f"  {edge.confidence:.2f} · {day(edge.edge.event_time)}", "muted"),
    ]
    if retired:
        spans.append((f" · superseded {day(edge.valid_to)}", "warning"))
    return spans


def fold_spans(item: GraphItem) -> list[Span]:
    """A folded row: the kind of activity and how many edges it holds."""
    count = len(item.children)
    return [(f"··{one_line(item.fold, 30)}·· ", "muted"), (f"{count} {'edge' if count == 1 else 'edges'}", "muted")]


class Row(NamedTuple):
    item: int
    guides: str  # the tree guides before the icon
    icon: str  # COLLAPSED, EXPANDED or "" (no rows under it)


def visible_rows(tree: GraphTree, expanded: set[int]) -> list[Row]:
    """The rows shown, top to bottom: the root, then under every expanded row its children."""
    root = tree.root
    rows = [Row(root.index, "", _icon(root, expanded))]
    # (item, the guides of the rows above it, whether it is the last of its siblings)
    stack: list[tuple[GraphItem, str, bool]] = []
    if root.index in expanded:
        stack.extend((child, "", i == len(root.children) - 1) for i, child in reversed(list(enumerate(root.children))))
    while stack:
        item, above, last = stack.pop()
        rows.append(Row(item.index, above + (LAST if last else CROSS), _icon(item, expanded)))
        if item.index in expanded and item.children:
            below = above + (SPACE if last else VERTICAL)
            count = len(item.children)
            stack.extend((child, below, i == count - 1) for i, child in reversed(list(enumerate(item.children))))
    return rows


def _icon(item: GraphItem, expanded: set[int]) -> str:
    if not item.children:
        return ""
    return EXPANDED if item.index in expanded else COLLAPSED


class GraphLines(ItemLines):
    """The tree as lines: one item per row, the cursor on a row; `enter` (or a click) chooses."""

    BINDINGS = [
        Binding("enter", "choose", "Recentre", show=False, id="list.choose"),  # as the Tree's: not in the footer
        Binding("space", "toggle", "Expand/collapse", show=False, id="graph.toggle"),
        Binding("shift+space", "toggle_all", "Expand/collapse all below", show=False, id="graph.toggle_all"),
        Binding("shift+left", "to_parent", "To the row above", show=False, id="graph.parent"),
        Binding(
            "shift+right", "to_parent_next", "To the next row of the row above", show=False, id="graph.parent_next"
        ),
        Binding("shift+up", "sibling(-1)", "Previous sibling", show=False, id="graph.prev_sibling"),
        Binding("shift+down", "sibling(1)", "Next sibling", show=False, id="graph.next_sibling"),
    ]

    LAYOUT_ON_NEW_LINES = False  # a recentre then redraws this view only, not the whole screen

    COMPONENT_CLASSES = ItemLines.COMPONENT_CLASSES | {
        "line--row",
        "line--guide",
        "line--icon",
        "line--center",
        "line--arrow",
        "line--name",
        "line--retired",
        "line--muted",
        "line--warning",
    }

    DEFAULT_CSS = """
    GraphLines {
        height: 1fr;
        overflow-x: auto;
        & > .line--row { color: $foreground; }
        & > .line--guide { color: $surface-lighten-3; }
        & > .line--icon { color: $foreground; }
        & > .line--center { color: $foreground; text-style: bold; }
        & > .line--arrow { color: $secondary; }
        & > .line--name { color: $foreground; }
        & > .line--retired { color: $foreground; text-style: strike; }
        & > .line--muted { color: $text-muted; }
        & > .line--warning { color: $warning; }
        &:light > .line--guide { color: $surface-darken-2; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.graph = GraphTree(GraphItem(""), [])
        self.names: Mapping[str, EntityRef] = {}
        self.expanded: set[int] = set()
        self._rows: dict[int, Row] = {}  # item -> its row, for the rows shown
        self._labels: dict[int, list[Span]] = {}  # item -> label spans, made when first shown

    # -- content ---------------------------------------------------------------------------
    def show_tree(self, graph: GraphTree, center: EntityRef, names: Mapping[str, EntityRef]) -> None:
        """A new neighbourhood: the root expanded (its first hop shown), the cursor on it."""
        self.graph = graph
        self.names = names
        self.expanded = {graph.root.index} if graph.root.children else set()
        self._labels = {graph.root.index: entity_spans(center)}
        self._draw()
        self.move_to(graph.root.index, announce=False)

    def _draw(self) -> None:
        rows = visible_rows(self.graph, self.expanded) if self.graph.items else []
        self._rows = {row.item: row for row in rows}
        lines = [Line(row.guides + row.icon + self.label(row.item), "row", row.item) for row in rows]
        keep = self.selected_item
        self.set_lines(lines, keep_scroll=True)
        if keep in self._rows and self.selected_item != keep:
            self.move_to(keep, announce=False)

    def _label(self, index: int) -> list[Span]:
        label = self._labels.get(index)
        if label is None:
            item = self.graph.items[index]
            label = self._labels[index] = fold_spans(item) if item.fold else edge_spans(item, self.names)
        return label

    @property
    def cursor_item(self) -> GraphItem | None:
        return self.item_for(self.selected_item)

    def item_for(self, index: int) -> GraphItem | None:
        return self.graph.items[index] if 0 <= index < len(self.graph.items) else None

    def label(self, index: int) -> str:
        """A row's text without its guides and icon."""
        return "".join(text for text, _ in self._label(index))

    def rows(self) -> list[GraphItem]:
        """The rows shown, top to bottom."""
        return [self.graph.items[line.item] for line in self.lines if line.item >= 0]

    # -- expand and collapse ---------------------------------------------------------------
    def set_expanded(self, item: GraphItem, expanded: bool, *, below: bool = False) -> None:
        """Expand or collapse a row (and with `below` every row under it). A cursor under a
        row that collapses moves up to that row."""
        changed = {item.index}
        if below:
            todo = list(item.children)
            while todo:
                child = todo.pop()
                changed.add(child.index)
                todo.extend(child.children)
        changed = {i for i in changed if self.graph.items[i].children}
        if expanded:
            self.expanded |= changed
        else:
            self.expanded -= changed
            if self._is_under(self.selected_item, item.index):
                self.move_to(item.index)
        self._draw()

    def _is_under(self, index: int, ancestor: int) -> bool:
        while 0 <= index < len(self.graph.items):
            index = self.graph.items[index].parent
            if index == ancestor:
                return True
        return False

    def action_toggle(self) -> None:
        item = self.cursor_item
        if item is not None and item.children:
            self.set_expanded(item, item.index not in self.expanded)

    def action_toggle_all(self) -> None:
        item = self.cursor_item
        if item is not None and item.children:
            self.set_expanded(item, item.index not in self.expanded, below=True)

    # -- moving along the tree -------------------------------------------------------------
    def action_to_parent(self) -> None:
        item = self.cursor_item
        if item is not None and item.parent >= 0:
            self.move_to(item.parent)

    def action_to_parent_next(self) -> None:
        item = self.cursor_item
        if item is None or item.parent < 0:
            return
        parent = self.graph.items[item.parent]
        following = self._sibling(parent, 1)
        if following is not None:
            self.move_to(following.index)

    def action_sibling(self, delta: int) -> None:
        item = self.cursor_item
        sibling = self._sibling(item, delta) if item is not None else None
        if sibling is not None:
            self.move_to(sibling.index)

    def _sibling(self, item: GraphItem, delta: int) -> GraphItem | None:
        if item.parent < 0:
            return None
        siblings = self.graph.items[item.parent].children
        position = siblings.index(item) + delta
        return siblings[position] if 0 <= position < len(siblings) else None

    # -- drawing and the mouse -------------------------------------------------------------
    def line_segments(self, line: Line, style: Style, mark: Style) -> list[Segment]:
        row = self._rows.get(line.item)
        if row is None:
            return [Segment(line.text, style + mark)]
        segments = []
        if row.guides:
            segments.append(Segment(row.guides, style + self._style("guide") + mark))
        if row.icon:
            segments.append(Segment(row.icon, style + self._style("icon") + mark))
        segments.extend(Segment(text, style + self._style(name) + mark) for text, name in self._label(row.item))
        return segments

    def on_click(self, event: events.Click) -> None:
        """As textual's Tree: a click on ▶/▼ expands or collapses, elsewhere it chooses."""
        event.stop()
        event.prevent_default()  # not ItemLines' click (a double click chooses there)
        item = self.item_for(self.item_at(event.y))
        if item is None:
            return
        row = self._rows[item.index]
        x = event.x + round(self.scroll_x)
        if row.icon and len(row.guides) <= x < len(row.guides) + len(row.icon):
            self.set_expanded(item, item.index not in self.expanded)
            return
        self.move_to(item.index)
        self.action_choose()
