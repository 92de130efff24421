"""A line-API scroll view: holds plain (text, style, item) lines, renders only visible ones.

Subclasses decide what the lines are; this class draws them, caches the drawn strips and maps
clicks back to the item a line belongs to. Text is drawn as plain segments, so nothing in it is
ever read as markup.
"""

from __future__ import annotations

from typing import NamedTuple

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .secret_marks import mark_segments, marker_spans


class Line(NamedTuple):
    text: str  # one visual line: no newline, tabs expanded, control characters already removed
    style: str  # a component-class suffix, e.g. "user" -> "line--user"
    item: int = -1  # the item (message, file...) the line belongs to; -1 for none
    indent: int = 0  # leading cells drawn in the item's gutter style


# Beyond this many characters a non-ASCII line is cut by characters, not cells: two cells per
# character at most, so width // 2 characters always fit and we skip measuring every character.
_MEASURE_LIMIT = 20_000


def wrap_text(text: str, width: int) -> list[str]:
    """Visual lines of `text` at `width` cells: word wrap for ASCII, cell-exact cuts otherwise."""
    width = max(width, 8)
    out: list[str] = []
    for raw in text.split("\n"):
        line = raw.expandtabs(4) if "\t" in raw else raw
        if line.isascii():
            size = len(line)
            if size <= width:
                out.append(line)
                continue
            pos = 0
            while size - pos > width:
                cut = line.rfind(" ", pos + width // 2, pos + width + 1)
                if cut <= pos:
                    out.append(line[pos : pos + width])
                    pos += width
                else:
                    out.append(line[pos:cut])
                    pos = cut + 1
            out.append(line[pos:])
        elif len(line) > _MEASURE_LIMIT:
            step = max(width // 2, 1)
            out.extend(line[i : i + step] for i in range(0, len(line), step))
        elif cell_len(line) <= width:
            out.append(line)
        else:
            out.extend(_wrap_cells(line, width))
    return out


def _wrap_cells(line: str, width: int) -> list[str]:
    """Word wrap by cell width (wide characters count two); a word wider than the line is cut.
    Runs of spaces inside a line are kept (indented code keeps its shape)."""
    out: list[str] = []
    current = ""
    used = 0
    first = True
    for word in line.split(" "):
        size = cell_len(word)
        if first:
            first = False
        elif used + 1 + size <= width:
            current += " " + word
            used += 1 + size
            continue
        else:
            out.append(current)
        if size > width:
            pieces = chop_cells(word, width)
            out.extend(pieces[:-1])
            current = pieces[-1]
            used = cell_len(current)
        else:
            current, used = word, size
    out.append(current)
    return out


class LineView(ScrollView, can_focus=True, inherit_bindings=False):
    """Scrollable plain lines with an optional selected item drawn highlighted."""

    COMPONENT_CLASSES = {"line--selected", "line--secret"}
    LAYOUT_ON_NEW_LINES = True  # scroll positions kept by subclasses may rely on the layout pass

    DEFAULT_CSS = """
    LineView {
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-gutter: stable;
        & > .line--selected { background: $primary 18%; }
        & > .line--secret { color: $warning; text-style: bold; }
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[Line] = []
        self._selected_item = -1
        self._cache: LRUCache[tuple[int, bool], Strip] = LRUCache(1024)
        # Styles read once per render pass (rich_style walks every ancestor's styles: ~0.5 ms)
        self._pass_base: Style | None = None
        self._pass_styles: dict[str, Style] = {}

    # -- content ---------------------------------------------------------------------------
    @property
    def lines(self) -> list[Line]:
        return self._lines

    def set_lines(self, lines: list[Line], *, keep_scroll: bool = False) -> None:
        self._lines = lines
        self._cache.clear()
        width = max((cell_len(line.text) + line.indent for line in lines[:2000]), default=0)
        self._set_virtual_size(Size(width, len(lines)))
        if not keep_scroll:
            self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def append_lines(self, lines: list[Line]) -> None:
        """Add lines at the end: the lines already drawn keep their cached strips and place,
        and only the new rows in view are repainted."""
        start = len(self._lines)
        self._lines = [*self._lines, *lines]
        width = max((cell_len(line.text) + line.indent for line in lines[:2000]), default=0)
        self._set_virtual_size(Size(max(self.virtual_size.width, width), len(self._lines)))
        top = round(self.scroll_y)
        height = self.scrollable_content_region.height or self.size.height
        if start < top + height:
            self.refresh(Region(0, start - top, self.size.width, top + height - start))

    @property
    def selected_item(self) -> int:
        return self._selected_item

    def select_item(self, item: int) -> None:
        if item != self._selected_item:
            self._selected_item = item
            self._cache.clear()
            self.refresh()

    def item_lines(self, item: int) -> tuple[int, int]:
        """First and last line index of an item, (-1, -1) when it has no lines."""
        first = last = -1
        for index, line in enumerate(self._lines):
            if line.item == item:
                if first < 0:
                    first = index
                last = index
            elif first >= 0:
                break
        return first, last

    def scroll_to_item(self, item: int) -> None:
        first, last = self.item_lines(item)
        if first < 0:
            return
        top = round(self.scroll_y)
        height = self.scrollable_content_region.height or self.size.height
        if first < top:
            self.scroll_to(y=first, animate=False, immediate=True)
        elif last >= top + height:
            self.scroll_to(y=max(first, last - height + 1), animate=False, immediate=True)

    def item_at(self, y: int) -> int:
        index = y + round(self.scroll_y)
        return self._lines[index].item if 0 <= index < len(self._lines) else -1

    def _set_virtual_size(self, size: Size) -> None:
        """The scrollable size. Setting `virtual_size` lays out the whole screen (~10 ms). A view
        that opts out (LAYOUT_ON_NEW_LINES False: its size does not follow its content) keeps
        its layout when its vertical scrollbar stays as it is, shown or not: it sets the size
        without the layout and updates the scrollbar's thumb and the scroll position itself.
        A scrollbar that must appear or go changes the layout: that goes the usual way."""
        if size == self.virtual_size:
            return
        if not self._scrollbar_stays(size):
            self.virtual_size = size
            return
        self.set_reactive(LineView.virtual_size, size)
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.window_virtual_size = size.height
        if self.scroll_y > self.max_scroll_y:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)

    def _scrollbar_stays(self, size: Size) -> bool:
        """Does the vertical scrollbar stay as it is (shown or not) at this virtual size?"""
        styles = self.styles
        if self.LAYOUT_ON_NEW_LINES or not self.is_mounted or styles.is_auto_width or styles.is_auto_height:
            return False
        if styles.overflow_x != "hidden" or styles.overflow_y != "auto" or not self.container_size:
            return False  # no horizontal scrollbar to weigh in; laid out at least once
        return (size.height > self.container_size.height) == self.show_vertical_scrollbar

    # -- drawing ---------------------------------------------------------------------------
    def render_lines(self, crop: Region) -> list[Strip]:
        self._pass_base, self._pass_styles = self.rich_style, {}
        try:
            return super().render_lines(crop)
        finally:
            self._pass_base = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def _style(self, name: str) -> Style:
        # Full (not partial) styles: colours with alpha come out blended with the background.
        style = self._pass_styles.get(name) if self._pass_base is not None else None
        if style is None:
            style = self.get_component_rich_style(f"line--{name}", default=Style())
            if self._pass_base is not None:
                self._pass_styles[name] = style
        return style

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self.scrollable_content_region.width
        base = self._pass_base if self._pass_base is not None else self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, base)
        line = self._lines[index]
        selected = line.item >= 0 and line.item == self._selected_item
        key = (index, selected)
        strip = self._cache.get(key)
        if strip is None:
            mark = self._style("selected") if selected else Style()
            segments: list[Segment] = []
            if line.indent:
                segments.append(Segment(" " * line.indent, base + mark))
            drawn = self.line_segments(line, base + self._style(line.style), mark)
            spans = marker_spans(line.text)  # a masked secret (opmem_tui/masking.py): drawn apart
            segments.extend(mark_segments(drawn, spans, self._secret_style()) if spans else drawn)
            strip = Strip(segments)
            self._cache[key] = strip
        # Pad with the line's own style, so a coloured line (a diff +/-) spans the full width.
        fill = base + self._style(line.style) + (self._style("selected") if selected else Style())
        return strip.crop_extend(scroll_x, scroll_x + width, Style(bgcolor=fill.bgcolor))

    def _secret_style(self) -> Style:
        """The marker's colour and weight only: the line's background (a diff's, the cursor's) stays."""
        secret = self._style("secret")
        return Style(color=secret.color, bold=secret.bold, italic=secret.italic, underline=secret.underline)

    def line_segments(self, line: Line, style: Style, mark: Style) -> list[Segment]:
        """The segments of one line's text; subclasses colour parts of it (syntax, matches)."""
        return [Segment(line.text, style + mark)]

    def on_resize(self, event: events.Resize) -> None:
        self._cache.clear()
