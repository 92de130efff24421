"""Ask for a new session title."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class RenameScreen(ModalScreen[str | None]):
    """Dismisses with the new title, or None when cancelled or left unchanged."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content("Rename session"), classes="dialog-title")
            yield Input(value=self.current, placeholder="new title", id="title")
            yield Static(Content("enter saves · esc cancels"), classes="dialog-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        title = " ".join(event.value.split())
        self.dismiss(title if title and title != self.current else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
