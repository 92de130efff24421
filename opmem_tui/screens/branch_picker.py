"""`b`: choose which branch of a forked turn the replay follows."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class BranchChoice:
    head_id: str
    name: str  # branch name, e.g. main or retry-<id>
    preview: str  # that branch's reply in this turn, one line, already cleaned
    turns: int
    current: bool = False


class BranchPickerScreen(ModalScreen[str | None]):
    """Dismisses with the chosen head id, or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, turn: int, choices: list[BranchChoice]) -> None:
        super().__init__()
        self.turn = turn
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(Content(f"Turn {self.turn} has {len(self.choices)} branches"), classes="dialog-title")
            options = []
            for choice in self.choices:
                label = Content.assemble(
                    ("● " if choice.current else "  ", "$accent"),
                    (choice.name, "bold"),
                    (f"  {choice.turns} turns  ", "$text-muted"),
                    choice.preview,
                )
                options.append(Option(label, id=choice.head_id))
            yield OptionList(*options, id="branch-options")
            yield Static(Content("enter follows the branch · esc cancels"), classes="dialog-hint")

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        current = next((i for i, c in enumerate(self.choices) if c.current), 0)
        option_list.highlighted = current
        option_list.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
