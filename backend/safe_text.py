"""Untrusted session text made safe for a terminal: no escape sequences, no control bytes."""

from __future__ import annotations

import re

# CSI / OSC / DCS / other ESC sequences, then any C0/C1 control except tab and newline.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1b[@-Z\\-_]"  # other two-byte ESC sequences
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """Strip terminal escape sequences and control characters; keep \\n and \\t.

    The result is still to be shown as plain text (rich Text / Content), never as markup.
    """
    if not text:
        return ""
    if _CONTROLS.search(text) is None:  # \r, ESC and 8-bit CSI are controls too: nothing to strip
        return text
    text = text.replace("\r\n", "\n")
    text = _ESCAPES.sub("", text)
    return _CONTROLS.sub("", text)
