"""Rich styles from the current theme's variables, for cells drawn as rich Text (DataTable)."""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget


def theme_style(widget: Widget, variable: str, *, bold: bool = False, dim: bool = False) -> Style:
    """Style in the colour of `$variable` of the running theme; plain when it is unknown."""
    try:
        color = widget.app.get_css_variables().get(variable)
    except Exception:
        color = None
    try:
        return Style(color=color, bold=bold or None, dim=dim or None)
    except Exception:  # a colour rich cannot parse (e.g. with alpha): keep the weight only
        return Style(bold=bold or None, dim=dim or None)
