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
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator

from .base import ImportedNode

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

    def settle_all(self, offset: int) -> None:
        for draft in self.drafts:
            if draft.settled_at is None:
                draft.settled_at = offset

    def nodes(self, *, end_offset: int, start_offset: int = 0, live: bool = False) -> tuple[ImportedNode, ...]:
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
            if eff < start_offset:
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
        moment = moment.replace(tzinfo=timezone.utc)
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


@dataclass(frozen=True, slots=True)
class Line:
    offset: int  # byte offset of the line's first byte
    number: int  # 1-based
    text: str


def read_lines(path: Path) -> tuple[list[Line | tuple[int, int, str]], int]:
    """The lines of a UTF-8 text file with their byte offsets, and the offset where reading stopped.

    A last line without a newline that is not valid JSON is a record still being written:
    it is left out and `end` points at its start, so the next incremental parse rereads it.
    A line that is not UTF-8 comes back as (offset, number, problem) for the caller to report.
    """
    data = path.read_bytes()
    out: list[Line | tuple[int, int, str]] = []
    offset = 0
    number = 0
    size = len(data)
    while offset < size:
        newline = data.find(b"\n", offset)
        raw = data[offset:] if newline < 0 else data[offset:newline]
        number += 1
        if newline < 0 and raw.strip():
            try:
                json.loads(raw)
            except (ValueError, RecursionError):
                return out, offset  # torn tail
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.append((offset, number, f"line is not UTF-8 text ({exc.reason} at byte {exc.start})"))
        else:
            if text.strip():
                out.append(Line(offset, number, text.rstrip("\r")))
        offset = size if newline < 0 else newline + 1
    return out, size
