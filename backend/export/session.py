"""What an export holds: one branch of a session, a range of its turns, redacted unless asked not to.

Every format (html.py, markdown.py, json.py) renders an `ExportedSession`; this module is the one
place that reads the store for an export and the one place the privacy gate is passed, so no
format can hand out a node that skipped it.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..model import Branch, Node, OpmemError, SessionMeta, Turn, turn_count
from ..privacy import redact_node, redact_value
from ..safe_text import plain

if TYPE_CHECKING:
    from ..store.sessions import SessionStore

FORMATS = ("html", "md", "json")
_RANGE = re.compile(r"^\s*(?P<a>\d*)\s*(?P<dots>\.\.)?\s*(?P<b>\d*)\s*$")


class ExportError(OpmemError):
    """An export that cannot be made as asked: the text says why."""


@dataclass(frozen=True, slots=True)
class ExportedSession:
    meta: SessionMeta  # title and extra keys redacted like the nodes
    branch: str  # the branch's name (git ref short name), or its head node id
    head_id: str | None
    turns: tuple[Turn, ...]  # the chosen range, nodes redacted unless raw
    total_turns: int  # turns on the branch, not only the chosen ones
    branches: tuple[Branch, ...]
    redacted: bool

    @property
    def title(self) -> str:
        return self.meta.display_title

    @property
    def nodes(self) -> list[Node]:
        return [node for turn in self.turns for node in turn.nodes]


def parse_turn_range(text: str | None, total: int) -> tuple[int, int]:
    """`A..B` (both included, 1-based), `A..`, `..B` or `N` as (first, last) within 1..total."""
    if total <= 0:
        return (0, 0)
    if text is None or not text.strip():
        return (1, total)
    m = _RANGE.match(text)
    if m is None or not (m.group("a") or m.group("b")):
        raise ExportError(f"--turns {text!r}: write A..B, A.., ..B or N (turn numbers from 1 to {total})")
    a = int(m.group("a")) if m.group("a") else 1
    if m.group("dots"):
        b = int(m.group("b")) if m.group("b") else total
    elif m.group("b"):
        raise ExportError(f"--turns {text!r}: write A..B, A.., ..B or N (turn numbers from 1 to {total})")
    else:
        b = a
    if a < 1 or b < a:
        raise ExportError(f"--turns {text!r}: the first turn must be at least 1 and not after the last")
    if a > total:
        raise ExportError(f"--turns {text!r}: the session has {total} turn{'s' if total != 1 else ''} on this branch")
    return (a, min(b, total))


def _pick_branch(store: SessionStore, session_id: str, branch: str | None) -> tuple[str, str | None, list[Branch]]:
    branches = store.branches(session_id)
    head = store.head(session_id)
    if branch is None:
        current = next((b for b in branches if b.is_current), None)
        if current is None and head is not None:
            current = next((b for b in branches if b.head_id == head), None)
        return (current.name if current is not None else "main", head, branches)
    for item in branches:
        if item.name == branch:
            return (item.name, item.head_id, branches)
    if store.has_node(session_id, branch):
        return (branch, branch, branches)
    names = ", ".join(b.name for b in branches) or "none"
    raise ExportError(f"session {session_id}: no branch {branch!r} (its branches: {names})")


def _redacted_meta(meta: SessionMeta) -> SessionMeta:
    data: dict[str, Any] = redact_value(meta.to_json())
    return SessionMeta.from_json(data, fallback_id=meta.id, path=meta.path)


def select(
    store: SessionStore,
    session_id: str,
    *,
    turns: str | None = None,
    branch: str | None = None,
    raw: bool = False,
) -> ExportedSession:
    """The session's chosen branch and turns; redacted (every node through redact_node) unless `raw`."""
    meta = store.get_meta(session_id)
    name, head, branches = _pick_branch(store, session_id, branch)
    all_turns = [t for t in store.get_turns(session_id, head) if t.nodes]
    total = turn_count(all_turns)
    if total == 0:
        chosen = all_turns  # a branch with no user message yet: its one turn 0, whatever the range
    else:
        first, last = parse_turn_range(turns, total)
        chosen = [t for t in all_turns if first <= t.number <= last]
    if not raw:
        chosen = [Turn(t.number, tuple(redact_node(n) for n in t.nodes), t.commit, t.fork_heads) for t in chosen]
        meta = _redacted_meta(meta)
    return ExportedSession(meta, name, head, tuple(chosen), total, tuple(branches), not raw)


def iso_time(ts: float) -> str:
    """A node's time as `YYYY-MM-DD HH:MM:SS UTC` ("" when unknown): the same text wherever it is opened."""
    if not ts:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def first_line(text: str, limit: int = 100) -> str:
    line = next((part.strip() for part in (text or "").splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def shown(text: str) -> str:
    """Session text as an export shows it: no terminal escapes or control bytes, and the home
    folder of whoever exports written `~` (a shared file need not carry a user name)."""
    text = plain(text)
    home = os.path.expanduser("~").rstrip(os.sep)
    if len(home) > 1 and home + os.sep in text:
        text = text.replace(home + os.sep, "~" + os.sep)
    return text
