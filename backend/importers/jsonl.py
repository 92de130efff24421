"""The generic opmem JSONL format: one message a line, any number of sessions per file.

    {"session": "s1", "id": "m1", "role": "user", "speaker": "Ann", "content": "hi",
     "timestamp": "2025-01-02T03:04:05Z", "title": "Greeting", "parent": null}

Required: session, id, role (user|assistant|system|tool), content. Optional: speaker (kept as
metadata.speaker), timestamp (ISO-8601, or epoch seconds/milliseconds), title (the session's
title; the last one given wins), parent (an earlier id of the same session; default: the previous
non-tool message of that session, so plain logs are one chain), name and input (tool calls),
metadata (an object kept on the node). A tool message belongs to the assistant message it
follows (or its `parent`). docs/import-formats.md documents the same.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..model import Node
from .base import UNSTORED, ImportedSession, ImportFormatError, ImportReport, LineImporter, discover_files
from .record_values import load_object, parse_time
from .shape import Shape

ROLES = ("user", "assistant", "system", "tool")


@dataclass(frozen=True, slots=True)
class Message:
    """One validated line."""

    session: str
    id: str
    role: str
    content: str
    speaker: str | None = None
    timestamp: float = 0.0
    title: str | None = None
    parent: str | None = None
    name: str | None = None
    input: Any = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def parse_line(line: str | bytes) -> Message:
    """Validate one line; anything malformed raises ImportFormatError saying what is wrong."""
    data = load_object(line)
    session = _text(data, "session", required=True)
    ident = _text(data, "id", required=True)
    role = data.get("role")
    if role not in ROLES:
        raise ImportFormatError(f"'role' must be one of {', '.join(ROLES)}, got {_show(role)}")
    content = data.get("content")
    if not isinstance(content, str):
        raise ImportFormatError(f"'content' must be a string, got {type(content).__name__}")
    stamp = data.get("timestamp")
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, (str, int, float))):
        raise ImportFormatError("'timestamp' must be an ISO-8601 string or epoch seconds")
    when = _timestamp(stamp)
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise ImportFormatError("'metadata' must be an object")
    return Message(
        session=session,
        id=ident,
        role=role,
        content=content,
        speaker=_text(data, "speaker"),
        timestamp=when,
        title=_text(data, "title"),
        parent=_text(data, "parent"),
        name=_text(data, "name"),
        input=data.get("input"),
        metadata=MappingProxyType(dict(metadata or {})),
    )


def _timestamp(value: Any) -> float:
    if value is None or value == "":
        return 0.0
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ImportFormatError(f"'timestamp' is not ISO-8601: {_show(value)}") from None
    elif not math.isfinite(value):
        raise ImportFormatError("'timestamp' must be a finite number")
    return parse_time(value)


def _text(data: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None or value == "":
        if required:
            raise ImportFormatError(f"missing '{key}'")
        return None
    if not isinstance(value, str):
        raise ImportFormatError(f"'{key}' must be a string, got {type(value).__name__}")
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def format_line(message: Message) -> str:
    """The line `parse_line` reads back as `message` (the export direction)."""
    data: dict[str, Any] = {"session": message.session, "id": message.id, "role": message.role}
    if message.speaker is not None:
        data["speaker"] = message.speaker
    data["content"] = message.content
    if message.timestamp:
        data["timestamp"] = message.timestamp
    if message.title is not None:
        data["title"] = message.title
    if message.parent is not None:
        data["parent"] = message.parent
    if message.name is not None:
        data["name"] = message.name
    if message.input is not None:
        data["input"] = message.input
    if message.metadata:
        data["metadata"] = dict(message.metadata)
    return json.dumps(data, ensure_ascii=False)


class _Session:
    def __init__(self, native_id: str) -> None:
        self.native_id = native_id
        self.title = ""
        self.roles: dict[str, str] = {}
        self.last_chain: str | None = None
        self.last_assistant: str | None = None
        self.out: list[Node] = []
        self.dirty = True


class JsonlParser:
    """Stateful line parser: feed lines (also ones appended later), take what is new."""

    def __init__(self, path: Path | str, report: ImportReport) -> None:
        self.path = Path(path)
        self.report = report
        self.sessions: dict[str, _Session] = {}
        self.lines = 0

    def feed_line(self, line: str | bytes, line_no: int | None = None) -> None:
        self.lines = line_no if line_no is not None else self.lines + 1
        if not line.strip():
            return
        try:
            self.feed_message(parse_line(line))
        except ImportFormatError as exc:
            self.report.warn(self.path, self.lines, str(exc))

    def feed_message(self, message: Message) -> None:
        session = self.sessions.get(message.session)
        if session is None:
            session = self.sessions[message.session] = _Session(message.session)
        if message.id in session.roles:
            raise ImportFormatError(f"duplicate id {message.id!r} in session {message.session!r}")
        if message.parent is not None and message.parent not in session.roles:
            raise ImportFormatError(f"parent {message.parent!r} is not an earlier id of session {message.session!r}")
        metadata = dict(message.metadata)
        if message.speaker is not None:
            metadata["speaker"] = message.speaker
        role, called_by = message.role, None
        if role == "tool":
            caller = message.parent if message.parent is not None else session.last_assistant
            if caller is None or session.roles.get(caller) != "assistant":
                self.report.warn(
                    self.path, self.lines, f"tool message {message.id!r} follows no assistant message: kept as system"
                )
                role = "system"
                metadata["role_given"] = "tool"
            else:
                called_by = caller
        parent = (
            called_by
            if called_by is not None
            else (message.parent if message.parent is not None else session.last_chain)
        )
        node = Node(
            id=message.id,
            seq=UNSTORED,
            role=role,
            content=message.content,
            parent_id=parent,
            called_by=called_by,
            name=message.name,
            input=message.input,
            created_at=message.timestamp,
            metadata=MappingProxyType(metadata),
        )
        session.roles[message.id] = role
        if role != "tool":
            session.last_chain = message.id
        if role == "assistant":
            session.last_assistant = message.id
        if message.title is not None and message.title != session.title:
            session.title = message.title
            session.dirty = True
        session.out.append(node)

    def take(self, *, final: bool = True, idle: bool = False) -> list[ImportedSession]:
        sessions: list[ImportedSession] = []
        for session in self.sessions.values():
            if not session.out and not session.dirty:
                continue
            sessions.append(
                ImportedSession(
                    source=JsonlImporter.source,
                    native_id=session.native_id,
                    source_file=str(self.path),
                    nodes=tuple(session.out),
                    title=session.title,
                    head=session.last_chain,
                    extra={"title_source": "user"} if session.title else {},
                )
            )
            session.out = []
            session.dirty = False
        return sessions

    def holding(self) -> bool:
        return False  # every line is a whole message


class JsonlImporter(LineImporter):
    name = "jsonl"
    source = "jsonl"
    label = "JSONL"
    coding = False
    discoverable = False
    rank = 9
    shape = Shape(("*.jsonl",), records=(("session", "id", "role", "content"),))
    reads = "one message a line: session, id, role, content (speaker, timestamp, title, parent, name, input)"
    looks_for = "*.jsonl"

    def default_paths(self) -> list[Path]:
        """The generic format has no home of its own: paths are always given."""
        return []

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return discover_files(paths, "*.jsonl", given="*")

    def open_parser(self, path: Path, report: ImportReport) -> JsonlParser:
        return JsonlParser(path, report)

    def is_complete(self, path: Path) -> bool:
        return True  # a line is a whole message: nothing is ever held back

    def parse_file(self, path: Path, report: ImportReport, *, final: bool | None = None) -> list[ImportedSession]:
        return super().parse_file(path, report, final=True)
