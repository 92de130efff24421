"""A narrow terminal (60x20): the one-line status lines of the search screen and the timeline end
in an ellipsis where their text does not fit, rather than stopping mid-word."""

from __future__ import annotations

from .conftest import make_app, press, settle, wait_until


def shown_and_whole(widget) -> tuple[str, str]:
    """The status line as drawn, and the whole text it was given."""
    return widget.render_line(0).text.rstrip(), str(widget.render())


async def test_status_lines_too_long_for_a_narrow_terminal_end_in_an_ellipsis(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+f")
        await pilot.press(*"nothing matches this rather long query")
        status = app.screen.query_one("#search-status")
        await wait_until(pilot, lambda: "Nothing found" in str(status.render()), "the answer")
        await settle(pilot)
        shown, whole = shown_and_whole(status)
        assert len(whole) > status.content_region.width  # it cannot fit
        assert shown.endswith("…") and whole.startswith(shown[:-1])
        await press(pilot, "escape", "3", "t")
        timeline = app.screen.query_one("TimelineView")
        await wait_until(pilot, lambda: bool(timeline.events), "the timeline")
        timeline.lines.focus()
        await press(pilot, "down")
        status = timeline.query_one("#timeline-status")
        shown, whole = shown_and_whole(status)
        assert "events loaded · session" in whole and len(whole) > status.content_region.width
        assert shown.endswith("…") and whole.startswith(shown[:-1])
