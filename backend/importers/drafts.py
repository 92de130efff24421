"""Nodes under construction while a transcript is read, and the offset at which each became final.

Store node files are written once, but in an append-only transcript a node is not always
complete when its first record is read: a Codex tool node waits for its output record, a
Gemini message is re-appended when its tool results arrive. So every draft remembers the
byte offset of the record that *settled* it (after which no record can change it):

- ``parse_file(path, report, start_offset=N)`` returns only the nodes settled at or after N;
  the others were returned by an earlier parse of the same (append-only) file prefix and
  are still valid parent references. ``ImportedSession.extra["end_offset"]`` is where the
  next incremental parse starts.
- ``final=False`` (the file may still be written to): drafts still unsettled at the end of the
  file, and everything hanging below them, are held back instead of being frozen half-way; a
  later parse returns them once settled. ``final=True``: they are settled at the end of the
  file. ``final=None`` (the default, as in claude_code.py): final when the file has not been
  written to for LIVE_SECONDS.

A child is never returned before its parent: its effective offset is at least its parent's.

`LineParser` is the same thing kept alive for `opmem watch` (the protocol of
claude_code.ClaudeParser): feed_line() each appended line, take() what settled since the last
take, holding() while something is held back.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .base import ImportedNode, ImportFormatError

# A file written to within this many seconds may still be growing (same rule as claude_code.py).
LIVE_SECONDS = 30.0


def is_final(path: Path, final: bool | None) -> bool:
    """`final` if given, else whether `path` (a file, or a folder and its files) has been quiet for LIVE_SECONDS."""
    if final is not None:
        return final
    try:
        newest = path.stat().st_mtime
        if path.is_dir():
            for child in path.iterdir():
                newest = max(newest, child.stat().st_mtime)
    except OSError:
        return True
    return time.time() - newest > LIVE_SECONDS


@dataclass(slots=True)
class Draft:
    source_id: str
    role: str
    content: str = ""
    parent: str | None = None
    called_by: str | None = None
    name: str | None = None
    input: Any = None
    created_at: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)
    settled_at: int | None = None

    @property
    def settled(self) -> bool:
        return self.settled_at is not None


class DraftGraph:
    """Drafts in creation order (parents before children), with unique source ids."""

    def __init__(self) -> None:
        self.drafts: list[Draft] = []
        self.by_id: dict[str, Draft] = {}
        self.held: set[str] = set()  # filled by nodes(live=True)

    def unique_id(self, wanted: str | None, fallback: str) -> str:
        """`wanted` (a native id) if still free, else the synthetic `fallback`, else a suffixed one."""
        for candidate in (wanted, fallback):
            if candidate and candidate not in self.by_id:
                return candidate
        n = 2
        while f"{fallback}#{n}" in self.by_id:
            n += 1
        return f"{fallback}#{n}"

    def add(self, draft: Draft) -> Draft:
        if draft.source_id in self.by_id:
            raise ValueError(f"duplicate source id {draft.source_id!r}")  # a parser bug, not bad input
        self.drafts.append(draft)
        self.by_id[draft.source_id] = draft
        return draft

    def get(self, source_id: str | None) -> Draft | None:
        return self.by_id.get(source_id) if source_id else None

    @staticmethod
    def settle(draft: Draft | None, offset: int) -> None:
        if draft is not None and draft.settled_at is None:
            draft.settled_at = offset

    def nodes(
        self, *, end_offset: int, start_offset: int = 0, live: bool = False, skip: set[str] | None = None
    ) -> tuple[ImportedNode, ...]:
        """Nodes settled at or after start_offset (and not in `skip`); see the module docstring."""
        effective: dict[str, int | None] = {}  # None = held back
        out: list[ImportedNode] = []
        self.held = set()
        for d in self.drafts:
            own = d.settled_at if d.settled_at is not None else (None if live else end_offset)
            eff = own
            for ref in (d.parent, d.called_by):
                if ref is None or ref not in effective:
                    continue
                above = effective[ref]
                eff = None if above is None or eff is None else max(eff, above)
            effective[d.source_id] = eff
            if eff is None:
                self.held.add(d.source_id)
                continue
            if eff < start_offset or (skip is not None and d.source_id in skip):
                continue
            out.append(
                ImportedNode(
                    source_id=d.source_id,
                    role=d.role,
                    content=d.content,
                    parent=d.parent,
                    called_by=d.called_by,
                    name=d.name,
                    input=d.input,
                    created_at=d.created_at,
                    metadata=MappingProxyType(dict(d.metadata)),
                )
            )
        return tuple(out)

    def holding(self) -> bool:
        return any(d.settled_at is None for d in self.drafts)

    def visible_head(self, head: str | None) -> str | None:
        """`head`, or its nearest ancestor that was not held back by the last nodes() call."""
        seen: set[str] = set()
        while head is not None and head in self.held and head not in seen:
            seen.add(head)
            draft = self.by_id.get(head)
            head = draft.parent if draft is not None else None
        return head


# ---------------------------------------------------------------------------------------------
# small helpers shared by the parsers


def parse_time(value: Any) -> float:
    """ISO-8601 text or epoch seconds/milliseconds -> unix seconds; 0.0 when unknown."""
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        if not math.isfinite(number) or number <= 0:
            return 0.0
        return number / 1000.0 if number > 1e11 else number
    if not isinstance(value, str) or not value:
        return 0.0
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return 0.0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.timestamp()
    except (OverflowError, OSError, ValueError):
        return 0.0


def as_text(value: Any, _depth: int = 0) -> str:
    """Flatten message content (a string, a list of parts, a part) to plain text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if _depth > 20:
        return "[...]"  # absurdly nested content: not worth a RecursionError
    if isinstance(value, list):
        texts = [as_text(part, _depth + 1) for part in value]
        return "\n".join(t for t in texts if t)
    if isinstance(value, dict):
        for key in ("text", "output", "content"):
            inner = value.get(key)
            if isinstance(inner, (str, list)):
                return as_text(inner, _depth + 1)
        if value.get("type") in ("input_image", "image", "output_image") or "inlineData" in value:
            return "[image]"
        try:
            return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        except (ValueError, TypeError, RecursionError):
            return str(value)
    return str(value)


def count_images(value: Any) -> int:
    if not isinstance(value, list):
        return 0
    return sum(
        1
        for part in value
        if isinstance(part, dict) and (part.get("type") in ("input_image", "image") or "inlineData" in part)
    )


class LineParser:
    """The stateful line parser `opmem watch` keeps per file (the claude_code.py protocol).

    feed_line() the lines of a file from its start, in order; take() returns sessions holding
    the nodes that became final since the last take. Subclasses implement `_feed(text, offset,
    line)` (raising only ImportFormatError), `_session(...)` and, optionally, `_idle()`.
    """

    def __init__(self, path: Path | str, report: Any) -> None:
        self.path = Path(path)
        self.report = report
        self.offset = 0  # bytes fed so far
        self.line = 0
        self.taken_to = 0  # offset of the last take
        self.emitted: set[str] = set()

    @property
    def report(self) -> Any:
        return self._report

    @report.setter
    def report(self, value: Any) -> None:
        # watch hands a fresh report to each batch; a parser's reader warns into the same one.
        self._report = value
        reader = getattr(self, "reader", None)
        if reader is not None:
            reader.report = value

    def feed_line(self, line: str | bytes, line_no: int | None = None) -> None:
        raw = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
        start = self.offset
        self.offset += len(raw)
        self.line = line_no if line_no is not None else self.line + 1
        if not raw.strip():
            return
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            self.report.warn(self.path, self.line, f"line is not UTF-8 text ({exc.reason} at byte {exc.start})")
            return
        try:
            self._feed(text, start, self.line)
        except ImportFormatError as exc:
            self.report.warn(self.path, self.line, str(exc))
        except Exception as exc:  # a parser bug must not stop the rest of the file
            self.report.warn(self.path, self.line, f"unexpected {type(exc).__name__}: {exc}")

    def take(self, *, final: bool = True, idle: bool = False) -> list[Any]:
        """final: the file is complete, settle everything; idle: it has been quiet, settle what looks done."""
        if idle and not final:
            self._idle()
        sessions = self._sessions(end_offset=self.offset, start_offset=self.taken_to, live=not final, skip=self.emitted)
        self.taken_to = self.offset
        out = []
        for session in sessions:
            self.emitted.update(n.source_id for n in session.nodes)
            if session.nodes:
                out.append(session)
        return out

    def holding(self) -> bool:
        raise NotImplementedError

    def _feed(self, text: str, offset: int, line: int) -> None:
        raise NotImplementedError

    def _sessions(self, *, end_offset: int, start_offset: int, live: bool, skip: set[str] | None) -> list[Any]:
        raise NotImplementedError

    def _idle(self) -> None:
        pass


def feed_file(parser: LineParser, path: Path, *, json_lines: bool = True) -> bool:
    """Feed a whole file's lines to `parser`; False when it cannot be read (a warning is made).

    A last line without a newline is a record still being written unless it parses as JSON:
    it is left out, so the next read starts at it.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        parser.report.warn(path, None, f"cannot read: {exc.strerror or exc}")
        return False
    offset, size = 0, len(data)
    while offset < size:
        newline = data.find(b"\n", offset)
        if newline < 0:
            tail = data[offset:]
            if json_lines and tail.strip():
                try:
                    json.loads(tail)
                except (ValueError, RecursionError):
                    return True  # torn tail
            parser.feed_line(tail)
            return True
        parser.feed_line(data[offset : newline + 1])
        offset = newline + 1
    return True
