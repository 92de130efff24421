"""The normalized shape every importer produces; `ingest` (in ingest.py) writes it to the store.

An importer module exposes:
    SOURCE: str                                  e.g. "claude-code"
    default_paths() -> list[Path]                where the agent keeps its sessions
    discover(paths) -> list[Path]                the session files under those paths
    parse_file(path, report) -> list[ImportedSession]
A line parser raises only ImportFormatError; parse_file turns that into a warning on `report`
naming file:line and goes on with the rest of the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ..model import OpmemError

SessionKind = Literal["trunk", "subagent", "compaction", "fork"]


class ImportFormatError(OpmemError, ValueError):
    """A record that cannot be understood; the only error a line parser raises."""


@dataclass(frozen=True, slots=True)
class ImportedNode:
    source_id: str  # native id, unique within its session (synthetic file:line where none)
    role: str  # user | assistant | tool | system
    content: str = ""
    parent: str | None = None  # source_id of the conversation parent; None for a root
    called_by: str | None = None  # tools: source_id of the assistant node that called them
    name: str | None = None  # tool name, or model for assistant nodes
    input: Any = None  # tool arguments
    created_at: float = 0.0  # unix seconds
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class ImportedSession:
    source: str  # claude-code | codex | gemini | aider | openprogram | jsonl
    native_id: str
    source_file: str
    nodes: tuple[ImportedNode, ...]  # parents before children
    kind: SessionKind = "trunk"
    title: str = ""
    cwd: str = ""
    model: str = ""
    git_branch: str = ""
    head: str | None = None  # source_id of the current head; default: last chain node
    parent_native_id: str | None = None  # subagent / fork: the session it came from
    parent_node: str | None = None  # source_id in the parent that spawned it
    aliases: tuple[str, ...] = ()  # native ids earlier versions gave this session
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(slots=True)
class ImportReport:
    """Collected while importing; shown as the summary table."""

    sessions: int = 0
    new_sessions: int = 0
    turns: int = 0
    nodes: int = 0
    skipped: int = 0
    touched: set[str] = field(default_factory=set)  # sessions that got new nodes or meta
    unknown_records: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def warn(self, path: Path | str, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        self.warnings.append(f"{where}: {problem}")

    def unknown(self, record_type: str) -> None:
        self.unknown_records[record_type] = self.unknown_records.get(record_type, 0) + 1
