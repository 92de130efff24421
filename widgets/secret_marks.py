"""Masked secrets drawn apart: each `[secret:<kind>#<fp>]` marker in session text gets the
secret style, so a reader sees a value was taken out. The data layer did the masking
(opmem_tui/masking.py); this only finds the markers (one regex, and only in text that holds
`[secret:`) and styles them, as plain text, never markup."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.content import Content

from opmem_tui.backend.privacy import MARKER

MARKER_OPEN = "[secret:"
SECRET_STYLE = "bold $warning"  # Content style: the theme's warning colour (lists, headers, dialogs)
SECRET_VARIABLE = "warning"  # the same colour for rich Text cells (styling.theme_style)


# A marker cut by a narrow column or a wrapped line: `[secret:github-to…` at the end of the text.
_CUT_MARKER = re.compile(r"\[secret:[a-z0-9-]*(?:#[0-9a-f]{0,4})?…?$")


def marker_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each marker in `text`, and of one cut at its end; [] at once for text
    without one."""
    if "[secret" not in text:
        return []
    spans = [m.span() for m in MARKER.finditer(text)]
    cut = _CUT_MARKER.search(text, spans[-1][1] if spans else 0)
    if cut is not None:
        spans.append(cut.span())
    return spans


def has_marker(text: str) -> bool:
    return MARKER_OPEN in text and MARKER.search(text) is not None


def mark_segments(segments: Iterable[Segment], spans: list[tuple[int, int]], secret: Style) -> list[Segment]:
    """`segments` (whose texts joined are the line the spans index) with `secret` laid over the
    spans; control segments pass through."""
    out: list[Segment] = []
    pos = 0
    for segment in segments:
        text, style, control = segment
        if control:
            out.append(segment)
            continue
        start, end = pos, pos + len(text)
        pos = end
        cuts = [(max(s, start), min(e, end)) for s, e in spans if s < end and e > start]
        if not cuts:
            out.append(segment)
            continue
        at = start
        for s, e in cuts:
            if s > at:
                out.append(Segment(text[at - start : s - start], style))
            out.append(Segment(text[s - start : e - start], (style or Style()) + secret))
            at = e
        if at < end:
            out.append(Segment(text[at - start :], style))
    return out


def marked_content(text: str, style: str = "") -> Content:
    """Plain `text` as Content in `style`, its markers in the secret style."""
    spans = marker_spans(text)
    if not spans:
        return Content.styled(text, style) if style else Content(text)
    parts: list[tuple[str, str]] = []
    at = 0
    for start, end in spans:
        if start > at:
            parts.append((text[at:start], style))
        parts.append((text[start:end], f"{style} {SECRET_STYLE}".strip()))
        at = end
    if at < len(text):
        parts.append((text[at:], style))
    return Content.assemble(*parts)


def mark_text(text: Text, secret: Style) -> Text:
    """A rich Text (a table cell) with `secret` laid over its markers."""
    for start, end in marker_spans(text.plain):
        text.stylize(secret, start, end)
    return text
