"""Search everywhere (`ctrl+f`): every message of every session and the memory, as you type.

A key typed after a pause starts a search at once, a quick run of keys one search when it stops
(SEARCH_DEBOUNCE), in a thread worker (exclusive: a newer query cancels the one still running,
and a cancelled worker's answer is dropped); `enter` dismisses with the hit,
which the main screen opens in the replay at its turn with its message selected.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, Static

from opmem_tui.backend.memory.search import SearchHit
from opmem_tui.backend.model import OpmemError
from opmem_tui.widgets.item_lines import ItemLines
from opmem_tui.widgets.line_view import Line
from opmem_tui.widgets.safe_text import one_line
from opmem_tui.widgets.search_hits import SearchHitLines, hit_lines, query_words

from ..memory_data import SearchResults
from ..workers import ReportsWorkerErrors, deliver

if TYPE_CHECKING:
    from ..app import OpmemApp

SEARCH_DEBOUNCE = 0.05  # seconds of typing pause before a search runs (stale answers are dropped)
HINT = "type to search every message of every session and the memory · ↓ the hits · enter opens · esc closes"


class SearchScreen(ReportsWorkerErrors, ModalScreen[SearchHit | None]):
    """Dismisses with the chosen hit, or None."""

    BINDINGS = [Binding("escape", "cancel", "Close", show=False, id="search.close")]

    DEFAULT_CSS = """
    SearchScreen #search-input { background: $boost; }
    SearchScreen #search-status { height: 1; color: $text-muted; }
    SearchScreen #search-hits { height: 1fr; }
    """

    def __init__(self, titles: Mapping[str, str], query: str = "") -> None:
        super().__init__()
        self.titles = titles
        self.initial = query
        self.results: SearchResults | None = None
        self.searching = ""  # the query of the search under way ("" when none)
        self._debounce: Timer | None = None
        self._last_key = 0.0  # time.monotonic() of the last edit

    @property
    def opmem(self) -> OpmemApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall"):
            yield Static(Content("Search everywhere"), classes="dialog-title")
            yield Input(value=self.initial, placeholder="words, a path, a name…", id="search-input")
            yield Static(Content(HINT), id="search-status")
            yield SearchHitLines(id="search-hits")

    @property
    def input(self) -> Input:
        return self.query_one("#search-input", Input)

    @property
    def hits_view(self) -> SearchHitLines:
        return self.query_one(SearchHitLines)

    def on_mount(self) -> None:
        self.input.focus()
        if self.initial.strip():
            self._search(self.initial)

    # -- typing ----------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        query = event.value
        now = time.monotonic()
        if now - self._last_key >= SEARCH_DEBOUNCE:  # the first key after a pause: search now
            self._search(query)
        else:  # keys in a quick run: one search when they stop
            self._debounce = self.set_timer(SEARCH_DEBOUNCE, lambda: self._search(query))
        self._last_key = now

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        results = self.results
        if results is not None and results.query == event.value and results.hits:
            self.hits_view.focus()  # the hits for this text are up: go to them
        else:
            self._search(event.value)

    def on_key(self, event: events.Key) -> None:
        if event.key == "down" and self.focused is self.input and self.hits_view.items:
            event.stop()
            self.hits_view.focus()

    def _search(self, query: str) -> None:
        if not query.strip():
            self.workers.cancel_group(self, "search")
            self.searching = ""
            self._show(SearchResults(query, ()))
            return
        self.searching = query
        self._status(f"Searching for “{one_line(query, 60)}”…")
        self._run_search(query)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False, description="Searching")
    def _run_search(self, query: str) -> None:
        try:
            results = self.opmem.data.memory.search(query)
        except OpmemError as exc:
            deliver(self, self._failed, query, str(exc))
            return
        deliver(self, self._show, results)

    # -- results ---------------------------------------------------------------------------
    def _status(self, text: str) -> None:
        self.query_one("#search-status", Static).update(Content(text))

    def _failed(self, query: str, message: str) -> None:
        if query == self.searching:
            self.searching = ""
            self._status(one_line(f"The search failed: {message}", 200))

    def _show(self, results: SearchResults) -> None:
        if results.query != self.input.value:
            return  # typed on since: the next search is on its way
        self.searching = ""
        self.results = results
        view = self.hits_view
        width = view.scrollable_content_region.width or 100
        view.words = query_words(results.query)
        if not results.query.strip():
            self._status(HINT)
            view.set_lines([])
            return
        count = len(results.hits)
        if not count:
            self._status(f"Nothing found for “{one_line(results.query, 60)}”.")
            view.set_lines([Line("No message or memory record has these words.", "empty", -1, 1)])
            return
        self._status(f"{count} hit{'s' if count != 1 else ''} · best first · enter opens the turn")
        view.set_lines(hit_lines(results.hits, width, lambda sid: self.titles.get(sid, "")))

    def on_item_lines_chosen(self, message: ItemLines.Chosen) -> None:
        message.stop()
        if self.results is not None and 0 <= message.item < len(self.results.hits):
            self.dismiss(self.results.hits[message.item])

    def action_cancel(self) -> None:
        self.dismiss(None)
