"""SVG snapshots of search everywhere (ctrl+f) over the sample store, dark and light."""

from __future__ import annotations

import pytest

from tests.app.conftest import _utc, make_app, sample_home, sample_path, settle, wait_until  # noqa: F401

from .test_snapshots import SIZE, THEMES


@pytest.mark.parametrize("theme", THEMES)
def test_search_everywhere(snap_compare, sample_home, theme):  # noqa: F811
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot, 1)
        screen = pilot.app.screen
        screen.input.cursor_blink = False
        await pilot.press(*"login")
        await wait_until(pilot, lambda: screen.results is not None and screen.results.query == "login", "hits")
        await pilot.press("down", "down")
        pilot.app.clear_notifications()
        await settle(pilot, 1)

    app = make_app(sample_home)
    app.theme = theme
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
