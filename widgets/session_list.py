"""The session list: a virtual table (session_table.py), type-to-filter and sort keys
(session_order.py). `/` opens the filter (rapidfuzz, every word must match), `s` cycles the sort key.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from rapidfuzz import utils
from rich.cells import cell_len
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Static

from opmem_tui.backend.model import SessionListing, SessionMeta
from opmem_tui.backend.usage.reports import Usage

from .messages import SearchRequested
from .safe_text import one_line
from .session_order import SEARCH_PREFIX, SORT_KEYS, SortKey, fuzzy_filter
from .session_table import SessionTable

EMPTY_STORE = "No sessions yet: `opmem import claude` or `opmem demo`"
EMPTY_STORE_HELP = (
    "No sessions yet.\n\n"
    "Bring in your agents' sessions: press ctrl+p and pick “Import every agent's sessions found on this "
    "machine”, or “Import sessions: Claude Code” (or Cursor, OpenCode, Codex, Gemini CLI, Aider…), or quit (q) "
    "and run `opmem import` (every agent found) or `opmem import claude`.\n\n"
    "Just looking? `opmem demo` opens a demo store with sessions, branches and projects."
)


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
        costs: Mapping[str, Usage] | None = None,
    ) -> None:
        """New listing from the store; the cursor stays on the same session.

        `project_names` maps project ids to names, resolved once per listing by the caller;
        `withheld`: ids of sessions the memory never sees (private, or excluded by config);
        `costs`: each session's tokens and cost (a Cost column shows when there are any)."""
        self.listing = listing
        self.loaded = True
        table = self.table
        if project_names is not None:
            table.project_names = project_names
        if withheld is not None:
            table.withheld = withheld
        if costs is not None:
            table.costs = costs
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
