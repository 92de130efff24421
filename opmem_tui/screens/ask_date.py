"""Ask for a date (the graph's as-of): ISO or relative; empty clears it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class AskDateScreen(ModalScreen[str | None]):
    """Dismisses with the text typed ("" clears the date), or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, title: str, current: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content(self.title_text), classes="dialog-title")
            yield Input(value=self.current, placeholder="2025-06-01, 3 weeks ago, yesterday…", id="date")
            yield Static(Content("enter applies · empty: today · esc cancels"), classes="dialog-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
