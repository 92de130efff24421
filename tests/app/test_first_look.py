"""A newcomer's first minutes on `opmem demo`: the app opens on the memory (a project's brief),
and keys do what the footer says in every pane; a text box takes the focus only through `/` and
gives it back after enter or escape."""

from __future__ import annotations

from textual.widgets import Input, TabbedContent

from opmem_tui.backend.demo import build_demo
from opmem_tui.widgets.core_view import CoreView
from opmem_tui.widgets.graph_explorer import GraphExplorer
from opmem_tui.widgets.timeline_view import TimelineView

from .conftest import DEMO_NOW, make_app, press, settle, wait_until


def _lines(view) -> str:
    return "\n".join(line.text for line in view.lines)


def _view(app) -> str:
    return app.screen.query_one("#memory-views", TabbedContent).active


async def test_demo_opens_on_a_project_brief_and_view_keys_switch(tmp_path):
    home = build_demo(tmp_path / "demo", now=DEMO_NOW)
    app = make_app(home, start_tab="memory")
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        core = app.screen.query_one(CoreView)
        await wait_until(pilot, lambda: "[Project · " in _lines(core.lines), "a project's brief shown")
        assert app.screen.query_one("#tabs", TabbedContent).active == "memory"
        assert "stack:" in _lines(core.lines)
        assert not isinstance(app.focused, Input)
        for key, view in (("t", "memory-timeline"), ("g", "memory-graph"), ("c", "memory-core")):
            await press(pilot, key)
            assert _view(app) == view, key
            assert not isinstance(app.focused, Input), key


async def test_the_finder_takes_the_focus_only_through_slash_and_gives_it_back(tmp_path):
    home = build_demo(tmp_path / "demo", now=DEMO_NOW)
    app = make_app(home, start_tab="memory")
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "g")
        graph = app.screen.query_one(GraphExplorer)
        await wait_until(pilot, lambda: graph.tree.display, "the graph opens on an entity")
        assert app.focused is graph.tree
        await press(pilot, "slash")
        assert app.focused is graph.finder
        for key in "forecast":
            await pilot.press(key)
        await wait_until(pilot, lambda: bool(graph._matches) and graph.matches_query == "forecast", "matches")
        await press(pilot, "enter")
        await wait_until(pilot, lambda: app.focused is graph.tree, "the focus back on the graph")
        hops = graph.hops
        await press(pilot, "plus")  # the footer's "More hops", not a `+` typed into the box
        assert graph.hops == hops + 1 and "+" not in graph.finder.value
        await press(pilot, "slash", "x", "escape")
        assert app.focused is graph.tree
        await press(pilot, "t")
        timeline = app.screen.query_one(TimelineView)
        assert _view(app) == "memory-timeline"
        await press(pilot, "slash")
        assert isinstance(app.focused, Input)
        await press(pilot, "escape")
        assert app.focused is timeline.lines
        await press(pilot, "c")
        assert _view(app) == "memory-core"
