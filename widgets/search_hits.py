"""The hits of a search everywhere, one item each: where (kind, session, turn, day) and a snippet
with the query's words marked. Snippets and titles are untrusted: drawn as plain text."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

from rich.segment import Segment
from rich.style import Style
from textual.message import Message

from opmem_tui.backend.memory.search import SearchHit

from .item_lines import ItemLines
from .line_view import Line, wrap_text
from .safe_text import one_line

SNIPPET_LINES = 2  # a hit's snippet is cut to this many lines
CURSOR_MARGIN = 5  # the cursor this close to the last hit asks for more
KIND_LABELS = {"turn": "message", "tool": "tool call", "event": "event", "entity": "entity", "edge": "fact"}
_WORD = re.compile(r"[\w./-]{2,}", re.UNICODE)


def query_words(query: str) -> tuple[str, ...]:
    """The words to mark in snippets, longest first (so a longer word wins an overlap)."""
    words = {w.casefold() for w in _WORD.findall(query)}
    return tuple(sorted(words, key=len, reverse=True))


def hit_where(hit: SearchHit, title: str) -> str:
    """`message · Fix the login bug · turn 3 · 2025-12-30`"""
    parts = [KIND_LABELS.get(hit.kind, hit.kind)]
    if hit.session_id:
        parts.append(one_line(title or hit.session_id, 48))
    if hit.turn is not None:
        parts.append(f"turn {hit.turn}")
    if hit.time:
        parts.append(time.strftime("%Y-%m-%d", time.localtime(hit.time)))
    if hit.speaker:
        parts.append(one_line(hit.speaker, 20))
    if hit.via:  # memory records led here too
        parts.append("via memory")
    return " · ".join(parts)


def hit_lines(hits: Sequence[SearchHit], width: int, title: Callable[[str], str], start: int = 0) -> list[Line]:
    """The lines of `hits`, numbered as items from `start` (a later page goes after the first)."""
    lines: list[Line] = []
    for item, hit in enumerate(hits, start):
        lines.append(Line(one_line(hit_where(hit, title(hit.session_id)), max(width - 2, 10)), "where", item, 1))
        snippet = wrap_text(one_line(hit.snippet, 2000) or "(no text)", max(width - 5, 10))
        if len(snippet) > SNIPPET_LINES:
            snippet = [*snippet[: SNIPPET_LINES - 1], snippet[SNIPPET_LINES - 1].rstrip() + " …"]
        lines.extend(Line(part, "snippet", item, 3) for part in snippet)
    return lines


class SearchHitLines(ItemLines):
    """The hit list; words of the query are drawn in the `match` style. Scrolled (or its cursor
    moved) near its last hits, it posts NearEnd once: the screen may have more hits to add. The
    next NearEnd waits for new lines (the page asked for, or a new list), or `page_failed()`."""

    class NearEnd(Message):
        def __init__(self, view: SearchHitLines) -> None:
            super().__init__()
            self.view = view

    LAYOUT_ON_NEW_LINES = False  # new hits need no layout of the whole screen (height 1fr)
    COMPONENT_CLASSES = ItemLines.COMPONENT_CLASSES | {
        "line--where",
        "line--snippet",
        "line--match",
        "line--empty",
    }

    DEFAULT_CSS = """
    SearchHitLines {
        height: 1fr;
        & > .line--where { color: $accent; }
        & > .line--snippet { color: $foreground; }
        & > .line--match { color: $warning; text-style: bold; }
        & > .line--empty { color: $text-muted; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.words: tuple[str, ...] = ()
        self.page_pending = False  # a NearEnd was posted and no lines have come since

    def set_lines(self, lines: list[Line], *, keep_scroll: bool = False) -> None:
        self.page_pending = False
        super().set_lines(lines, keep_scroll=keep_scroll)

    def append_lines(self, lines: list[Line]) -> None:
        self.page_pending = False
        super().append_lines(lines)

    def page_failed(self) -> None:
        """The page asked for will not come: scrolling near the end may ask again."""
        self.page_pending = False

    def check_near_end(self) -> None:
        """Near the end with no page pending: ask for one (NearEnd)."""
        if not self.page_pending and self.near_end():
            self.page_pending = True
            self.post_message(self.NearEnd(self))

    def near_end(self) -> bool:
        """Is the end of the list less than half a screen below the view, or the cursor on one
        of the last few items?"""
        if not self.items:
            return False
        height = self.scrollable_content_region.height
        if height and len(self.lines) - (round(self.scroll_y) + height) <= height // 2:
            return True
        return self.selected_item in self.items[-CURSOR_MARGIN:]

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.check_near_end()

    def move_to(self, item: int, *, announce: bool = True) -> None:
        super().move_to(item, announce=announce)
        self.check_near_end()

    def line_segments(self, line: Line, style: Style, mark: Style) -> list[Segment]:
        if line.style != "snippet" or not self.words:
            return [Segment(line.text, style + mark)]
        match = style + self._style("match") + mark
        lower = line.text.casefold()
        spans: list[tuple[int, int]] = []
        for word in self.words:
            start = lower.find(word)
            while start >= 0:
                end = start + len(word)
                if not any(s < end and start < e for s, e in spans):
                    spans.append((start, end))
                start = lower.find(word, end)
        if len(lower) != len(line.text):  # casefold changed the length (ß...): draw unmarked
            return [Segment(line.text, style + mark)]
        segments: list[Segment] = []
        pos = 0
        for start, end in sorted(spans):
            if start > pos:
                segments.append(Segment(line.text[pos:start], style + mark))
            segments.append(Segment(line.text[start:end], match))
            pos = end
        if pos < len(line.text):
            segments.append(Segment(line.text[pos:], style + mark))
        return segments
