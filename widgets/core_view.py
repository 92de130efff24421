"""The core.md preview: the block agents get back, drawn with its sections set apart, its byte
budget in the header, and `enter` on a line to open the session turn its pointer names."""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from opmem_tui.backend.memory.core_files import POINTER, CoreFile, CoreText

from .item_lines import ItemLines
from .line_view import Line, wrap_text
from .safe_text import clean, one_line


def budget_label(size: int, budget: int) -> str:
    """`1,812 / 2,048 B`"""
    return f"{size:,} / {budget:,} B"


def core_lines(text: str, width: int) -> tuple[list[Line], list[str]]:
    """Lines to draw and, per item, the raw line it shows (what `enter` resolves)."""
    lines: list[Line] = []
    raw: list[str] = []
    for source in clean(text).split("\n"):
        stripped = source.strip()
        if not stripped:
            continue
        if stripped and set(stripped) <= {"═", "─", "="}:
            lines.append(Line("─" * min(width, 60), "rule", -1))
            continue
        if POINTER in source:
            item = len(raw)
            raw.append(source)
            body, _, session = source.rpartition(POINTER)
            pointer = f"↪ session:{session.strip()}"
            one = f"{body.strip()}  {pointer}"
            if cell_len(one) <= width - 1:
                lines.append(Line(one, "entry", item, 1))
                continue
            wrapped = wrap_text(body.strip(), max(width - 4, 10))
            for index, part in enumerate(wrapped):
                lines.append(Line(part, "entry", item, 1 if index == 0 else 3))
            lines.append(Line(pointer, "pointer", item, 5))
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            if lines and lines[-1].style != "rule":
                lines.append(Line("", "blank", -1))
            lines.append(Line(stripped, "section", -1))
            continue
        style = "title" if stripped.startswith("opmem memory") else "note"
        for part in wrap_text(stripped, max(width - 1, 10)):
            lines.append(Line(part, style, -1))
    return lines, raw


class CoreLines(ItemLines):
    COMPONENT_CLASSES = ItemLines.COMPONENT_CLASSES | {
        "line--rule",
        "line--title",
        "line--section",
        "line--entry",
        "line--pointer",
        "line--note",
        "line--empty",
    }

    DEFAULT_CSS = """
    CoreLines {
        height: 1fr;
        & > .line--rule { color: $panel-lighten-2; }
        & > .line--title { color: $primary; text-style: bold; }
        & > .line--section { color: $accent; text-style: bold; }
        & > .line--entry { color: $foreground; }
        & > .line--pointer { color: $text-muted; }
        & > .line--note { color: $text-muted; }
        & > .line--empty { color: $text-muted; }
    }
    """

    def line_segments(self, line: Line, style: Style, mark: Style) -> list[Segment]:
        body, sep, pointer = line.text.rpartition("  ↪ ")
        if line.style != "entry" or not sep:
            return [Segment(line.text, style + mark)]
        return [Segment(body, style + mark), Segment(sep + pointer, self._style("pointer") + mark)]


class CoreView(Vertical):
    """Header (file, size against the budget, when it changed) above the rendered block."""

    BINDINGS = [
        Binding("right_square_bracket", "cycle(1)", "Next core.md", id="core.next_file"),
        Binding("left_square_bracket", "cycle(-1)", "Prev core.md", show=False, id="core.prev_file"),
    ]

    DEFAULT_CSS = """
    CoreView { height: 1fr; }
    CoreView > #core-header { height: 1; background: $boost; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    CoreView > #core-header.-over { color: $error; }
    """

    class FileWanted(Message):
        def __init__(self, file: CoreFile) -> None:
            super().__init__()
            self.file = file

    class LineChosen(Message):
        def __init__(self, line: str) -> None:
            super().__init__()
            self.line = line

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.files: list[CoreFile] = []
        self.current: CoreFile | None = None
        self.core: CoreText | None = None
        self._raw: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="core-header", markup=False)
        yield CoreLines(id="core-lines")

    @property
    def lines(self) -> CoreLines:
        return self.query_one(CoreLines)

    def set_files(self, files: Sequence[CoreFile]) -> None:
        self.files = list(files)
        if self.current not in self.files:
            self.current = self.files[0] if self.files else None

    def show_core(self, core: CoreText, *, updated: float | None = None) -> None:
        """Draw a core.md; the scroll and the cursor stay where they were when it is the same file."""
        same = self.core is not None and self.core.file == core.file
        self.core = core
        self.current = core.file
        header = self.query_one("#core-header", Static)
        where = one_line(self._label(core.file), 60)
        if not core.exists:
            header.update(Content(f"{where} · not written yet"))
            self.show_message(
                "No core.md yet: it is written when the memory is distilled. "
                "Run `opmem distill` or ctrl+p → Distil now."
            )
            return
        parts = [where, budget_label(core.size, core.budget)]
        if updated:
            parts.append(f"updated {time.strftime('%H:%M:%S', time.localtime(updated))}")
        if len(self.files) > 1:
            parts.append(f"[ ] {len(self.files) - 1} other core.md files")
        header.update(Content(" · ".join(parts)))
        header.set_class(core.size > core.budget, "-over")
        view = self.lines
        width = view.scrollable_content_region.width or 80
        keep = view.selected_item if same else -1
        lines, self._raw = core_lines(core.text, width)
        view.set_lines(lines, keep_scroll=same)
        if 0 <= keep < len(self._raw):
            view.move_to(keep, announce=False)

    def on_resize(self) -> None:
        if self.core is not None and self.core.exists:
            self.show_core(self.core)

    def _label(self, file: CoreFile) -> str:
        return "memory/core.md (global)" if not file.project_id else f"{file.label} · core.md"

    def show_message(self, message: str) -> None:
        self._raw = []
        width = self.lines.scrollable_content_region.width or 80
        self.lines.set_lines([Line(text, "empty", -1, 1) for text in wrap_text(message, max(width - 2, 10))])

    def show_empty(self, message: str) -> None:
        self.core = None
        self.query_one("#core-header", Static).update(Content(""))
        self.show_message(message)

    def on_item_lines_chosen(self, message: ItemLines.Chosen) -> None:
        message.stop()
        if 0 <= message.item < len(self._raw):
            self.post_message(CoreView.LineChosen(self._raw[message.item]))

    def on_item_lines_highlighted(self, message: ItemLines.Highlighted) -> None:
        message.stop()

    def action_cycle(self, delta: int) -> None:
        if len(self.files) < 2:
            return
        index = self.files.index(self.current) if self.current in self.files else 0
        self.post_message(CoreView.FileWanted(self.files[(index + delta) % len(self.files)]))
