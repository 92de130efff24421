"""Snippets of the top hits, read from the node files (the index keeps no turn text).

A node file is found by the layout ARCHITECTURE.md §3 fixes (history/NNNNNN-<r>-<id>.json), so
a hit costs one small file read, not the opening of its session. The text is made safe for a
terminal (safe_text.plain) and cut to a window around the first query term it holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model import ROLE_LETTER, Node, OpmemError
from ..safe_text import plain
from ..store.files import read_json_object
from ..store.sessions import SessionStore
from .index import KIND_TOOL
from .index_update import tool_text

SNIPPET_CHARS = 200
_SPACE = re.compile(r"\s+")


class Snippets:
    def __init__(self, store: SessionStore, width: int = SNIPPET_CHARS) -> None:
        self.store = store
        self.width = width

    def node(self, session_id: str, node_id: str, seq: int, role: str) -> Node | None:
        try:
            folder = self.store.path_for(session_id) / "history"
            name = f"{seq:06d}-{ROLE_LETTER.get(role, 's')}-{node_id}.json"
            return Node.from_json(read_json_object(folder / name), folder / name)
        except OpmemError:
            try:
                return self.store.get_node(session_id, node_id)
            except (OpmemError, KeyError):
                return None  # the session went away after the search found it

    def turn(self, session_id: str, node_id: str, seq: int, role: str, kind: int, terms: Sequence[str]) -> str:
        node = self.node(session_id, node_id, seq, role)
        if node is None:
            return ""
        text = tool_text(node) if kind == KIND_TOOL else node.content
        return self.around(text, terms)

    def around(self, text: str, terms: Sequence[str]) -> str:
        """A window of `width` characters around the first query term, on one line."""
        flat = _SPACE.sub(" ", plain(text)).strip()
        if len(flat) <= self.width:
            return flat
        lower = flat.casefold()
        first = min((i for i in (_find(lower, t) for t in terms) if i >= 0), default=0)
        start = max(0, min(first - self.width // 3, len(flat) - self.width))
        if start > 0:
            space = flat.find(" ", start, start + 20)
            start = space + 1 if space >= 0 else start
        piece = flat[start : start + self.width].rstrip()
        return ("…" if start > 0 else "") + piece + ("…" if start + self.width < len(flat) else "")


def _find(lower: str, term: str) -> int:
    """Where a term (or its stem: the index stems with porter) first shows, or -1."""
    stem = term if len(term) <= 4 else term[: max(4, len(term) - 2)]
    match = re.search(r"\b" + re.escape(stem), lower)
    return match.start() if match else -1
