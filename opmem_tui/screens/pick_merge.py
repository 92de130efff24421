"""Pick an alias merge to undo (palette: Undo an alias merge…)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from opmem_tui.widgets.safe_text import one_line

from ..memory_data import AliasChoice


class PickMergeScreen(ModalScreen[AliasChoice | None]):
    """Dismisses with the merge to undo, or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, choices: Sequence[AliasChoice]) -> None:
        super().__init__()
        self.choices = list(choices)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(Content("Undo an alias merge"), classes="dialog-title")
            options = []
            for index, choice in enumerate(self.choices):
                label = Content.assemble(
                    (one_line(choice.merged.name, 40), "bold"),
                    ("  merged into  ", "$text-muted"),
                    (one_line(choice.into.name, 40), "bold"),
                    (f"  {one_line(choice.reason, 50) or 'no reason given'} ({choice.score:.2f})", "$text-muted"),
                )
                options.append(Option(label, id=str(index)))
            yield OptionList(*options, id="merge-options")
            yield Static(
                Content("enter: the name becomes its own entity again (the sleep keeps it apart) · esc cancels"),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[int(event.option.id or 0)])

    def action_cancel(self) -> None:
        self.dismiss(None)
