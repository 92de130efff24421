"""The sync's state on one line at the right of the footer: "synced 3 min ago", "syncing…",
"sync failed: <why>". It only shows what it is told (the screen runs the sync)."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from .safe_text import one_line

NEVER, SYNCING, SYNCED, FAILED = "never", "syncing", "synced", "failed"


def ago(seconds: float) -> str:
    if seconds < 60:
        return "just now"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min ago"
    hours = minutes // 60
    return f"{hours} h ago" if hours < 48 else f"{hours // 24} d ago"


def describe(state: str, at: float | None, error: str, now: float) -> str:
    """The status line: what the last sync did, and when (`at`, a Unix time)."""
    if state == SYNCING:
        return "syncing…"
    if state == FAILED:
        return "sync failed: " + one_line(error, 60)
    if at is None:
        return "not synced yet"
    return "synced " + ago(max(0.0, now - at))


class SyncStatus(Static):
    DEFAULT_CSS = """
    SyncStatus { width: auto; max-width: 50%; height: 1; padding: 0 1; background: $footer-background;
                 color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    SyncStatus.-failed { color: $text-warning; }
    """

    def __init__(self, *, now: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.now = now
        self.state = NEVER
        self.at: float | None = None
        self.error = ""

    def on_mount(self) -> None:
        self._show()
        self.set_interval(30, self._show)  # "3 min ago" moves on

    @property
    def text(self) -> str:
        return describe(self.state, self.at, self.error, self.now())

    def set_state(self, state: str, *, at: float | None = None, error: str = "") -> None:
        self.state = state
        if at is not None:
            self.at = at
        self.error = error
        self._show()

    def _show(self) -> None:
        self.set_class(self.state == FAILED, "-failed")
        self.update(Content(self.text))


class FooterRow(Horizontal):
    """The footer with the sync status at its right (composed only when a sync remote is set)."""

    DEFAULT_CSS = """
    FooterRow { dock: bottom; height: 1; width: 1fr; }
    FooterRow > Footer { dock: none; width: 1fr; }
    """
