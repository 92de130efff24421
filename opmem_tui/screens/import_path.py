"""Ask where to import sessions from: a file or folder path, and which agent wrote them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class ImportRequest:
    source: str
    label: str
    path: Path


class ImportPathScreen(ModalScreen[ImportRequest | None]):
    """Dismisses with the request, or None. enter in the path box moves to the source list."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, sources: list[tuple[str, str]], source: str | None = None) -> None:
        super().__init__()
        self.sources = sources
        self.source = source

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content("Import sessions from a path"), classes="dialog-title")
            yield Input(placeholder="a session file or a folder of them, e.g. ~/backup/claude", id="import-path")
            yield Static(Content("Written by:"), classes="dialog-label")
            yield OptionList(*(Option(label, id=source) for source, label in self.sources), id="import-source")
            yield Static(Content("enter: next / import · esc cancels"), classes="dialog-hint")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        index = next((i for i, (source, _) in enumerate(self.sources) if source == self.source), 0)
        if self.sources:
            options.highlighted = index
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        raw = self.query_one(Input).value.strip()
        if not raw:
            self.notify("Type the path to import first.", severity="warning", markup=False)
            self.query_one(Input).focus()
            return
        path = Path(raw).expanduser()
        if not path.exists():
            self.notify(f"{path}: no such file or folder", severity="error", markup=False)
            self.query_one(Input).focus()
            return
        source = event.option.id or ""
        label = next((label for s, label in self.sources if s == source), source)
        self.dismiss(ImportRequest(source, label, path))

    def action_cancel(self) -> None:
        self.dismiss(None)
