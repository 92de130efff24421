"""A file's blame in a bound project: each line, its commit and the session turn that wrote it.

The blame runs in a thread worker (git blame, then the sessions of the commits it names); the
line under the cursor shows its turn's prompt, model and time above the list. Enter on a line a
turn wrote dismisses with that turn (a LinkedTurnChosen), which the Projects tab opens.
"""

from __future__ import annotations

import time

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.projects.blame_records import BlameLine, BlameReport
from opmem_tui.widgets.blame_view import BlameView
from opmem_tui.widgets.messages import LinkedTurnChosen
from opmem_tui.widgets.safe_text import one_line

from ..workers import deliver


def _stamp(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else ""


def line_detail(line: BlameLine | None) -> str:
    """The cursor line's origin in words: the turn and its prompt, or who committed it."""
    if line is None:
        return "The file is empty."
    if line.commit is None:
        return f"Line {line.line}: not committed yet."
    o = line.origin
    if o is None:
        return (
            f"Line {line.line}: {line.commit[:8]} by {one_line(line.author, 60)}, {_stamp(line.commit_time)}"
            " — not from a session turn."
        )
    facts = [f"turn {o.turn} of {o.session_id}"]
    if o.model:
        facts.append(one_line(o.model, 40))
    if o.time:
        facts.append(_stamp(o.time))
    if o.confidence != "high":
        facts.append(f"{o.confidence} confidence ({o.reason})")
    prompt = f"\n“{one_line(o.prompt, 200)}”" if o.prompt else "\n(the session is not in the store)"
    return f"Line {line.line}: {line.commit[:8]} · {' · '.join(facts)} · enter opens the turn{prompt}"


class BlameScreen(ModalScreen[LinkedTurnChosen | None]):
    BINDINGS = [Binding("escape,q", "cancel", "Close", show=False)]

    DEFAULT_CSS = """
    BlameScreen #blame-detail { height: auto; min-height: 3; padding: 0 0 1 0; }
    """

    def __init__(self, project_id: str, path: str, line: int | None = None) -> None:
        super().__init__()
        self.project_id = project_id
        self.path = path
        self.line = line
        self.report: BlameReport | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall", id="blame-dialog"):
            yield Static(Content(f"Blame of {one_line(self.path, 100)}"), classes="dialog-title")
            yield Static(Content("Running git blame…"), id="blame-detail", markup=False)
            yield BlameView(id="blame-view")
            yield Static(
                Content("↑↓ move · n/N next/previous change · enter opens the turn · esc closes"),
                classes="dialog-hint",
            )

    @property
    def view(self) -> BlameView:
        return self.query_one(BlameView)

    def on_mount(self) -> None:
        self.view.focus()
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, description="Running git blame")
    def _load(self) -> None:
        try:
            report = self.app.data.blame(self.project_id, self.path)  # type: ignore[attr-defined]
        except OpmemError as exc:
            deliver(self, self._failed, str(exc))
            return
        deliver(self, self._show, report)

    def _show(self, report: BlameReport) -> None:
        self.report = report
        self.view.show_report(report, self.line)
        if report.problems:
            self.notify("; ".join(report.problems[:3]), severity="warning", markup=False)

    def _failed(self, message: str) -> None:
        self.query_one("#blame-detail", Static).update(Content(one_line(message, 400)))

    def on_blame_view_highlighted(self, message: BlameView.Highlighted) -> None:
        self.query_one("#blame-detail", Static).update(Content(line_detail(message.line)))

    def on_linked_turn_chosen(self, message: LinkedTurnChosen) -> None:
        message.stop()
        self.dismiss(message)

    def action_cancel(self) -> None:
        self.dismiss(None)
