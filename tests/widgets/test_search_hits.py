"""The search hit list asks for its next page once: scrolled near its end it posts one NearEnd,
and no other until new lines come (the page it asked for) or the page is reported failed."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.message import Message

from opmem_tui.widgets.line_view import Line
from opmem_tui.widgets.search_hits import SearchHitLines


class Seen(Message):
    """Posted by the test through the view after its keys: its arrival at the app means every
    message the view posted before it has arrived too (one queue, in order)."""


class HitsApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.near_ends = 0
        self.seen = 0

    def compose(self) -> ComposeResult:
        yield SearchHitLines()

    def on_search_hit_lines_near_end(self, message: SearchHitLines.NearEnd) -> None:
        self.near_ends += 1

    def on_seen(self, message: Seen) -> None:
        self.seen += 1


def page(first: int, count: int) -> list[Line]:
    lines: list[Line] = []
    for item in range(first, first + count):
        lines.append(Line(f"message · session {item} · turn 1", "where", item, 1))
        lines.append(Line(f"the snippet of hit {item}", "snippet", item, 3))
    return lines


async def all_delivered(pilot, view: SearchHitLines) -> int:
    """The NearEnd count once everything the view posted so far has reached the app."""
    app: HitsApp = pilot.app
    expected = app.seen + 1
    view.post_message(Seen())
    while app.seen < expected:
        await pilot.pause()
    return app.near_ends


async def test_scrolling_past_the_end_many_times_asks_for_one_page():
    app = HitsApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(SearchHitLines)
        view.set_lines(page(0, 20))
        view.focus()
        assert await all_delivered(pilot, view) == 0  # the top of 20 hits: not near the end

        for _ in range(3):  # to the end, then on past it: keys, scrolls, the cursor
            await pilot.press("end", "down", "down", "pagedown")
            view.scroll_end(animate=False, immediate=True)
            view.scroll_to(y=0, animate=False, immediate=True)
            view.scroll_end(animate=False, immediate=True)
        assert await all_delivered(pilot, view) == 1  # one page asked for, however many scrolls
        assert view.page_pending

        view.append_lines(page(20, 20))  # the page arrives
        assert not view.page_pending
        for _ in range(3):
            await pilot.press("end", "pagedown")
            view.scroll_end(animate=False, immediate=True)
        assert await all_delivered(pilot, view) == 2  # the next page, once

        view.page_failed()  # that page will not come: near the end, it may be asked for again
        view.scroll_end(animate=False, immediate=True)
        await pilot.press("up", "down")
        assert await all_delivered(pilot, view) == 3
