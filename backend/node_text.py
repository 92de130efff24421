"""What a node says, as text: a tool call's arguments, a message's thinking and model, a text's
size. One reading, shared by the replay (widgets/turn_lines.py), the exports (backend/export/)
and blame, so a turn reads the same wherever it is shown."""

from __future__ import annotations

import json
from typing import Any

from .model import Node


def args_text(value: Any, pretty: bool = False) -> str:
    """A tool call's arguments as text: a string as it is, anything else as JSON (one line, or
    indented when `pretty`)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        if pretty:
            return json.dumps(value, ensure_ascii=False, indent=2, default=str)
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        return str(value)


def thinking_text(node: Node) -> str:
    """A message's thinking as text ("" for none)."""
    value = node.metadata.get("thinking") if node.metadata else None
    if not value:
        return ""
    if isinstance(value, (list, tuple)):
        return "\n\n".join(str(part) for part in value if part)
    return str(value)


def model_of(node: Node) -> str:
    """The model an assistant message names (its name, else metadata.model); "" for any other node."""
    if node.role != "assistant":
        return ""
    value = node.name or (node.metadata.get("model") if node.metadata else "") or ""
    return value if isinstance(value, str) else ""


def size_label(text: str) -> str:
    """`N lines, M chars` (the HTML export's page.js writes the same)."""
    lines = text.count("\n") + 1 if text else 0
    chars = len(text)
    if chars >= 1_000_000:
        size = f"{chars / 1_000_000:.1f}M chars"
    elif chars >= 10_000:
        size = f"{chars / 1_000:.1f}k chars"
    else:
        size = f"{chars} chars"
    return f"{lines} line{'s' if lines != 1 else ''}, {size}"
