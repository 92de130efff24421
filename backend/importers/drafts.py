"""Nodes under construction while a transcript is read, and the offset at which each became final.

Store node files are written once, but in an append-only transcript a node is not always
complete when its first record is read: a Codex tool node waits for its output record, a
Gemini message is re-appended when its tool results arrive. So every draft remembers the
byte offset of the record that *settled* it (after which no record can change it):

- a take returns only the nodes settled since the last take; the others were returned
  earlier and are still valid parent references. ``ImportedSession.extra["end_offset"]`` is
  where the next read starts.
- ``final=False`` (the file may still be written to): drafts still unsettled at the end of the
  file, and everything hanging below them, are held back instead of being frozen half-way; a
  later take returns them once settled. ``final=True``: they are settled at the end of the file.

A child is never returned before its parent: its effective offset is at least its parent's.
`LineParser` is the stateful parser `opmem watch` keeps per file (base.SessionParser).
"""

from __future__ import annotations

from dataclasses import MISSING, Field, field, fields, make_dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..model import Node
from .base import UNSTORED, ImportedSession, ImportFormatError, ImportReport


def _freeze(d: Draft) -> Node:
    metadata = MappingProxyType(dict(d.metadata))
    return Node(
        d.id, UNSTORED, d.role, d.content, d.parent_id, d.called_by, d.name, d.input, d.reads, d.created_at, metadata
    )


def _open_field(f: Field[Any]) -> tuple[str, Any, Any]:
    if f.name == "metadata":
        return ("metadata", dict[str, Any], field(default_factory=dict, kw_only=True))
    if f.default is MISSING:
        return (f.name, f.type, field(kw_only=f.name not in ("id", "role")))
    return (f.name, f.type, field(default=f.default, kw_only=f.name != "content"))


# A node still open to change: model.Node's own fields, generated from it and mutable (seq
# aside: the store gives it), plus the offset of the record that settled it (None: still open).
# freeze() makes the Node.
Draft = make_dataclass(
    "Draft",
    [
        *(_open_field(f) for f in fields(Node) if f.name != "seq"),
        ("settled_at", int | None, field(default=None, kw_only=True)),
    ],
    namespace={
        "settled": property(lambda self: self.settled_at is not None),
        "freeze": _freeze,
        "__module__": __name__,
    },
    slots=True,
)


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
        if draft.id in self.by_id:
            raise ValueError(f"duplicate source id {draft.id!r}")  # a parser bug, not bad input
        self.drafts.append(draft)
        self.by_id[draft.id] = draft
        return draft

    def get(self, source_id: str | None) -> Draft | None:
        return self.by_id.get(source_id) if source_id else None

    @staticmethod
    def settle(draft: Draft | None, offset: int) -> None:
        if draft is not None and draft.settled_at is None:
            draft.settled_at = offset

    def nodes(
        self, *, end_offset: int, start_offset: int = 0, live: bool = False, skip: set[str] | None = None
    ) -> tuple[Node, ...]:
        """Nodes settled at or after start_offset (and not in `skip`); see the module docstring."""
        effective: dict[str, int | None] = {}  # None = held back
        out: list[Node] = []
        self.held = set()
        for d in self.drafts:
            eff = d.settled_at if d.settled_at is not None else (None if live else end_offset)
            for ref in (d.parent_id, d.called_by):
                if ref is None or ref not in effective:
                    continue
                above = effective[ref]
                eff = None if above is None or eff is None else max(eff, above)
            effective[d.id] = eff
            if eff is None:
                self.held.add(d.id)
            elif eff >= start_offset and (skip is None or d.id not in skip):
                out.append(d.freeze())
        return tuple(out)

    def holding(self) -> bool:
        return any(d.settled_at is None for d in self.drafts)

    def visible_head(self, head: str | None) -> str | None:
        """`head`, or its nearest ancestor that was not held back by the last nodes() call."""
        seen: set[str] = set()
        while head is not None and head in self.held and head not in seen:
            seen.add(head)
            draft = self.by_id.get(head)
            head = draft.parent_id if draft is not None else None
        return head

    def last_model(self) -> str:
        """The model named by the newest assistant node."""
        for draft in reversed(self.drafts):
            if draft.role == "assistant" and draft.name:
                return draft.name
        return ""


class LineParser:
    """The stateful line parser `opmem watch` keeps per file (base.SessionParser).

    feed_line() the lines of a file from its start, in order; take() returns sessions holding
    the nodes that became final since the last take. Subclasses implement `_feed(text, offset,
    line)` (raising only ImportFormatError), `_sessions(...)`, `holding()` and, optionally, `_idle()`.
    """

    def __init__(self, path: Path | str, report: ImportReport) -> None:
        self.path = Path(path)
        self.report = report
        self.offset = 0  # bytes fed so far
        self.line = 0
        self.taken_to = 0  # offset of the last take
        self.emitted: set[str] = set()

    def feed_line(self, line: str | bytes, line_no: int | None = None) -> None:
        raw = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
        start = self.offset
        self.offset += len(raw)
        self.line = line_no if line_no is not None else self.line + 1
        if not raw or raw.isspace():
            return
        try:
            text = raw.decode("utf-8")  # the line end stays: JSON and the parsers ignore it
        except UnicodeDecodeError as exc:
            self.report.warn(self.path, self.line, f"line is not UTF-8 text ({exc.reason} at byte {exc.start})")
            return
        try:
            self._feed(text, start, self.line)
        except ImportFormatError as exc:
            self.report.warn(self.path, self.line, str(exc))
        except Exception as exc:  # a parser bug: said on this line, the rest of the file still read
            self.report.warn(self.path, self.line, f"unexpected {type(exc).__name__}: {exc}")

    def take(self, *, final: bool = True, idle: bool = False) -> list[ImportedSession]:
        if idle and not final:
            self._idle()
        sessions = self._sessions(end_offset=self.offset, start_offset=self.taken_to, live=not final, skip=self.emitted)
        self.taken_to = self.offset
        out = []
        for session in sessions:
            self.emitted.update(n.id for n in session.nodes)
            if session.nodes:
                out.append(session)
        return out

    def holding(self) -> bool:
        raise NotImplementedError

    def _feed(self, text: str, offset: int, line: int) -> None:
        raise NotImplementedError

    def _sessions(
        self, *, end_offset: int, start_offset: int, live: bool, skip: set[str] | None
    ) -> list[ImportedSession]:
        raise NotImplementedError

    def _idle(self) -> None:
        pass
