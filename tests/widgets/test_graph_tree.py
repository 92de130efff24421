"""The graph tree's rows: guides as textual's Tree draws them, icons, and what collapsing hides."""

from __future__ import annotations

from opmem_tui.widgets.graph_tree import COLLAPSED, EXPANDED, GraphItem, GraphTree, visible_rows


def tree_of(shape: dict) -> GraphTree:
    """{name: {child: {...}}} -> a GraphTree whose items are named by entity."""
    items: list[GraphItem] = []

    def add(name: str, below: dict, parent: int) -> GraphItem:
        item = GraphItem(name, index=len(items), parent=parent)
        items.append(item)
        item.children = [add(child, grand, item.index) for child, grand in below.items()]
        return item

    ((name, below),) = shape.items()
    root = add(name, below, -1)
    return GraphTree(root, items)


def drawn(tree: GraphTree, expanded: set[str]) -> list[str]:
    ids = {item.index for item in tree.items if item.entity in expanded}
    return [row.guides + row.icon + tree.items[row.item].entity for row in visible_rows(tree, ids)]


SHAPE = {"root": {"a": {"a1": {}, "a2": {"a2x": {}}}, "b": {"b1": {}}, "c": {}}}


def test_guides_at_three_levels_as_the_tree_draws_them():
    tree = tree_of(SHAPE)
    assert drawn(tree, {"root", "a", "a2", "b"}) == [
        "▼ root",
        "├── ▼ a",
        "│   ├── a1",
        "│   └── ▼ a2",
        "│       └── a2x",
        "├── ▼ b",
        "│   └── b1",
        "└── c",
    ]


def test_a_collapsed_row_hides_what_is_under_it_and_says_so():
    tree = tree_of(SHAPE)
    assert drawn(tree, {"root", "a"}) == [
        "▼ root",
        "├── ▼ a",
        "│   ├── a1",
        f"│   └── {COLLAPSED}a2",
        f"├── {COLLAPSED}b",
        "└── c",
    ]
    assert drawn(tree, set()) == [f"{COLLAPSED}root"]
    assert drawn(tree_of({"alone": {}}), {"alone"}) == ["alone"]  # nothing under it: no icon
    assert EXPANDED not in "".join(drawn(tree, {"a"}))  # a is expanded but not shown
