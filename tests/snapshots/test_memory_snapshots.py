"""SVG snapshots of the Memory tab (graph explorer, core.md, timeline), dark and light, over the
sample store distilled with the rules extractor and its core.md written for a pinned day."""

from __future__ import annotations

import pytest

from tests.app.conftest import _utc, make_app, sample_home, sample_path, settle, wait_until  # noqa: F401
from tests.app.memory_sample import distil_sample

from .test_snapshots import SIZE, THEMES


@pytest.fixture
def memory_home(sample_home):  # noqa: F811
    distil_sample(sample_home)
    return sample_home


async def quiet(pilot) -> None:
    """The sample store's broken folder is reported at start: not what these pictures show."""
    pilot.app.clear_notifications()
    await settle(pilot, 1)


def themed(home, theme: str):
    app = make_app(home)
    app.theme = theme
    return app


async def open_memory(pilot, view: str) -> None:
    await settle(pilot)
    await pilot.press("3")
    await settle(pilot)
    await pilot.press(view)
    await settle(pilot)


@pytest.mark.parametrize("theme", THEMES)
def test_memory_graph(snap_compare, memory_home, theme):
    async def run_before(pilot) -> None:
        from opmem_tui.widgets.graph_explorer import GraphExplorer

        await open_memory(pilot, "g")
        graph = pilot.app.screen.query_one(GraphExplorer)
        graph.finder.cursor_blink = False
        graph.finder.focus()
        await pilot.press(*"webapp")
        await wait_until(pilot, lambda: bool(graph._matches) and graph._matches[0].name == "webapp", "webapp found")
        await pilot.press("enter")
        await settle(pilot)
        graph.tree.focus()
        await pilot.press("plus")  # 2 hops: the first row with rows under it expanded, cursor on one
        await settle(pilot)
        await pilot.press("down", "space", "down")
        await quiet(pilot)

    assert snap_compare(themed(memory_home, theme), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
def test_memory_core(snap_compare, memory_home, theme):
    async def run_before(pilot) -> None:
        await open_memory(pilot, "c")
        # The tab opens on a project's core.md, whose last line names the project's id (from a
        # temp path): the picture is the global one, two files back.
        await pilot.press("left_square_bracket", "left_square_bracket")
        await settle(pilot)
        await pilot.press("down", "down")
        await quiet(pilot)

    assert snap_compare(themed(memory_home, theme), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
def test_memory_timeline(snap_compare, memory_home, theme):
    async def run_before(pilot) -> None:
        await open_memory(pilot, "t")
        await quiet(pilot)

    assert snap_compare(themed(memory_home, theme), terminal_size=SIZE, run_before=run_before)


def test_memory_empty(snap_compare, sample_home):  # noqa: F811
    async def run_before(pilot) -> None:
        await open_memory(pilot, "g")
        pilot.app.screen.query_one("#entity-find").cursor_blink = False
        await quiet(pilot)

    assert snap_compare(themed(sample_home, "opmem-dark"), terminal_size=SIZE, run_before=run_before)
