"""What `opmem blame` hands out (blame.py makes them): frozen records the CLI, the TUI's blame view
and `--json` read."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TurnOrigin:
    """The session turn a commit came from."""

    session_id: str
    turn: int
    confidence: str  # high | low
    reason: str  # opmem | hash | message | paths
    head_id: str = ""  # the turn's last node, to open its branch
    prompt: str = ""  # the prompt's first line, redacted ("" when the session is gone)
    model: str = ""
    time: float = 0.0  # when the prompt was sent (0: unknown)


@dataclass(frozen=True, slots=True)
class BlameLine:
    line: int  # 1-based, in the file as it is now
    text: str  # the line's code (the user's file, not session text)
    commit: str | None  # None: not committed yet
    author: str
    commit_time: float
    origin: TurnOrigin | None  # None: not made by a session turn opmem knows

    def to_json(self) -> dict[str, object]:
        o = self.origin
        return {
            "line": self.line,
            "commit": self.commit,
            "session": o.session_id if o else None,
            "turn": o.turn if o else None,
            "prompt": o.prompt if o else None,
            "model": (o.model or None) if o else None,
            "time": iso8601(o.time) if o and o.time else None,
            "author": self.author,
            "commit_time": iso8601(self.commit_time) if self.commit_time else None,
            "confidence": o.confidence if o else None,
            "head_id": (o.head_id or None) if o else None,
            "code": self.text,
        }


@dataclass(frozen=True, slots=True)
class BlameReport:
    project_id: str
    path: str  # repo-relative, posix
    lines: tuple[BlameLine, ...]
    problems: tuple[str, ...] = ()  # e.g. a linked session that is no longer in the store


def iso8601(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
