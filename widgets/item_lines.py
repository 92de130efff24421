"""A LineView with a cursor over its items: up/down move it, enter chooses.

For lists drawn as plain lines (core.md, the timeline, search hits): only the visible lines
are drawn, whatever the length, and nothing in the text is read as markup.
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message

from .line_view import Line, LineView


class ItemLines(LineView):
    """Lines grouped into items (line.item >= 0 is selectable); the cursor is an item."""

    BINDINGS = [
        Binding("down,j", "cursor(1)", "Down", show=False, id="list.down"),
        Binding("up,k", "cursor(-1)", "Up", show=False, id="list.up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="list.page_down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="list.page_up"),
        Binding("home", "edge(0)", "First", show=False, id="list.first"),
        Binding("end", "edge(1)", "Last", show=False, id="list.last"),
        Binding("enter", "choose", "Open", id="list.choose"),
    ]

    class Highlighted(Message):
        def __init__(self, view: ItemLines, item: int) -> None:
            super().__init__()
            self.view = view
            self.item = item

    class Chosen(Message):
        def __init__(self, view: ItemLines, item: int) -> None:
            super().__init__()
            self.view = view
            self.item = item

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._items: list[int] = []  # the items in line order

    def set_lines(self, lines: list[Line], *, keep_scroll: bool = False) -> None:
        self._items = list(dict.fromkeys(line.item for line in lines if line.item >= 0))
        super().set_lines(lines, keep_scroll=keep_scroll)
        if self.selected_item not in self._items:
            self.move_to(self._items[0] if self._items else -1)

    def append_lines(self, lines: list[Line]) -> None:
        known = set(self._items)
        self._items.extend(dict.fromkeys(line.item for line in lines if line.item >= 0 and line.item not in known))
        super().append_lines(lines)

    @property
    def items(self) -> list[int]:
        return self._items

    def move_to(self, item: int, *, announce: bool = True) -> None:
        self.select_item(item)
        if item >= 0:
            self.scroll_to_item(item)
        if announce:
            self.post_message(ItemLines.Highlighted(self, item))

    def _position(self) -> int:
        try:
            return self._items.index(self.selected_item)
        except ValueError:
            return -1

    def action_cursor(self, delta: int) -> None:
        if not self._items:
            return
        position = max(0, min(len(self._items) - 1, self._position() + delta))
        self.move_to(self._items[position])

    def action_page(self, delta: int) -> None:
        height = max(self.scrollable_content_region.height - 1, 1)
        first, _ = self.item_lines(self.selected_item)
        target = max(0, min(len(self.lines) - 1, first + delta * height))
        items = [line.item for line in (self.lines[target:] if delta > 0 else reversed(self.lines[: target + 1]))]
        item = next((i for i in items if i >= 0), None)
        if item is not None:
            self.move_to(item)

    def action_edge(self, last: int) -> None:
        if self._items:
            self.move_to(self._items[-1] if last else self._items[0])

    def action_choose(self) -> None:
        if self.selected_item >= 0:
            self.post_message(ItemLines.Chosen(self, self.selected_item))

    def on_click(self, event: events.Click) -> None:
        item = self.item_at(event.y)
        if item >= 0:
            self.move_to(item)
            if event.chain == 2:
                self.post_message(ItemLines.Chosen(self, item))
