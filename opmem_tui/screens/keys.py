"""`?`: every key binding with its id, so users know what to put in config.toml [keys]."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from ..keymap import KeyInfo


class KeysScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_screen", "Close", show=False)]

    def __init__(self, keys: list[KeyInfo], config_path: str) -> None:
        super().__init__()
        self.keys = keys
        self.config_path = config_path

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(Content("Keys"), classes="dialog-title")
            yield DataTable(id="keys-table", cursor_type="row", zebra_stripes=True)
            yield Static(
                Content(f'Remap in {self.config_path} under [keys], e.g. "replay.next_turn" = "right,l" · esc closes'),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Where", "Keys", "Action", "Binding id")
        table.add_rows(
            [
                (
                    Text(info.scope),
                    Text(info.keys.replace(",", ", "), style="bold"),
                    Text(info.description),
                    Text(info.id),
                )
                for info in self.keys
            ]
        )
        table.focus()

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
