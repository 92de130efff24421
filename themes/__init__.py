"""opmem's own themes: a dark and a light one, registered on the app by `register_all`."""

from __future__ import annotations

from textual.app import App
from textual.theme import Theme

OPMEM_DARK = Theme(
    name="opmem-dark",
    primary="#5FA8D3",
    secondary="#C3A6FF",
    accent="#F2B84B",
    warning="#F2B84B",
    error="#F26D6D",
    success="#7BC96F",
    foreground="#E4E6EB",
    background="#15181E",
    surface="#1C2028",
    panel="#252B36",
    boost="#FFFFFF10",
    dark=True,
    variables={
        "block-cursor-background": "#2F4A63",
        "block-cursor-foreground": "#FFFFFF",
        "block-cursor-blurred-background": "#2A313D",
        "footer-key-foreground": "#F2B84B",
        "input-selection-background": "#5FA8D3 40%",
    },
)

OPMEM_LIGHT = Theme(
    name="opmem-light",
    primary="#1F6FA8",
    secondary="#7A4FD1",
    accent="#B25E00",
    warning="#9A6700",
    error="#C62828",
    success="#2E7D32",
    foreground="#1F2328",
    background="#FAFAF7",
    surface="#F0F1EC",
    panel="#E3E6DF",
    boost="#00000010",
    dark=False,
    variables={
        "block-cursor-background": "#CFE3F5",
        "block-cursor-foreground": "#0B2540",
        "block-cursor-blurred-background": "#E4E8EC",
        "footer-key-foreground": "#1F6FA8",
        "input-selection-background": "#1F6FA8 30%",
    },
)

THEMES: tuple[Theme, ...] = (OPMEM_DARK, OPMEM_LIGHT)
DEFAULT_THEME = OPMEM_DARK.name


def register_all(app: App) -> None:
    for theme in THEMES:
        app.register_theme(theme)
