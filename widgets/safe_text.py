"""Untrusted session text made safe to show: no markup, no control characters, no escapes."""

from __future__ import annotations

from rich.text import Text

from opmem_tui.backend.safe_text import plain as _strip_escapes


def clean(text: object) -> str:
    """Text without escape sequences or control characters (newline and tab stay)."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if text.isprintable():  # the common case: nothing to strip, skip the regexes
        return text
    return _strip_escapes(text)


def one_line(text: object, limit: int = 200) -> str:
    """The first `limit` characters on one line: newlines and tabs become spaces."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    value = " ".join(clean(text[: limit * 4]).split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def plain(text: object, style: str = "") -> Text:
    """A rich Text built from the string itself, so `[bold]` shows as typed."""
    return Text(clean(text), style=style, no_wrap=False)
