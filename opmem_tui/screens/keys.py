"""`?`: every key binding with its id, so users know what to put in config.toml [keys]."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from opmem_tui.widgets.turn_lines import abbreviate_path

from ..keymap import KeyInfo


class KeysScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_screen", "Close", show=False)]

    def __init__(self, keys: list[KeyInfo], config_path: str) -> None:
        super().__init__()
        self.keys = keys
        self.config_path = config_path

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall"):
            yield Static(Content("Keys"), classes="dialog-title")
            yield DataTable(id="keys-table", cursor_type="row", zebra_stripes=True)
            yield Static(
                Content(
                    f"Remap in {abbreviate_path(self.config_path, 40)} under [keys], "
                    'e.g. "replay.next_turn" = "right,l" · esc closes'
                ),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Where", "Keys", "Action", "Binding id")
        table.add_rows(
            [
                (
                    Text(info.scope),
                    Text(self.key_names(info.keys), style="bold"),
                    Text(info.description),
                    Text(info.id),
                )
                for info in self.keys
            ]
        )
        table.focus()

    def key_names(self, keys: str) -> str:
        """ "question_mark,slash" -> "? /": keys as the footer shows them, with the name too
        where the symbol alone is not what to type in config.toml."""
        shown = []
        for key in (k.strip() for k in keys.split(",") if k.strip()):
            display = self.app.get_key_display(Binding(key, ""))
            shown.append(display if display == key or len(key) == 1 else f"{display} ({key})")
        return ", ".join(shown)

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
