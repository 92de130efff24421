"""The session list: a virtual table (only visible rows are drawn), type-to-filter, sort keys.

Ten thousand sessions cost one sort and one list; a row becomes segments only when it scrolls
into view. `/` opens the filter (rapidfuzz, every word must match), `s` cycles the sort key.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process, utils
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Static

from opmem_tui.backend.model import SessionListing, SessionMeta
from opmem_tui.backend.privacy.exclusions import is_private

from .line_view import wrap_text
from .messages import SearchRequested, SessionChosen, SessionHighlighted
from .safe_text import one_line
from .secret_marks import mark_segments, marker_spans

EMPTY_STORE = "No sessions yet: `opmem import claude` or `opmem demo`"
EMPTY_STORE_HELP = (
    "No sessions yet.\n\n"
    "Bring in your agents' sessions: press ctrl+p and pick “Import every agent's sessions found on this "
    "machine”, or “Import sessions: Claude Code” (or Cursor, OpenCode, Codex, Gemini CLI, Aider…), or quit (q) "
    "and run `opmem import` (every agent found) or `opmem import claude`.\n\n"
    "Just looking? `opmem demo` opens a demo store with sessions, branches and projects."
)

TITLE_MIN = 14  # narrower than this, the list drops the source, then the project column
SOURCE_MAX = 12
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
class SortKey:
    name: str
    key: Callable[[SessionMeta], object]
    descending: bool


def _updated(meta: SessionMeta) -> float:
    return meta.updated_at or meta.created_at


SORT_KEYS: tuple[SortKey, ...] = (
    SortKey("updated", _updated, True),
    SortKey("created", lambda m: m.created_at, True),
    SortKey("title", lambda m: m.display_title.casefold(), False),
    SortKey("turns", lambda m: m.turn_count, True),
    SortKey("source", lambda m: (m.source, -_updated(m)), False),
    SortKey("project", lambda m: (m.project_id == "", m.project_id, -_updated(m)), False),
)


FUZZY_MIN_LENGTH = 5  # shorter words must appear as typed
FUZZY_CUTOFF = 80  # rapidfuzz partial_ratio a typo'd word must reach


def word_hits(word: str, haystacks: Sequence[str]) -> dict[int, float]:
    """{index: score} of haystacks holding `word`. Where any haystack holds it exactly, only
    those count ("codex" does not also find "code" in claude-code); typos are a fallback for
    words of FUZZY_MIN_LENGTH letters or more ("prser" finds parser)."""
    exact = {index: 100.0 for index, hay in enumerate(haystacks) if word in hay}
    if exact or len(word) < FUZZY_MIN_LENGTH:
        return exact
    found = process.extract(
        word, haystacks, scorer=fuzz.partial_ratio, processor=None, limit=None, score_cutoff=FUZZY_CUTOFF
    )
    return {index: score for _, score, index in found}


SEARCH_PREFIX = "?"  # `/?words`: full-text search over every message instead of the title filter


def fuzzy_filter(query: str, haystacks: Sequence[str]) -> list[int]:
    """Indexes of haystacks where every word of `query` occurs (exactly or, failing that, with
    a typo), best first."""
    words = utils.default_process(query).split()
    if not words:
        return list(range(len(haystacks)))
    scores: dict[int, float] | None = None
    for word in words:
        hits = word_hits(word, haystacks)
        scores = hits if scores is None else {i: scores[i] + s for i, s in hits.items() if i in scores}
        if not scores:
            return []
    assert scores is not None
    return sorted(scores, key=lambda i: (-scores[i], i))


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
        optional = [Column("source", self.source_width)]
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
            return age_label(_updated(meta), now)
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
            if column.name == "turns":
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
            parts.append((label.rjust(column.width) if column.name == "turns" else label.ljust(column.width)) + " ")
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


class SessionList(Vertical):
    """Filter box, column header, the table and a status line."""

    BINDINGS = [
        Binding("slash", "filter", "Filter", id="sessions.filter"),
        Binding("s", "cycle_sort", "Sort", id="sessions.sort"),
        Binding("S", "reverse_sort", "Reverse", show=False, id="sessions.reverse"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="sessions.clear_filter"),
    ]

    DEFAULT_CSS = """
    SessionList { height: 1fr; }
    SessionList > #session-filter { display: none; height: 3; }
    SessionList.-filtering > #session-filter { display: block; }
    SessionList > #session-columns { height: 1; color: $text-muted; text-style: bold; background: $boost; }
    SessionList > SessionTable { height: 1fr; }
    SessionList > #session-status { height: 1; color: $text-muted; padding: 0 1; background: $boost; }
    """

    def __init__(self, *, now: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__(id=id)
        self._now = now
        self.listing = SessionListing(sessions=())
        self.loaded = False
        self.filter_text = ""
        self.sort_index = 0
        self.reverse = False
        self._haystacks: list[str] = []
        self._sorted: list[SessionMeta] = []

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="filter sessions (every word must match; ?words searches every message; esc clears)",
            id="session-filter",
        )
        yield Static("", id="session-columns", markup=False)
        yield SessionTable(now=self._now, id="session-table")
        yield Static("", id="session-status", markup=False)

    @property
    def table(self) -> SessionTable:
        return self.query_one(SessionTable)

    @property
    def filter_input(self) -> Input:
        return self.query_one("#session-filter", Input)

    @property
    def sort_key(self) -> SortKey:
        return SORT_KEYS[self.sort_index]

    @property
    def current(self) -> SessionMeta | None:
        return self.table.current

    # -- data in ---------------------------------------------------------------------------
    def set_listing(
        self,
        listing: SessionListing,
        project_names: dict[str, str] | None = None,
        withheld: frozenset[str] | None = None,
    ) -> None:
        """New listing from the store; the cursor stays on the same session.

        `project_names` maps project ids to names, resolved once per listing by the caller;
        `withheld`: ids of sessions the memory never sees (private, or excluded by config)."""
        self.listing = listing
        self.loaded = True
        table = self.table
        if project_names is not None:
            table.project_names = project_names
        if withheld is not None:
            table.withheld = withheld
        names = table.project_names
        sources = {m.source for m in listing.sessions}
        bound = {m.project_id for m in listing.sessions if m.project_id}
        table.set_column_widths(
            max((cell_len(one_line(s, 30)) for s in sources), default=0),
            max((cell_len(one_line(names.get(p, p), 40)) for p in bound), default=0),
        )
        self._resort()

    def select_session(self, session_id: str, *, announce: bool = True) -> bool:
        """Put the cursor on a session; announce=False when the caller already shows it (no
        SessionHighlighted, which would reload the replay at its first turn)."""
        table = self.table
        for index, meta in enumerate(table.rows):
            if meta.id == session_id:
                if not announce:
                    table.quiet_highlight(session_id)
                table.move_to(index)
                return True
        return False

    def _resort(self) -> None:
        sort = self.sort_key
        descending = sort.descending != self.reverse
        self._sorted = sorted(self.listing.sessions, key=sort.key, reverse=descending)
        names = self.table.project_names
        self._haystacks = [
            utils.default_process(f"{m.display_title} {m.source} {names.get(m.project_id, m.project_id)} {m.id}")
            for m in self._sorted
        ]
        self._apply_filter()

    def _apply_filter(self) -> None:
        table = self.table
        keep = table.current.id if table.current else None
        if self.filter_text.strip():
            rows = [self._sorted[i] for i in fuzzy_filter(self.filter_text, self._haystacks)]
        else:
            rows = list(self._sorted)
        if not self.loaded:
            table.empty_message = "Loading sessions…"
        elif not self.listing.sessions:
            table.empty_message = EMPTY_STORE
        else:
            table.empty_message = f"No session matches “{one_line(self.filter_text, 40)}” (esc clears the filter)"
        table.set_rows(rows, keep=keep)
        self._update_chrome()

    def _update_chrome(self) -> None:
        table = self.table
        width = table.scrollable_content_region.width or self.size.width or 80
        self.query_one("#session-columns", Static).update(Content(table.header_text(width)))
        total = len(self.listing.sessions)
        shown = len(table.rows)
        text = f"{total} session{'s' if total != 1 else ''}"
        if self.filter_text.strip():
            text = f"{shown} of {text}"
        if self.listing.skipped:
            text += f", {self.listing.skipped} skipped"
        arrow = "↓" if self.sort_key.descending != self.reverse else "↑"
        text += f" · sort: {self.sort_key.name} {arrow}"
        self.query_one("#session-status", Static).update(Content(text))

    def on_resize(self, event: events.Resize) -> None:
        # The table's own width is known only after this layout pass.
        self.call_after_refresh(self._update_chrome)

    # -- filter and sort -------------------------------------------------------------------
    def action_filter(self) -> None:
        self.add_class("-filtering")
        self.screen.set_focus(self.filter_input)  # now: the keys typed right after `/` are text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            return self.has_class("-filtering") or bool(self.filter_text)
        return True

    def action_clear_filter(self) -> None:
        if self.clear_filter():
            self.table.focus()

    def clear_filter(self) -> bool:
        """Show every session again (the focus stays where it is). False: no filter was set."""
        if not self.has_class("-filtering") and not self.filter_text:
            return False
        self.filter_text = ""
        self.filter_input.value = ""
        self.remove_class("-filtering")
        self._apply_filter()
        return True

    @on(Input.Changed, "#session-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.value.startswith(SEARCH_PREFIX):
            # Words for search everywhere, handed over on enter (not per key: keys typed while
            # the search screen opens would land in this box). Titles stay unfiltered meanwhile.
            words = one_line(event.value[len(SEARCH_PREFIX) :], 60)
            self.filter_text = ""
            self._apply_filter()
            self.query_one("#session-status", Static).update(
                Content(
                    f"enter: search every message for “{words}”" if words.strip() else "?words: search every message"
                )
            )
            return
        self.filter_text = event.value
        self._apply_filter()

    @on(Input.Submitted, "#session-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.startswith(SEARCH_PREFIX):  # the filter hands over to search everywhere
            query = event.value[len(SEARCH_PREFIX) :].strip()
            self.action_clear_filter()
            self.post_message(SearchRequested(query))
            return
        if not event.value.strip():
            self.remove_class("-filtering")
        self.table.focus()

    def action_cycle_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(SORT_KEYS)
        self.reverse = False
        self._resort()

    def action_reverse_sort(self) -> None:
        self.reverse = not self.reverse
        self._resort()
