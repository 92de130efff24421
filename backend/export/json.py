"""A session's nodes as opmem stores them (ARCHITECTURE §3), with its meta and its turns, as one
JSON document; redacted like every export unless it is raw."""

from __future__ import annotations

import json
from typing import Any

from .session import ExportedSession

FORMAT = "opmem-session-export"
VERSION = 1


def export_document(session: ExportedSession) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "redacted": session.redacted,
        "meta": session.meta.to_json(),
        "branch": session.branch,
        "head_id": session.head_id,
        "total_turns": session.total_turns,
        "branches": [
            {"name": b.name, "head_id": b.head_id, "tip": b.tip, "turns": b.turns, "current": b.is_current}
            for b in session.branches
        ],
        "turns": [{"number": t.number, "commit": t.commit, "node_ids": [n.id for n in t.nodes]} for t in session.turns],
        "nodes": [n.to_json() for n in session.nodes],
    }


# json leaves DEL and the C1 controls raw; escaped (the same JSON), the text is safe on a terminal.
_CONTROL_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def render_json(session: ExportedSession) -> str:
    text = json.dumps(export_document(session), ensure_ascii=False, indent=2, default=_plain)
    text = text.translate(_CONTROL_ESCAPES).encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
    return text + "\n"


def _plain(value: Any) -> Any:
    """A mapping proxy or tuple nested in metadata, as JSON; anything else as its text."""
    if hasattr(value, "items"):
        return dict(value.items())
    return str(value)
