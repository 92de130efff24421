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


@pytest.fixture
def usage_home(tmp_path):
    """Replies with recorded usage in December 2025 (the app's clock: 2026-01-01): two priced models
    in two projects and agents, and one model the price table lacks."""
    from opmem_tui.backend.home import Home
    from tests.backend.usage.helpers import add_reply, claude_usage

    home = Home(tmp_path / "usage-home", durable=False)
    home.ensure()
    for day in range(1, 31, 3):
        add_reply(
            home,
            "cc-web",
            f"2025-12-{day:02d} 10:00",
            "claude-sonnet-4-5",
            claude_usage(2_000, 800 * day, 20_000, 150_000),
        )
    for day in (5, 12, 19, 26):
        add_reply(home, "codex-api", f"2025-12-{day:02d} 15:00", "gpt-5", claude_usage(40_000, 3_000), source="codex")
    add_reply(home, "qwen-try", "2025-12-20 09:00", "synthetic-glued-model", claude_usage(5_000, 500), source="qwen")
    home.sessions.update_session("cc-web", title="web app", project_id="")
    return home


def test_activity_with_costs(snap_compare, usage_home):
    async def run_before(pilot) -> None:
        from opmem_tui.widgets.activity_view import ActivityView

        await settle(pilot)
        await pilot.press("4")
        view = pilot.app.screen.query_one(ActivityView)
        await wait_until(pilot, lambda: view.activity is not None, "activity counted")
        await pilot.press("m", "m")  # turns -> tokens -> cost
        pilot.app.clear_notifications()
        await settle(pilot, 1)

    app = make_app(usage_home)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
