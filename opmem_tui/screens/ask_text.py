"""Ask for one line of text (a path to write an export to, a file to blame, a new title)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class AskTextScreen(ModalScreen[str | None]):
    """Dismisses with `answer(text typed)`: here the text stripped, or None when cancelled or
    left empty."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(
        self,
        title: str,
        value: str = "",
        *,
        hint: str = "enter: ok · esc cancels",
        placeholder: str = "",
        wide: bool = True,
        input_id: str = "ask-text",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.hint = hint
        self.placeholder = placeholder
        self.dialog_classes = "dialog wide" if wide else "dialog"
        self.input_id = input_id

    def compose(self) -> ComposeResult:
        with Vertical(classes=self.dialog_classes):
            yield Static(Content(self.title_text), classes="dialog-title")
            yield Input(value=self.value, placeholder=self.placeholder, id=self.input_id)
            yield Static(Content(self.hint), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def answer(self, text: str) -> str | None:
        return text.strip() or None

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(self.answer(event.value))

    def action_cancel(self) -> None:
        self.dismiss(None)
