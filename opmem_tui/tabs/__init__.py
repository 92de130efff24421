"""The tabs of the main screen: each one view, reading through the app's data layer in its own
workers. A tab is a widget that subclasses `Tab` (as well as its layout container)."""

from __future__ import annotations

from textual.widget import Widget


class Tab:
    """Mixin for a tab's top widget."""

    def default_focus(self) -> Widget | None:
        """What `1`/`2`/... should land on in this tab (None: nothing to focus there yet)."""
        raise NotImplementedError

    def focus_default(self) -> None:
        """Focus it once the app gets to it (Widget.focus: after what is queued, e.g. a mount)."""
        widget = self.default_focus()
        if widget is not None:
            widget.focus()
