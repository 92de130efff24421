"""Snippets of the top hits, read from the node files (the index keeps no turn text).

A node file is found by the layout ARCHITECTURE.md §3 fixes (history/NNNNNN-<r>-<id>.json), so
a hit costs one small file read, not the opening of its session. The text is made safe for a
terminal (safe_text.plain), its secrets masked (backend/privacy), and cut to a window around the first query term it holds.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence

from ..model import ROLE_LETTER, Node, OpmemError
from ..privacy import redact_text
from ..safe_text import plain
from ..store.sessions import SessionStore
from .index import KIND_TOOL
from .index_update import tool_text

SNIPPET_CHARS = 200


class Snippets:
    def __init__(self, store: SessionStore, width: int = SNIPPET_CHARS) -> None:
        self.store = store
        self.width = width

    def node(self, session_id: str, node_id: str, seq: int, role: str) -> Node | None:
        node = self.node_file(session_id, node_id, seq, role)
        if node is not None:
            return node
        try:
            return self.store.get_node(session_id, node_id)
        except (OpmemError, KeyError):
            return None  # the session went away after the search found it

    def node_file(self, session_id: str, node_id: str, seq: int, role: str) -> Node | None:
        """The node read from its own file; None when that file is missing or unreadable. Plain
        os calls: a hit's snippet is on the search path (pathlib and open() cost ~25 us a hit)."""
        try:
            name = f"{seq:06d}-{ROLE_LETTER.get(role, 's')}-{node_id}.json"
            path = os.path.join(self.store.path_for(session_id), "history", name)
            return Node.from_json(json.loads(_read(path)), path)
        except (OSError, ValueError, RecursionError, OpmemError):
            return None

    def turn(self, session_id: str, node_id: str, seq: int, role: str, kind: int, terms: Sequence[str]) -> str:
        node = self.node(session_id, node_id, seq, role)
        if node is None:
            return ""
        text = tool_text(node) if kind == KIND_TOOL else node.content
        return self.around(text, terms)

    def around(self, text: str, terms: Sequence[str]) -> str:
        """A window of `width` characters around the first query term, on one line."""
        # secrets masked before the window is cut (half a value would no longer be found);
        # str.split's whitespace is re's \s: runs become one space
        flat = " ".join(redact_text(plain(text)).split())
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


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        parts = [os.read(fd, 1 << 16)]
        while parts[-1]:
            parts.append(os.read(fd, 1 << 16))
    finally:
        os.close(fd)
    return b"".join(parts)


def _find(lower: str, term: str) -> int:
    """Where a term (or its stem: the index stems with porter) first shows at the start of a word
    (re's \\b), or -1. str.find and a look at the neighbours: a regex that starts with \\b scans
    every position (~5 us a term on a snippet's text)."""
    stem = term if len(term) <= 4 else term[: max(4, len(term) - 2)]
    if not stem:
        match = re.search(r"\b", lower)
        return match.start() if match else -1
    at = lower.find(stem)
    while at >= 0:
        if (at > 0 and _is_word(lower[at - 1])) != _is_word(stem[0]):
            return at
        at = lower.find(stem, at + 1)
    return -1


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"  # re's \w for str patterns
