"""A line view whose size does not follow its content (LAYOUT_ON_NEW_LINES False, as the graph
tree and the search hits) takes new lines without a layout of the screen while its scrollbar
stays as it is: the scrollbar's thumb and the scroll position still follow the new lines."""

from __future__ import annotations

from textual.app import App, ComposeResult

from opmem_tui.widgets.line_view import Line, LineView


class FixedLines(LineView):
    LAYOUT_ON_NEW_LINES = False
    DEFAULT_CSS = "FixedLines { height: 1fr; }"


class LinesApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.layouts = 0

    def compose(self) -> ComposeResult:
        yield FixedLines()

    def on_mount(self) -> None:
        self.screen.screen_layout_refresh_signal.subscribe(self, self._laid_out, immediate=True)

    def _laid_out(self, _screen) -> None:
        self.layouts += 1


def lines(count: int) -> list[Line]:
    return [Line(f"line {n}", "plain", n) for n in range(count)]


def shown(view: LineView) -> list[str]:
    return [view.render_line(y).text.strip() for y in range(view.scrollable_content_region.height)]


async def test_new_lines_without_a_layout_while_the_scrollbar_stays():
    app = LinesApp()
    async with app.run_test(size=(40, 10)) as pilot:  # the view is 10 rows high
        view = app.query_one(FixedLines)
        view.set_lines(lines(50))  # a scrollbar appears: that is a layout
        await pilot.pause()
        assert view.show_vertical_scrollbar and view.vertical_scrollbar.window_virtual_size == 50
        view.scroll_to(y=40, animate=False, immediate=True)
        await pilot.pause()

        before = app.layouts
        view.set_lines(lines(30), keep_scroll=True)  # fewer lines, the scrollbar stays
        await pilot.pause()
        assert app.layouts == before  # no layout of the screen
        assert view.virtual_size.height == 30
        assert view.vertical_scrollbar.window_virtual_size == 30  # the thumb follows
        assert view.scroll_y == view.max_scroll_y == 20  # scrolled back inside the new lines
        assert shown(view)[-1] == "line 29"

        view.set_lines(lines(80))  # more lines, the scrollbar stays
        await pilot.pause()
        assert app.layouts == before
        assert view.vertical_scrollbar.window_virtual_size == 80 and view.max_scroll_y == 70
        assert view.scroll_y == 0 and shown(view)[0] == "line 0"

        view.set_lines(lines(3))  # the scrollbar goes: a layout, as before
        await pilot.pause()
        assert not view.show_vertical_scrollbar
        assert shown(view)[:4] == ["line 0", "line 1", "line 2", ""]
