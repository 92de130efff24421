"""The graph explorer's tree in the app: guides and icons, expand and collapse by key and by
mouse, moving along the tree, and recentring from a later hop by key and by click."""

from __future__ import annotations

from opmem_tui.widgets.graph_explorer import GraphExplorer
from opmem_tui.widgets.graph_tree import COLLAPSED, EXPANDED

from .conftest import make_app, press, settle
from .test_memory_tab import detail, find, open_memory


def shown(graph: GraphExplorer) -> list[str]:
    return [line.text for line in graph.tree.lines]


def row_of(graph: GraphExplorer, text: str) -> int:
    """The line number of the first row whose label contains `text`."""
    return next(y for y, item in enumerate(graph.tree.rows()) if text in graph.tree.label(item.index))


async def two_hops_of_webapp(pilot) -> GraphExplorer:
    """webapp at two hops, its folded part-of row expanded, the cursor back on the centre."""
    await open_memory(pilot)
    graph = pilot.app.screen.query_one(GraphExplorer)
    await find(pilot, graph, "webapp", "webapp")
    graph.tree.focus()
    await press(pilot, "plus")
    assert graph.hops == 2
    fold = row_of(graph, "··part-of··")
    assert shown(graph)[fold].startswith(f"└── {COLLAPSED}··part-of··")  # activity: folded, after the facts
    await press(pilot, *["down"] * fold, "space")
    graph.tree.move_to(graph.tree.graph.root.index)
    await settle(pilot)
    return graph


async def test_rows_expand_collapse_and_move_along_the_tree(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        graph = await two_hops_of_webapp(pilot)
        tree = graph.tree
        first = shown(graph)
        assert first[0] == f"{EXPANDED}webapp  project"  # the root: its first hop shown
        assert first[1].startswith("├── ──depends-on──► [bold red]pwned[/] title  tool")  # knowledge first, newest
        assert first[2].startswith("├── ──listens-on──► 8080  port")
        folder = row_of(graph, "src/auth  folder")
        assert first[folder].startswith(f"    ├── {COLLAPSED}◄──part-of── src/auth")
        assert all(not text.startswith("    │") for text in first)  # nothing of hop 2 shown yet
        # space expands the row under the cursor: its hop-2 rows appear under it, with guides
        await press(pilot, *["down"] * folder, "space")
        lines = shown(graph)
        assert lines[folder].startswith(f"    ├── {EXPANDED}◄──part-of── src/auth")
        assert lines[folder + 1].startswith("    │   └── ◄──part-of── src/auth/middleware.py  file  1.00")
        await press(pilot, "down")
        assert tree.cursor_item.entity != graph.center and "middleware.py ──part-of──► src/auth" in detail(app)
        # shift+left: the row above in the tree; shift+down/up: its siblings, over their rows
        await press(pilot, "shift+left")
        assert tree.selected_item == tree.rows()[folder].index
        await press(pilot, "shift+down")
        assert "Fix the login redirect loop" in tree.label(tree.selected_item)
        await press(pilot, "shift+up")
        assert tree.selected_item == tree.rows()[folder].index
        # shift+right from a hop-2 row: the next row after the one above it
        await press(pilot, "down", "shift+right")
        assert "Fix the login redirect loop" in tree.label(tree.selected_item)
        # space collapses again; shift+space on the root collapses all, then expands all
        await press(pilot, "shift+up", "space")
        assert shown(graph) == first
        tree.move_to(tree.graph.root.index)
        await press(pilot, "shift+space")
        assert shown(graph) == [f"{COLLAPSED}webapp  project"]
        await press(pilot, "shift+space")
        every = shown(graph)
        assert len(every) == len(tree.graph.items) > len(first)
        assert not any(COLLAPSED in text for text in every)


async def test_the_mouse_toggles_rows_and_recentres(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        graph = await two_hops_of_webapp(pilot)
        tree = graph.tree
        folder = row_of(graph, "src/auth  folder")
        icon_x = len("    ├── ")
        await pilot.click("#graph-tree", offset=(icon_x, folder))  # on ▶: expands, no recentre
        await settle(pilot)
        assert shown(graph)[folder + 1].startswith("    │   └── ")
        assert graph.center is not None and tree.graph.root.entity == graph.center
        # the cursor under a row that collapses moves up to that row
        tree.move_to(tree.rows()[folder + 1].index)
        await pilot.click("#graph-tree", offset=(icon_x, folder))
        await settle(pilot)
        assert not shown(graph)[folder + 1].startswith("    │")
        assert tree.selected_item == tree.rows()[folder].index
        # a click on a row's text recentres on its neighbour
        port = row_of(graph, "8080  port")
        target = tree.rows()[port].entity
        await pilot.click("#graph-tree", offset=(20, port))
        await settle(pilot)
        assert graph.center == target and tree.graph.root.entity == target
        assert shown(graph)[0].endswith("8080  port")


async def test_enter_on_a_second_hop_row_recentres_on_it(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        graph = await two_hops_of_webapp(pilot)
        tree = graph.tree
        folder = row_of(graph, "src/auth  folder")
        await press(pilot, *["down"] * folder, "space", "down")
        target = tree.cursor_item.entity
        await press(pilot, "enter")
        assert graph.center == target
        assert tree.label(tree.graph.root.index).startswith("src/auth/middleware.py")
        assert tree.selected_item == tree.graph.root.index  # the cursor starts on the new centre
        await press(pilot, "backspace")
        assert tree.label(tree.graph.root.index).startswith("webapp")
