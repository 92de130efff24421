"""Ask for a new session title."""

from __future__ import annotations

from .ask_text import AskTextScreen


class RenameScreen(AskTextScreen):
    """Dismisses with the new title (its spaces collapsed), or None when cancelled or left unchanged."""

    def __init__(self, current: str) -> None:
        super().__init__(
            "Rename session",
            current,
            hint="enter saves · esc cancels",
            placeholder="new title",
            wide=False,
            input_id="title",
        )
        self.current = current

    def answer(self, text: str) -> str | None:
        title = " ".join(text.split())
        return title if title and title != self.current else None
