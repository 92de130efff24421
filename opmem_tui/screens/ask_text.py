"""Ask for one line of text (a path to write an export to, a file to blame)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class AskTextScreen(ModalScreen[str | None]):
    """Dismisses with the text typed (stripped), or None when cancelled or left empty."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(
        self, title: str, value: str = "", *, hint: str = "enter: ok · esc cancels", placeholder: str = ""
    ) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.hint = hint
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(Content(self.title_text), classes="dialog-title")
            yield Input(value=self.value, placeholder=self.placeholder, id="ask-text")
            yield Static(Content(self.hint), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
