"""A one-line bar for the running background job: what it does, how far, how to cancel."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import ProgressBar, Static


class JobBar(Horizontal):
    DEFAULT_CSS = """
    JobBar { height: 1; display: none; background: $panel; padding: 0 1; }
    JobBar.-running { display: block; }
    JobBar > #job-label { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    JobBar > ProgressBar { width: 32; }
    JobBar > #job-hint { width: auto; color: $text-muted; padding-left: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="job-label", markup=False)
        yield ProgressBar(total=None, show_eta=False, id="job-progress")
        yield Static(Content("ctrl+x cancels"), id="job-hint")

    title = ""

    def start(self, title: str) -> None:
        self.title = title
        self.add_class("-running")
        self.query_one("#job-label", Static).update(Content(title))
        self.query_one(ProgressBar).update(total=None, progress=0)

    def progress(self, done: int, total: int | None, label: str = "") -> None:
        """`label`: what is being worked on (a file name, already made one plain line)."""
        count = f" {done}/{total}" if total else ""
        text = f"{self.title}{count}" + (f" · {label}" if label else "")
        self.query_one("#job-label", Static).update(Content(text))
        self.query_one(ProgressBar).update(total=total if total else None, progress=done)

    def finish(self) -> None:
        self.remove_class("-running")
