"""`H`: the session's full history, one line per turn commit (git log --all), newest first."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from opmem_tui.backend.model import TurnCommit
from opmem_tui.widgets.safe_text import one_line
from opmem_tui.widgets.secret_marks import marked_content

TURN_PREFIX = re.compile(r"^turn \d+:\s*")  # the column already says which turn


class HistoryScreen(ModalScreen[str | None]):
    """Dismisses with the chosen commit oid, or None."""

    BINDINGS = [Binding("escape,H", "cancel", "Close", show=False)]

    def __init__(self, title: str, commits: Sequence[TurnCommit], current_oid: str | None = None) -> None:
        super().__init__()
        self.session_title = title
        self.commits = list(commits)
        self.current_oid = current_oid

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            count = len(self.commits)
            yield Static(
                marked_content(
                    f"History of “{one_line(self.session_title, 60)}”: {count} turn commit{'s' if count != 1 else ''}"
                ),
                classes="dialog-title",
            )
            options = []
            for commit in self.commits:
                stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(commit.time)) if commit.time else ""
                label = Content.assemble(
                    ("● " if commit.oid == self.current_oid else "  ", "$accent"),
                    (commit.oid[:7], "$warning"),
                    (f"  turn {commit.turn:>3}  ", "bold"),
                    (f"{stamp}  ", "$text-muted"),
                    (f"[{', '.join(commit.branches)}] " if commit.branches else "", "$secondary"),
                    marked_content(one_line(TURN_PREFIX.sub("", commit.summary, count=1), 70)),
                )
                options.append(Option(label, id=commit.oid))
            if not options:
                options.append(Option(Content("No commits yet: the session has no committed turn."), disabled=True))
            yield OptionList(*options, id="history-options")
            yield Static(
                Content(
                    "● the turn on screen · [branch] a branch tip · enter shows that commit (read-only) · esc closes"
                ),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        index = next((i for i, c in enumerate(self.commits) if c.oid == self.current_oid), 0)
        if self.commits:
            option_list.highlighted = index
        option_list.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
