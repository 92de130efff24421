"""Snippets of the top hits, read from the node files (the index keeps no turn text).

A node file is found by the layout ARCHITECTURE.md §3 fixes (history/NNNNNN-<r>-<id>.json), so
a hit costs one small file read, not the opening of its session. The text is made safe for a
terminal (safe_text.plain), its secrets masked (backend/privacy), and cut to the window that holds
the most distinct query terms (the first such window; a long answer's matching sentence, not its
opening lines), started at a sentence when one begins shortly before.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence

from ..model import ROLE_LETTER, Node, OpmemError
from ..privacy import redact_text
from ..safe_text import plain
from ..store.sessions import SessionStore
from .index import KIND_TOOL
from .index_update import tool_text

SNIPPET_CHARS = 200
_MAX_SPOTS = 256  # occurrences looked at per term: a huge tool output costs no more than a page
_WORD = re.compile(r"[^\W_]+")  # the index's words: letters and digits (query_text._TERM)
_SENTENCE_END = (". ", "? ", "! ", ": ", "; ", "。", "？", "！")


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

    def turn(
        self, session_id: str, node_id: str, seq: int, role: str, kind: int, terms: Sequence[str], width: int = 0
    ) -> str:
        node = self.node(session_id, node_id, seq, role)
        if node is None:
            return ""
        text = tool_text(node) if kind == KIND_TOOL else node.content
        return self.around(text, terms, width)

    def around(self, text: str, terms: Sequence[str], width: int = 0) -> str:
        """A window of `width` characters (the snippets' own when 0), on one line, over the most
        distinct query terms."""
        width = width or self.width
        # secrets masked before the window is cut (half a value would no longer be found);
        # str.split's whitespace is re's \s: runs become one space
        flat = " ".join(redact_text(plain(text)).split())
        if len(flat) <= width:
            return flat
        start = _window_start(flat, terms, width)
        piece = flat[start : start + width].rstrip()
        return ("…" if start > 0 else "") + piece + ("…" if start + width < len(flat) else "")

    def is_bare_reply(self, snippet: str, terms: Sequence[str]) -> bool:
        """A short message that holds no query term ("Yes", "do it"): found through the message
        it answers, it says nothing without it."""
        return 0 < len(snippet) <= self.width // 2 and not holds_term(snippet, terms)

    def answering(self, reply: str, earlier: str, terms: Sequence[str]) -> str:
        """A bare reply shown after the window of the message it answers, when that holds a query
        term (else the reply was found through the message before that one: it stays as it is)."""
        return f"{earlier} → {reply}" if holds_term(earlier, terms) else reply

    def earlier_width(self, reply: str) -> int:
        return max(self.width // 4, self.width - len(reply) - 3)


def _window_start(flat: str, terms: Sequence[str], width: int) -> int:
    """Where the window starts: over the span of the most distinct terms (stems) that fits in
    two thirds of the width (the first such span), a third of the width before it at most, moved
    on to a sentence start or a word start nearby."""
    lower = _folded(flat)
    spots: list[tuple[int, int]] = []  # (position, term number), terms with one stem counted once
    stems: dict[str, int] = {}
    for term in terms:
        number = stems.setdefault(_stem(term), len(stems))
        spots += [(at, number) for at in _find_all(lower, term)]
    if not spots:
        return 0
    spots.sort()
    reach = width * 2 // 3
    best, best_count, right = 0, 0, 0
    counts: dict[int, int] = {}
    for left, (at, _number) in enumerate(spots):
        while right < len(spots) and spots[right][0] - at <= reach:
            counts[spots[right][1]] = counts.get(spots[right][1], 0) + 1
            right += 1
        if len(counts) > best_count:
            best, best_count = left, len(counts)
        number = spots[left][1]
        counts[number] -= 1
        if not counts[number]:
            del counts[number]
    first = spots[best][0]
    start = max(0, min(first - width // 3, len(flat) - width))
    if start == 0:
        return 0
    sentence = max(flat.rfind(end, start, first) for end in _SENTENCE_END)
    if sentence >= 0:
        return sentence + 2 if flat[sentence + 1] == " " else sentence + 1
    space = flat.find(" ", start, start + 20)
    return space + 1 if 0 <= space < first else start


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        parts = [os.read(fd, 1 << 16)]
        while parts[-1]:
            parts.append(os.read(fd, 1 << 16))
    finally:
        os.close(fd)
    return b"".join(parts)


def holds_term(text: str, terms: Sequence[str]) -> bool:
    """Whether a word of `text` starts with a term's stem, words split as the index splits them
    (letters and digits: `test_login_no_loop` holds `login`)."""
    stems = tuple(_stem(t) for t in terms if t)
    return any(word.startswith(stems) for word in _WORD.findall(text.casefold()))


def _folded(flat: str) -> str:
    """flat casefolded, position for position (a character that folds to two, ß, is kept as it is)."""
    lower = flat.casefold()
    if len(lower) == len(flat):
        return lower
    return "".join(folded if len(folded := c.casefold()) == 1 else c for c in flat)


def _stem(term: str) -> str:
    return term if len(term) <= 4 else term[: max(4, len(term) - 2)]


def _find(lower: str, term: str) -> int:
    """Where a term (or its stem: the index stems with porter) first shows at the start of a word
    (re's \\b), or -1. str.find and a look at the neighbours: a regex that starts with \\b scans
    every position (~5 us a term on a snippet's text)."""
    return next(_find_all(lower, term), -1)


def _find_all(lower: str, term: str) -> Iterator[int]:
    """Each place (at most _MAX_SPOTS) a term or its stem shows at the start of a word."""
    stem = _stem(term)
    if not stem:
        match = re.search(r"\b", lower)
        if match:
            yield match.start()
        return
    at = lower.find(stem)
    found = looked = 0
    while at >= 0 and found < _MAX_SPOTS and looked < 4 * _MAX_SPOTS:  # "e" inside every word of a log
        looked += 1
        if (at > 0 and _is_word(lower[at - 1])) != _is_word(stem[0]):
            yield at
            found += 1
        at = lower.find(stem, at + 1)


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"  # re's \w for str patterns
