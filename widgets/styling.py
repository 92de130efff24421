"""Rich styles from the current theme's variables, for cells drawn as rich Text (DataTable)."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from rich.style import Style
from textual.app import App
from textual.theme import Theme
from textual.widget import Widget

# app -> (its theme when read, that theme's variables): working the variables out costs ~6 ms
# (Textual derives the whole colour system), too much to do for each label of a long list
_VARIABLES: WeakKeyDictionary[App, tuple[Theme, dict[str, str]]] = WeakKeyDictionary()


def theme_variables(app: App) -> dict[str, str]:
    theme = app.current_theme
    known = _VARIABLES.get(app)
    if known is None or known[0] is not theme:
        known = _VARIABLES[app] = (theme, app.get_css_variables())
    return known[1]


def theme_style(widget: Widget, variable: str, *, bold: bool = False, dim: bool = False) -> Style:
    """Style in the colour of `$variable` of the running theme; plain when it is unknown."""
    try:
        color = theme_variables(widget.app).get(variable)
    except Exception:
        color = None
    try:
        return Style(color=color, bold=bold or None, dim=dim or None)
    except Exception:  # a colour rich cannot parse (e.g. with alpha): keep the weight only
        return Style(bold=bold or None, dim=dim or None)
