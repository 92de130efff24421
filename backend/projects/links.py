"""Links between project commits and the session turns that made them.

A commit belongs to a turn with
- high confidence when its hash (full, or abbreviated to 7+ characters) or its summary appears in
  a `git commit` tool call or result of that turn, or when opmem itself made it
  (`[agent <session>] turn N:`);
- low confidence when it was made inside the turn's time window and changed a path the turn's
  tools wrote.
The matching functions take plain data (Turns or node lists, CommitInfo lists) so they can be
tested without repositories; LinkStore keeps the links found in projects/links.jsonl.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..file_lock import file_lock
from ..model import Node, Turn
from .records import CommitInfo
from .tool_paths import git_commit_texts, tool_written_paths

HIGH = "high"
LOW = "low"
_RANK = {HIGH: 2, LOW: 1}
_HEX = re.compile(r"(?<![0-9a-fA-F])[0-9a-f]{7,40}(?![0-9a-fA-F])")

# A commit can land a little after the tool node that ran it was recorded.
WINDOW_SLACK = 60.0
# A summary match must still be near the turn: a generic message ("fix tests") recurs.
MESSAGE_SLACK = 3600.0

Relative = Callable[[str], "str | None"]


@dataclass(frozen=True, slots=True)
class CommitLink:
    commit: str
    session_id: str
    turn: int
    confidence: str  # high | low
    reason: str  # opmem | hash | message | paths
    head_id: str = ""  # the turn's last node, to open the session there
    project_id: str = ""
    paths: tuple[str, ...] = ()  # for `paths`: the paths both touched
    linked_at: float = 0.0

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.project_id, self.commit, self.session_id, self.turn)

    def to_json(self) -> dict:
        return {
            "project_id": self.project_id,
            "commit": self.commit,
            "session_id": self.session_id,
            "turn": self.turn,
            "confidence": self.confidence,
            "reason": self.reason,
            "head_id": self.head_id,
            "paths": list(self.paths),
            "linked_at": self.linked_at,
        }

    @classmethod
    def from_json(cls, data: Mapping) -> CommitLink:
        return cls(
            commit=str(data["commit"]),
            session_id=str(data["session_id"]),
            turn=int(data["turn"]),
            confidence=str(data.get("confidence") or LOW),
            reason=str(data.get("reason") or ""),
            head_id=str(data.get("head_id") or ""),
            project_id=str(data.get("project_id") or ""),
            paths=tuple(str(p) for p in data.get("paths") or ()),
            linked_at=float(data.get("linked_at") or 0.0),
        )


@dataclass(frozen=True, slots=True)
class TurnSpan:
    """What the linker needs from one turn."""

    session_id: str
    number: int
    start: float
    end: float  # last node time + slack, cut at the next turn's start
    written: frozenset[str]  # repo-relative when a `relative` mapping was given
    git_texts: tuple[str, ...]
    head_id: str = ""


def _norm(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def turn_span(
    turn: Turn | Sequence[Node] | TurnSpan,
    *,
    session_id: str = "",
    number: int | None = None,
    next_start: float | None = None,
    relative: Relative | None = None,
    slack: float = WINDOW_SLACK,
) -> TurnSpan:
    if isinstance(turn, TurnSpan):
        return turn
    if isinstance(turn, Turn):
        nodes, num = turn.nodes, turn.number
    else:
        nodes, num = tuple(turn), 0
    if number is not None:
        num = number
    times = [n.created_at for n in nodes if n.created_at]
    start = min(times) if times else 0.0
    end = (max(times) if times else 0.0) + slack
    if next_start is not None and next_start > start:
        end = min(end, next_start)
    written: set[str] = set()
    for raw in tool_written_paths(nodes):
        rel = relative(raw) if relative else _norm(raw)
        if rel:
            written.add(rel)
    chain = [n for n in nodes if not n.is_tool]
    head = chain[-1].id if chain else (nodes[-1].id if nodes else "")
    return TurnSpan(session_id, num, start, end, frozenset(written), tuple(git_commit_texts(nodes)), head)


def _match_high(span: TurnSpan, commit: CommitInfo) -> str:
    if not span.git_texts:
        return ""
    for text in span.git_texts:
        for token in _HEX.findall(text):
            if commit.oid.startswith(token):
                return "hash"
    summary = commit.summary.strip()
    in_window = span.start - MESSAGE_SLACK <= commit.time <= span.end + MESSAGE_SLACK
    if len(summary) >= 3 and in_window and any(summary in text for text in span.git_texts):
        return "message"
    return ""


def _match_low(span: TurnSpan, commit: CommitInfo) -> tuple[str, ...]:
    if not commit.paths or not span.written or not span.start:
        return ()
    if not span.start <= commit.time <= span.end:
        return ()
    return tuple(sorted(span.written.intersection(commit.paths)))


def match(span: TurnSpan, commit: CommitInfo, project_id: str = "") -> CommitLink | None:
    if commit.is_agent and commit.session_id:
        # opmem's own commit names its session and turn: no guessing
        if commit.session_id == span.session_id and commit.turn == span.number:
            return CommitLink(commit.oid, span.session_id, span.number, HIGH, "opmem", span.head_id, project_id)
        return None
    reason = _match_high(span, commit)
    if reason:
        return CommitLink(commit.oid, span.session_id, span.number, HIGH, reason, span.head_id, project_id)
    shared = _match_low(span, commit)
    if shared:
        return CommitLink(commit.oid, span.session_id, span.number, LOW, "paths", span.head_id, project_id, shared)
    return None


def _spans(
    turns: Sequence[Turn | Sequence[Node] | TurnSpan], session_id: str, relative: Relative | None
) -> list[TurnSpan]:
    """Spans of a session's turns in order; each window ends where the next turn starts."""
    out: list[TurnSpan] = []
    starts: list[float | None] = []
    for turn in turns:
        if isinstance(turn, TurnSpan):
            starts.append(turn.start)
        else:
            nodes = turn.nodes if isinstance(turn, Turn) else tuple(turn)
            times = [n.created_at for n in nodes if n.created_at]
            starts.append(min(times) if times else None)
    for i, turn in enumerate(turns):
        later = [s for s in starts[i + 1 :] if s is not None]
        number = None if isinstance(turn, (Turn, TurnSpan)) else i + 1
        out.append(
            turn_span(
                turn, session_id=session_id, number=number, next_start=later[0] if later else None, relative=relative
            )
        )
    return out


def _best_first(links: Iterable[CommitLink]) -> list[CommitLink]:
    return sorted(links, key=lambda item: (-_RANK.get(item.confidence, 0), -len(item.paths), item.turn))


def commits_for_turn(
    turn: Turn | Sequence[Node] | TurnSpan,
    commits: Iterable[CommitInfo],
    *,
    session_id: str = "",
    number: int | None = None,
    next_start: float | None = None,
    relative: Relative | None = None,
    project_id: str = "",
) -> list[CommitLink]:
    """Commits that this turn made, high-confidence ones first."""
    span = turn_span(turn, session_id=session_id, number=number, next_start=next_start, relative=relative)
    found = [link for c in commits if (link := match(span, c, project_id)) is not None]
    return _best_first(found)


def turns_for_commit(
    commit: CommitInfo,
    turns: Sequence[Turn | Sequence[Node] | TurnSpan],
    *,
    session_id: str = "",
    relative: Relative | None = None,
    project_id: str = "",
) -> list[CommitLink]:
    """The turns of one session that may have made `commit`, the likeliest first."""
    found = [
        link for span in _spans(turns, session_id, relative) if (link := match(span, commit, project_id)) is not None
    ]
    return _best_first(found)


def link_session(
    session_id: str,
    turns: Sequence[Turn | Sequence[Node] | TurnSpan],
    commits: Iterable[CommitInfo],
    *,
    relative: Relative | None = None,
    project_id: str = "",
) -> list[CommitLink]:
    """For each commit, the one turn of this session that made it (if any)."""
    spans = _spans(turns, session_id, relative)
    out: list[CommitLink] = []
    for commit in commits:
        found = [link for span in spans if (link := match(span, commit, project_id)) is not None]
        if found:
            out.append(_best_first(found)[0])
    return out


# --------------------------------------------------------------------------------------------


class LinkStore:
    """projects/links.jsonl: append-only; the best link per (commit, session, turn) wins on read."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._cache_key: tuple[int, int] | None = None
        self._by_key: dict[tuple[str, str, str, int], CommitLink] = {}
        self.problems: list[str] = []

    def _load(self) -> dict[tuple[str, str, str, int], CommitLink]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._cache_key, self._by_key = None, {}
            return self._by_key
        key = (st.st_mtime_ns, st.st_size)
        if key == self._cache_key:
            return self._by_key
        by_key: dict[tuple[str, str, str, int], CommitLink] = {}
        problems: list[str] = []
        with open(self.path, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    link = CommitLink.from_json(json.loads(raw))
                except (ValueError, KeyError, TypeError) as exc:
                    problems.append(f"{self.path}:{lineno}: unreadable link line skipped ({exc})")
                    continue
                old = by_key.get(link.key)
                if old is None or _RANK.get(link.confidence, 0) >= _RANK.get(old.confidence, 0):
                    by_key[link.key] = link
        self._cache_key, self._by_key, self.problems = key, by_key, problems
        return by_key

    def add(self, links: Iterable[CommitLink]) -> list[CommitLink]:
        """Append the links not already stored at the same or a higher confidence."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(self.path, consequence="no link was added"):
            known = self._load()
            new: list[CommitLink] = []
            now = time.time()
            for link in links:
                old = known.get(link.key)
                if old is not None and _RANK.get(old.confidence, 0) >= _RANK.get(link.confidence, 0):
                    continue
                if not link.linked_at:
                    link = replace(link, linked_at=now)
                new.append(link)
            if new:
                data = "".join(json.dumps(item.to_json(), ensure_ascii=False) + "\n" for item in new)
                with open(self.path, "a", encoding="utf-8") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                    st = os.fstat(fh.fileno())
                # Under the lock nobody else appended: the cache takes our lines instead of a
                # re-read of the whole file at the next call (an import adds links session by session).
                for link in new:
                    old = known.get(link.key)
                    if old is None or _RANK.get(link.confidence, 0) >= _RANK.get(old.confidence, 0):
                        known[link.key] = link
                self._cache_key = (st.st_mtime_ns, st.st_size)
            return new

    def for_commit(self, commit: str, project_id: str | None = None) -> list[CommitLink]:
        """Links of a commit (full oid, or a prefix of 7+), best first."""
        found = [
            item
            for item in self._load().values()
            if (item.commit == commit or (len(commit) >= 7 and item.commit.startswith(commit)))
            and (project_id is None or item.project_id == project_id)
        ]
        return _best_first(found)

    def for_session(self, session_id: str) -> list[CommitLink]:
        return sorted(
            (item for item in self._load().values() if item.session_id == session_id), key=lambda item: item.turn
        )

    def by_commit(self, project_id: str | None = None) -> dict[str, CommitLink]:
        """The best link of every commit, for showing a log page with its turns."""
        out: dict[str, CommitLink] = {}
        for link in _best_first(self._load().values()):
            if project_id is not None and link.project_id != project_id:
                continue
            out.setdefault(link.commit, link)
        return out
