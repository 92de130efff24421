"""A file's blame: one row per line, its commit and the session turn that wrote it (or the
author, for a line not from a session turn), then the code. Enter on a line a turn wrote asks to
open that turn's replay (LinkedTurnChosen)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.message import Message

from opmem_tui.backend.projects.blame_records import BlameLine, BlameReport

from .line_view import Line, LineView
from .messages import LinkedTurnChosen
from .safe_text import clean, one_line

WHO_WIDTH = 26


def who(line: BlameLine) -> str:
    """The gutter's middle column: the turn (`t3 session-id`), else the author's name."""
    if line.commit is None:
        return "not committed yet"
    o = line.origin
    if o is None:
        name = line.author.split(" <", 1)[0]
        return one_line(name, WHO_WIDTH)
    mark = "" if o.confidence == "high" else "?"
    return one_line(f"t{o.turn}{mark} {o.session_id}", WHO_WIDTH)


def blame_lines(report: BlameReport) -> list[Line]:
    width = len(str(report.lines[-1].line)) if report.lines else 1
    out: list[Line] = []
    for index, item in enumerate(report.lines):
        short = item.commit[:8] if item.commit else "--------"
        style = "uncommitted" if item.commit is None else "agent" if item.origin is not None else "user"
        code = clean(item.text).expandtabs(4)
        out.append(Line(f"{item.line:>{width}} {short} {who(item):<{WHO_WIDTH}} │ {code}", style, index))
    return out


class BlameView(LineView):
    """Rows of a BlameReport; the cursor is the selected item."""

    BINDINGS = [
        Binding("enter", "open_turn", "Open turn", id="blame.open_turn"),
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("home,g", "jump(0)", "First line", show=False),
        Binding("end,G", "jump(-1)", "Last line", show=False),
        Binding("n", "next_origin(1)", "Next change", id="blame.next"),
        Binding("N", "next_origin(-1)", "Previous change", show=False, id="blame.prev"),
    ]

    COMPONENT_CLASSES = LineView.COMPONENT_CLASSES | {"line--agent", "line--user", "line--uncommitted"}

    DEFAULT_CSS = """
    BlameView {
        height: 1fr;
        & > .line--agent { color: $foreground; }
        & > .line--user { color: $text-muted; }
        & > .line--uncommitted { color: $warning; }
        & > .line--selected { background: $primary 30%; }
    }
    """

    @dataclass
    class Highlighted(Message):
        """The cursor is on this line of the report (None: the report is empty)."""

        line: BlameLine | None

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.report: BlameReport | None = None

    def show_report(self, report: BlameReport, line: int | None = None) -> None:
        self.report = report
        self.set_lines(blame_lines(report))
        index = 0
        if line is not None:
            index = next((i for i, item in enumerate(report.lines) if item.line >= line), 0)
        self._select(index)

    @property
    def current(self) -> BlameLine | None:
        report = self.report
        if report is None or not (0 <= self.selected_item < len(report.lines)):
            return None
        return report.lines[self.selected_item]

    def _select(self, index: int) -> None:
        count = len(self.report.lines) if self.report is not None else 0
        if not count:
            self.post_message(BlameView.Highlighted(None))
            return
        index = max(0, min(count - 1, index))
        self.select_item(index)
        self.scroll_to_item(index)
        self.post_message(BlameView.Highlighted(self.report.lines[index]))

    def action_move(self, step: int) -> None:
        self._select(self.selected_item + step)

    def action_page(self, step: int) -> None:
        height = self.scrollable_content_region.height or 10
        self._select(self.selected_item + step * max(1, height - 1))

    def action_jump(self, index: int) -> None:
        count = len(self.report.lines) if self.report is not None else 0
        self._select(index if index >= 0 else count - 1)

    def action_next_origin(self, step: int) -> None:
        """To the next line whose commit differs from the cursor's (a change of who wrote it)."""
        report, current = self.report, self.current
        if report is None or current is None:
            return
        index = self.selected_item
        while 0 <= index + step < len(report.lines):
            index += step
            if report.lines[index].commit != current.commit:
                self._select(index)
                return

    def on_click(self, event) -> None:
        item = self.item_at(event.y)
        if item >= 0:
            self._select(item)

    def action_open_turn(self) -> None:
        line = self.current
        if line is None:
            return
        o = line.origin
        if o is None:
            why = (
                "is not committed yet"
                if line.commit is None
                else f"comes from {one_line(line.author, 60)}'s own commit"
            )
            self.notify(f"Line {line.line} {why}: no session turn wrote it.", markup=False)
            return
        self.post_message(LinkedTurnChosen(o.session_id, o.turn, line.commit, o.head_id))
