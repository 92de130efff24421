"""Search everywhere (`ctrl+f`): every message of every session and the memory, as you type.

A key typed after a pause starts a search at once, a quick run of keys one search when it stops
(SEARCH_DEBOUNCE, counted from the key itself: widgets/typing_pause.py). Searches
run one at a time in the screen's own thread (newest_request.py): a query replaced while
another search ran is never searched, and an answer to a query typed over is never shown. The
first page is FIRST_PAGE hits (each hit's snippet is a node file read); scrolled near the end,
the list grows by MORE_PAGE, only the new rows drawn. `enter` dismisses with the hit, which
the main screen opens in the replay at its turn with its message selected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static
from textual.worker import Worker

from opmem_tui.backend.memory.search import MAX_K, SearchHit
from opmem_tui.backend.model import OpmemError
from opmem_tui.widgets.item_lines import ItemLines
from opmem_tui.widgets.line_view import Line
from opmem_tui.widgets.safe_text import one_line
from opmem_tui.widgets.search_hits import SearchHitLines, hit_lines, query_words
from opmem_tui.widgets.typing_pause import TimedInput, TypingPause

from ..memory_data import SearchResults
from ..newest_request import NewestRequest, SearchRequest
from ..workers import SEARCH_GROUP, ReportsWorkerErrors, cancelled, deliver

if TYPE_CHECKING:
    from ..app import OpmemApp

SEARCH_DEBOUNCE = 0.05  # seconds of typing pause before a search runs (stale answers are dropped)
FIRST_PAGE = 20  # hits asked for first: more than a screen of them (two or three lines each)
MORE_PAGE = 40  # hits added each time the list nears its end, up to the backend's MAX_K
HINT = "type to search every message of every session and the memory · ↓ the hits · enter opens · esc closes"


class SearchScreen(ReportsWorkerErrors, ModalScreen[SearchHit | None]):
    """Dismisses with the chosen hit, or None."""

    BINDINGS = [Binding("escape", "cancel", "Close", show=False, id="search.close")]

    DEFAULT_CSS = """
    SearchScreen #search-input { background: $boost; }
    SearchScreen #search-status { height: 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    SearchScreen #search-hits { height: 1fr; }
    """

    def __init__(self, titles: Mapping[str, str], query: str = "") -> None:
        super().__init__()
        self.titles = titles
        self.initial = query
        self.results: SearchResults | None = None  # the hits on screen
        self.complete = True  # the results hold every hit there is (or MAX_K)
        self.requests = NewestRequest()
        self._loop: Worker[None] | None = None
        self.typing = TypingPause(self, SEARCH_DEBOUNCE, self._search)

    @property
    def opmem(self) -> OpmemApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall"):
            yield Static(Content("Search everywhere"), classes="dialog-title")
            yield TimedInput(value=self.initial, placeholder="words, a path, a name…", id="search-input")
            yield Static(Content(HINT), id="search-status")
            yield SearchHitLines(id="search-hits")

    @property
    def asking(self) -> int:
        """Hits asked for by the search under way (0: none): derived from the request slot, the
        one record of what was asked and not yet answered."""
        awaited = self.requests.awaited
        return awaited.limit if awaited is not None else 0

    @property
    def input(self) -> TimedInput:
        return self.query_one("#search-input", TimedInput)

    @property
    def hits_view(self) -> SearchHitLines:
        return self.query_one(SearchHitLines)

    def on_mount(self) -> None:
        self.input.focus()
        if self.initial.strip():
            self._search(self.initial)

    def on_unmount(self) -> None:
        self.requests.close()

    # -- typing ----------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        self.typing.typed(event.value, self.input.typed_at(event))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.typing.cancel()
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
            self.requests.forget()
            self._show(SearchResults(query, ()), 0)
            return
        self._status(f"Searching for “{one_line(query, 60)}”…")
        self._ask(SearchRequest(query, FIRST_PAGE))

    def _ask(self, request: SearchRequest) -> None:
        self.requests.put(request)
        if self._loop is None or self._loop.is_finished:  # first search, or the thread failed
            self._loop = self._search_loop()

    def _more(self) -> None:
        """Ask for the next page of the hits on screen, unless all are in or one is on its way."""
        results = self.results
        if results is None or self.complete or self.asking or results.query != self.input.value:
            return
        self._ask(SearchRequest(results.query, min(len(results.hits) + MORE_PAGE, MAX_K)))

    def on_search_hit_lines_near_end(self, message: SearchHitLines.NearEnd) -> None:
        message.stop()
        self._more()

    @work(thread=True, exclusive=True, group=SEARCH_GROUP, exit_on_error=False, description="Searching")
    def _search_loop(self) -> None:
        """The screen's one search thread (its index connection stays open and warm)."""
        memory = self.opmem.data.memory
        while not (cancelled() or self.requests.closed):
            request = self.requests.take(timeout=1.0)  # the timeout only re-checks cancellation
            if request is None:
                continue
            try:
                results = memory.search(request.query, request.limit)
            except OpmemError as exc:
                deliver(self, self._failed, request, str(exc))
                continue
            if self.requests.is_newest(request):  # else typed over: the newer one is next
                deliver(self, self._show, results, request.limit)

    # -- results ---------------------------------------------------------------------------
    def _status(self, text: str) -> None:
        self.query_one("#search-status", Static).update(Content(text), layout=False)

    def _failed(self, request: SearchRequest, message: str) -> None:
        if self.requests.answered(request):  # else typed over: the newer search is under way
            self.hits_view.page_failed()
            self._status(one_line(f"The search failed: {message}", 200))

    def _show(self, results: SearchResults, limit: int) -> None:
        self.requests.answered(SearchRequest(results.query, limit))
        if results.query != self.input.value:
            return  # typed on since: the next search is on its way
        shown = self.results
        self.complete = results.found < limit or limit >= MAX_K
        same = shown is not None and shown.query == results.query and bool(shown.hits)
        if same and results.hits[: len(shown.hits)] == shown.hits[: len(results.hits)]:
            self._add(results, len(shown.hits))  # another page of the hits on screen
            return
        self.results = results
        view = self.hits_view
        view.words = query_words(results.query)
        if not results.query.strip():
            self._status(HINT)
            view.set_lines([])
            return
        if not results.hits:
            self._status(f"Nothing found for “{one_line(results.query, 60)}”.")
            view.set_lines([Line("No message or memory record has these words.", "empty", -1, 1)])
            return
        self._count()
        view.set_lines(self._lines(results.hits, 0), keep_scroll=shown is not None and shown.query == results.query)
        self.call_after_refresh(self.hits_view.check_near_end)  # a page short of the view: the next now

    def _add(self, results: SearchResults, before: int) -> None:
        """Hits after the `before` on screen: appended, the rows above left as they are."""
        if len(results.hits) > before:
            self.results = results
            self.hits_view.append_lines(self._lines(results.hits[before:], before))
        self._count()
        self.call_after_refresh(self.hits_view.check_near_end)  # a page short of the view: the next now

    def _lines(self, hits: tuple[SearchHit, ...], start: int) -> list[Line]:
        width = self.hits_view.scrollable_content_region.width or 100
        return hit_lines(hits, width, lambda sid: self.titles.get(sid, ""), start)

    def _count(self) -> None:
        count = len(self.results.hits) if self.results is not None else 0
        if self.complete:
            self._status(f"{count} hit{'s' if count != 1 else ''} · best first · enter opens the turn")
        else:
            self._status(f"the best {count} hits · more as you scroll · enter opens the turn")

    def on_item_lines_chosen(self, message: ItemLines.Chosen) -> None:
        message.stop()
        if self.results is not None and 0 <= message.item < len(self.results.hits):
            self.dismiss(self.results.hits[message.item])

    def action_cancel(self) -> None:
        self.dismiss(None)
