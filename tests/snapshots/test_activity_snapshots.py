"""SVG snapshots of the Activity tab over the sample store, dark and light."""

from __future__ import annotations

import pytest

from tests.app.conftest import _utc, make_app, sample_home, sample_path, settle, wait_until  # noqa: F401

from .test_snapshots import SIZE, THEMES


@pytest.mark.parametrize("theme", THEMES)
def test_activity(snap_compare, sample_home, theme):  # noqa: F811
    async def run_before(pilot) -> None:
        from opmem_tui.widgets.activity_view import ActivityView

        await settle(pilot)
        await pilot.press("4")
        view = pilot.app.screen.query_one(ActivityView)
        await wait_until(pilot, lambda: view.activity is not None, "activity counted")
        pilot.app.clear_notifications()
        await settle(pilot, 1)

    app = make_app(sample_home)
    app.theme = theme
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
