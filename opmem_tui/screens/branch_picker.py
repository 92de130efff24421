"""`b`: choose a branch of a forked turn, to view it or to make it the session's current one."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from opmem_tui.widgets.secret_marks import marked_content

from ..data import BranchChoice


@dataclass(frozen=True)
class BranchPick:
    head_id: str
    make_current: bool = False  # switch the session's head, not only the view


class BranchPickerScreen(ModalScreen[BranchPick | None]):
    """Dismisses with the pick, or None. enter views the branch; c makes it current."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("c", "make_current", "Make current", show=False),
    ]

    def __init__(self, turn: int, choices: list[BranchChoice]) -> None:
        super().__init__()
        self.turn = turn
        self.choices = choices

    def compose(self) -> ComposeResult:
        name_width = max((cell_len(c.name) for c in self.choices), default=0)
        turns_width = max((len(str(c.turns)) for c in self.choices), default=1)
        with Vertical(classes="dialog wide"):
            yield Static(Content(f"Turn {self.turn} has {len(self.choices)} branches"), classes="dialog-title")
            options = []
            for choice in self.choices:
                label = Content.assemble(
                    ("● " if choice.current else "  ", "$accent"),
                    (choice.name + " " * (name_width - cell_len(choice.name)), "bold"),
                    (f"  {choice.turns:>{turns_width}} turns  ", "$text-muted"),
                    marked_content(choice.preview),
                )
                options.append(Option(label, id=choice.head_id))
            yield OptionList(*options, id="branch-options")
            yield Static(
                Content("● current branch · enter views the branch · c makes it current · esc cancels"),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        shown = next((i for i, c in enumerate(self.choices) if c.viewing), 0)
        option_list.highlighted = shown
        option_list.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(BranchPick(event.option.id))

    def action_make_current(self) -> None:
        option_list = self.query_one(OptionList)
        index = option_list.highlighted
        if index is not None and 0 <= index < len(self.choices):
            self.dismiss(BranchPick(self.choices[index].head_id, make_current=True))

    def action_cancel(self) -> None:
        self.dismiss(None)
