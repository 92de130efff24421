"""The session list's table: a virtual table of sessions (only visible rows are drawn), its
columns and how each cell reads. Ten thousand sessions cost one sort and one list; a row becomes
segments only when it scrolls into view."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from opmem_tui.backend.model import SessionMeta
from opmem_tui.backend.privacy.exclusions import is_private
from opmem_tui.backend.usage.reports import Usage

from .cost_text import usage_cost
from .line_view import wrap_text
from .messages import SessionChosen, SessionHighlighted
from .safe_text import one_line
from .secret_marks import mark_segments, marker_spans
from .session_order import last_active

TITLE_MIN = 14  # narrower than this, the list drops the source, then the project column
SOURCE_MAX = 12
COST_WIDTH = 8  # "$1,234.56" is cut; a session rarely costs that much
RIGHT_ALIGNED = frozenset({"turns", "cost"})
PROJECT_MAX = 16

PRIVATE_MARK = "🔒 "  # before the title of a private session


def age_label(ts: float, now: float) -> str:
    """Compact age: now, 5m, 3h, 2d, 3w, 4mo, 2y."""
    if not ts:
        return "?"
    seconds = max(now - ts, 0)
    if seconds < 60:
        return "now"
    for unit, size in (("y", 365 * 86400), ("mo", 30 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


@dataclass(frozen=True)
class Column:
    name: str
    width: int  # 0: takes the rest


class SessionTable(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows of sessions drawn on demand; the cursor is an index into `rows`."""

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False, id="sessions.cursor_up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="sessions.cursor_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="sessions.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="sessions.page_down"),
        Binding("home", "first", "First", show=False, id="sessions.first"),
        Binding("end", "last", "Last", show=False, id="sessions.last"),
        Binding("enter", "choose", "Open", id="sessions.open"),
    ]

    COMPONENT_CLASSES = {
        "session-table--cursor",
        "session-table--cursor-blurred",
        "session-table--title",
        "session-table--source",
        "session-table--project",
        "session-table--age",
        "session-table--turns",
        "session-table--cost",
        "session-table--empty",
        "session-table--secret",
    }

    DEFAULT_CSS = """
    SessionTable {
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-gutter: stable;
        & > .session-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
        & > .session-table--cursor-blurred { background: $block-cursor-blurred-background; }
        & > .session-table--source { color: $secondary; }
        & > .session-table--project { color: $accent; }
        & > .session-table--age { color: $text-muted; }
        & > .session-table--turns { color: $text-muted; }
        & > .session-table--cost { color: $success; }
        & > .session-table--empty { color: $text-muted; text-style: italic; }
        & > .session-table--secret { color: $warning; text-style: bold; }
    }
    """

    def __init__(self, *, now: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[SessionMeta] = []
        self.cursor = 0
        self.now = now
        self.project_names: dict[str, str] = {}
        self.withheld: frozenset[str] = frozenset()  # sessions the memory never sees (marked)
        self.costs: Mapping[str, Usage] = {}  # tokens and cost by session; a Cost column when any
        self.source_width = SOURCE_MAX
        self.project_width = 0
        self.empty_message = "Loading sessions…"
        self._cache: LRUCache[tuple[int, int, bool, bool], Strip] = LRUCache(512)
        self._last_highlight: str | None = None

    # -- data ------------------------------------------------------------------------------
    def set_rows(self, rows: list[SessionMeta], keep: str | None = None) -> None:
        """Replace the rows; the cursor stays on `keep` (a session id) when it is still there."""
        self.rows = rows
        index = -1
        if keep is not None:
            index = next((i for i, meta in enumerate(rows) if meta.id == keep), -1)
        self.cursor = index if index >= 0 else max(0, min(self.cursor, len(rows) - 1))
        self._cache.clear()
        self.virtual_size = Size(self.size.width, max(len(rows), 1))
        self.refresh()
        self._scroll_to_cursor()
        # Announce from our own message loop: a message created while the parent runs would
        # count the parent as its sender and stop bubbling there.
        self.call_next(self._announce)

    @property
    def current(self) -> SessionMeta | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def move_to(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        if index != self.cursor:
            old = self.cursor
            self.cursor = index
            self._refresh_row(old)
            self._refresh_row(index)
            self._scroll_to_cursor()
        self._announce()

    def quiet_highlight(self, session_id: str) -> None:
        """The next highlight of `session_id` is not announced (the screen already opened it)."""
        self._last_highlight = session_id

    def _announce(self) -> None:
        current = self.current
        session_id = current.id if current else None
        if session_id != self._last_highlight:
            self._last_highlight = session_id
            self.post_message(SessionHighlighted(session_id))

    def _refresh_row(self, index: int) -> None:
        for key in [k for k in self._cache.keys() if k[0] == index]:  # noqa: SIM118 (LRUCache iterates values)
            self._cache.discard(key)
        self.refresh_line(index)

    def _scroll_to_cursor(self) -> None:
        height = self.scrollable_content_region.height or self.size.height
        if height <= 0:
            return
        top = round(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    # -- drawing ---------------------------------------------------------------------------
    def set_column_widths(self, source: int, project: int) -> None:
        """Widths of the source and project columns, from the longest value in the listing."""
        self.source_width = max(6, min(source, SOURCE_MAX))
        self.project_width = max(7, min(project, PROJECT_MAX)) if project else 0
        self._cache.clear()

    def columns(self, width: int) -> list[Column]:
        """The title takes what is left; the source column, then the project column are
        dropped only when the title would get narrower than TITLE_MIN."""
        tail = [Column("age", 4), Column("turns", 5)]
        optional = [Column("cost", COST_WIDTH)] if self.costs else []  # dropped first when narrow
        optional.append(Column("source", self.source_width))
        if self.project_width:
            optional.append(Column("project", self.project_width))
        while optional and width - sum(c.width + 1 for c in optional + tail) - 2 < TITLE_MIN:
            optional.pop(0)
        cols = optional + tail
        fixed = sum(c.width + 1 for c in cols)
        return [Column("title", max(width - fixed - 2, 8)), *cols]

    def cell_text(self, meta: SessionMeta, column: str, now: float) -> str:
        if column == "title":
            # kept out of the memory: `opmem sessions private`, or [memory] exclude_projects / exclude_paths
            mark = PRIVATE_MARK if is_private(meta) or meta.id in self.withheld else ""
            return mark + one_line(meta.display_title, 300)
        if column == "source":
            return one_line(meta.source, 30)
        if column == "project":
            return one_line(self.project_names.get(meta.project_id, meta.project_id), 40)
        if column == "age":
            return age_label(last_active(meta), now)
        if column == "cost":
            usage = self.costs.get(meta.id)
            return usage_cost(usage) if usage is not None else ""
        return str(meta.turn_count)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def _component(self, name: str) -> Style:
        return self.get_component_rich_style(f"session-table--{name}", default=Style())

    def render_line(self, y: int) -> Strip:
        index = y + round(self.scroll_y)
        width = self.scrollable_content_region.width
        base = self.rich_style
        if not self.rows:
            wrapped = wrap_text(self.empty_message, max(width - 2, 8))
            if 1 <= y <= len(wrapped):
                text = set_cell_size(f" {wrapped[y - 1]}", width)
                return Strip([Segment(text, base + self._component("empty"))], width)
            return Strip.blank(width, base)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        is_cursor = index == self.cursor
        key = (index, width, is_cursor, self.has_focus)
        strip = self._cache.get(key)
        if strip is not None:
            return strip
        meta = self.rows[index]
        now = self.now()
        row_style = base
        if is_cursor:
            row_style = base + self._component("cursor" if self.has_focus else "cursor-blurred")
        segments = [Segment(" ", row_style)]
        for column in self.columns(width):
            text = self.cell_text(meta, column.name, now)
            if column.name in RIGHT_ALIGNED:
                cell = text.rjust(column.width)[-column.width :]
            elif cell_len(text) > column.width:
                cell = set_cell_size(text, column.width - 1) + "…"
            else:
                cell = set_cell_size(text, column.width)
            style = row_style if is_cursor else base + self._component(column.name)
            spans = marker_spans(cell) if column.name == "title" else []  # a masked secret in a title
            if spans:
                secret = self._component("secret")
                segments.extend(mark_segments([Segment(cell, style)], spans, Style(color=secret.color, bold=True)))
            else:
                segments.append(Segment(cell, style))
            segments.append(Segment(" ", row_style))
        strip = Strip(segments).crop_extend(0, width, row_style)
        self._cache[key] = strip
        return strip

    def header_text(self, width: int) -> str:
        parts = [" "]
        for column in self.columns(width):
            label = column.name.capitalize()
            parts.append(
                (label.rjust(column.width) if column.name in RIGHT_ALIGNED else label.ljust(column.width)) + " "
            )
        return "".join(parts)

    def on_focus(self) -> None:
        self._refresh_row(self.cursor)

    def on_blur(self) -> None:
        self._refresh_row(self.cursor)

    def on_resize(self, event: events.Resize) -> None:
        self._cache.clear()
        self.virtual_size = Size(event.size.width, max(len(self.rows), 1))

    def on_click(self, event: events.Click) -> None:
        index = event.y + round(self.scroll_y)
        if 0 <= index < len(self.rows):
            self.move_to(index)
            if event.chain == 2:
                self.action_choose()

    # -- actions ---------------------------------------------------------------------------
    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1)

    def action_page_up(self) -> None:
        self.move_to(self.cursor - max(self.size.height - 1, 1))

    def action_page_down(self) -> None:
        self.move_to(self.cursor + max(self.size.height - 1, 1))

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(len(self.rows) - 1)

    def action_choose(self) -> None:
        current = self.current
        if current is not None:
            self.post_message(SessionChosen(current.id))
