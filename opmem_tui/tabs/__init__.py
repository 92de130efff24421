"""The tabs of the main screen: each one view, reading through the app's data layer in its own
workers. A tab is a widget that subclasses `Tab` (as well as its layout container)."""

from __future__ import annotations


class Tab:
    """Mixin for a tab's top widget."""

    def focus_default(self) -> None:
        """Focus what `1`/`2`/... should land on in this tab."""
        raise NotImplementedError
