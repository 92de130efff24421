"""Activity tab (`4`): counted when shown, a heatmap over the weeks before the app's day, one
sparkline per project and per agent source, `m` switching the metric; an empty store says how
to fill it."""

from __future__ import annotations

from opmem_tui.backend.home import Home
from opmem_tui.widgets.activity_view import ActivityView

from .conftest import make_app, press, settle, wait_until


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def open_activity(pilot) -> ActivityView:
    await settle(pilot)
    await press(pilot, "4")
    view = pilot.app.screen.query_one(ActivityView)
    await wait_until(pilot, lambda: view.activity is not None, "activity counted")
    await settle(pilot, 1)
    return view


async def test_heatmap_projects_sources_and_metric(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 40)) as pilot:
        view = await open_activity(pilot)
        activity = view.activity
        assert not activity.empty
        total = activity.total.total
        header = text_of(app, "#activity-header")
        assert header.startswith("turns per day") and f"{total.turns} turns" in header
        heat = text_of(app, "#activity-heatmap").splitlines()
        assert len(heat) == 8 and heat[1].startswith("Mon") and heat[7].startswith("Sun")
        assert any(shade in "\n".join(heat) for shade in "░▒▓█")
        rows = text_of(app, "#activity-series")
        assert "By project" in rows and "webapp" in rows and "By agent" in rows and "claude-code" in rows
        await press(pilot, "m")
        assert view.metric == "tokens" and text_of(app, "#activity-header").startswith("tokens per day")
        await press(pilot, "m")
        assert view.metric == "cost" and text_of(app, "#activity-header").startswith("cost per day")
        assert "By model" in text_of(app, "#activity-series")
        await press(pilot, "m")
        assert view.metric == "sessions"


async def test_a_missing_usage_index_is_built_with_progress_in_the_header(sample_home):
    from opmem_tui.widgets.activity_view import ActivityView

    app = make_app(sample_home)
    seen: list[tuple[int, int]] = []
    original = ActivityView.progress

    def spy(self, done: int, total: int) -> None:
        seen.append((done, total))
        original(self, done, total)

    ActivityView.progress = spy  # type: ignore[method-assign]
    try:
        sample_home.usage.path.unlink(missing_ok=True)
        async with app.run_test(size=(140, 40)) as pilot:
            view = await open_activity(pilot)
            assert not view.activity.empty
    finally:
        ActivityView.progress = original  # type: ignore[method-assign]
    assert seen and seen[-1][0] == seen[-1][1] == len(sample_home.sessions.list_sessions().sessions)


async def test_empty_store_says_how_to_fill_it(tmp_path):
    app = make_app(Home(tmp_path / "empty", durable=False))
    async with app.run_test(size=(120, 32)) as pilot:
        view = await open_activity(pilot)
        assert view.activity.empty
        assert "No sessions yet" in text_of(app, "#activity-empty")
