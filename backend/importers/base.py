"""What every importer is and produces; `ingest` (ingest.py) writes it to the store.

An importer reads one agent's session files into `ImportedSession`s whose nodes are
`model.Node`s, the store's own shape, with two differences until ingest writes them: ids are the
importer's source ids (native ids, or `file:line` where the format has none; ingest maps them to
node ids), and `seq` is UNSTORED. Parsers raise only ImportFormatError for a bad record; the
file-level code turns it into a warning naming file:line and goes on.
"""

from __future__ import annotations

import codecs
import json
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Protocol

from ..model import Node, OpmemError
from .shape import Probe, Shape, find_units

SessionKind = Literal["trunk", "subagent", "compaction", "fork"]
UNSTORED = -1  # the seq of a node no store has written yet
# A file written to within this many seconds may still be growing: its open tail is held back.
LIVE_SECONDS = 30.0


class ImportFormatError(OpmemError, ValueError):
    """A record that cannot be understood; the only error a line parser raises."""


@dataclass(frozen=True, slots=True)
class ImportedSession:
    source: str  # claude-code | codex | gemini | aider | openprogram | jsonl
    native_id: str
    source_file: str
    nodes: tuple[Node, ...]  # parents before children; ids are source ids
    kind: SessionKind = "trunk"
    title: str = ""
    cwd: str = ""
    model: str = ""
    git_branch: str = ""
    head: str | None = None  # source id of the current head; default: last chain node
    parent_native_id: str | None = None  # subagent / fork: the session it came from
    parent_node: str | None = None  # source id in the parent that spawned it
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
    mirror_pending: set[str] = field(default_factory=set)  # sessions whose turn commits are left to write
    unknown_records: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def warn(self, path: Path | str, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        self.warnings.append(f"{where}: {problem}")

    def unknown(self, record_type: str) -> None:
        self.unknown_records[record_type] = self.unknown_records.get(record_type, 0) + 1


def dated(imported: ImportedSession) -> ImportedSession:
    """`imported` with each undated node given the time of the dated node before it (the first
    dated one for those before it): a session's times come from its own messages, never from the
    moment of its import. A session with no time at all is left as it is."""
    times = [n.created_at for n in imported.nodes]
    if all(times) or not any(times):
        return imported
    last = next(t for t in times if t)
    nodes = []
    for node in imported.nodes:
        if node.created_at:
            last = node.created_at
            nodes.append(node)
        else:
            nodes.append(replace(node, created_at=last))
    return replace(imported, nodes=tuple(nodes))


class SessionParser(Protocol):
    """The stateful parser `opmem watch` keeps per file: fed the lines of a file from its start."""

    report: ImportReport

    def feed_line(self, line: str | bytes, line_no: int | None = None) -> None:
        """One line (a bad one becomes a warning naming file:line)."""

    def take(self, *, final: bool = True, idle: bool = False) -> list[ImportedSession]:
        """Sessions with the nodes that became final since the last take.

        final: the file is complete, settle everything; idle: it has been quiet, settle what looks done.
        """
        ...

    def holding(self) -> bool:
        """Something is held back until more lines (or an idle take) come."""
        ...


class Importer(ABC):
    """One agent's sessions: where they are, which files hold them, how to read one."""

    # What it is, declared once: the registry (registry.py) and every label table derive from these.
    name: ClassVar[str]  # the registry name: "claude"
    source: ClassVar[str]  # stored in meta.json: "claude-code"
    label: ClassVar[str]  # what users call the agent: "Claude Code"
    coding: ClassVar[bool] = True  # a coding agent (a session without tool calls is still no conversation)
    id_prefix: ClassVar[str] = ""  # of its session ids ("cc-<native id>"); "" : the source name
    aliases: ClassVar[tuple[str, ...]] = ()  # other names `opmem import` accepts
    discoverable: ClassVar[bool] = True  # it has default locations `opmem import` looks in
    live: ClassVar[bool] = True  # the agent keeps writing its sessions: `opmem watch` follows them
    rank: ClassVar[int] = 1  # lists show lower ranks first, then by label
    locations: ClassVar[tuple[str, ...]] = ()  # its default locations, as the docs show them
    shape: ClassVar[Shape]  # what one of its sessions looks like on disk (shape.py)
    reads: ClassVar[str] = ""  # what is read of a session, for docs/import-formats.md
    looks_for: ClassVar[str]  # what discover() finds, said when it finds nothing
    parses_apart: ClassVar[bool] = False  # parse_file reads nothing but files: a backlog's can run in a worker

    @abstractmethod
    def default_paths(self) -> list[Path]:
        """Where the agent keeps its sessions ([] when paths must be given)."""

    @abstractmethod
    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        """The session files (or folders) under `paths`, parents before their subagents."""

    @abstractmethod
    def parse_file(self, path: Path, report: ImportReport, *, final: bool | None = None) -> list[ImportedSession]:
        """One file (or session folder) whole. final=None: final when it has been quiet for LIVE_SECONDS."""

    def claims(self, probe: Probe) -> Path | None:
        """The session `probe`'s file marks (itself, or its folder) when it has this agent's shape, else None."""
        return self.shape.unit(probe.path) if self.shape.fits(probe) else None

    def find(self, paths: Iterable[Path | str]) -> list[Path]:
        """The sessions under `paths`: where the agent's own layout puts them (discover), and any
        file or folder of its shape at any depth, whatever the folders are called."""
        found = dict.fromkeys(self.discover(paths))
        found.update(dict.fromkeys(find_units(paths, [self])))
        return self.ordered(list(found))

    def ordered(self, files: list[Path]) -> list[Path]:
        """`files` in import order (an importer whose subagents name their parent puts parents first)."""
        return files

    def follows_lines(self, path: Path) -> bool:
        """Whether appended lines of `path` can be read on their own (else it is re-read whole)."""
        return False

    def open_parser(self, path: Path, report: ImportReport) -> SessionParser:
        raise OpmemError(f"{path}: {self.name} files are read whole, not line by line")

    def is_complete(self, path: Path) -> bool:
        """The file (or folder) has not been written to for LIVE_SECONDS."""
        return is_final(path, None)

    def file_stat(self, path: Path) -> Any:
        """What import-state.json compares (st_size, st_mtime_ns); a SQLite store counts its -wal in."""
        return os.stat(path)

    def companion(self, path: Path) -> Path | None:
        """The session file a changed `path` stands for (a database's -wal), else None."""
        return None

    def reread_interval(self, path: Path) -> float:
        """`opmem watch` re-reads a changed whole-file source at most this often (0: on every change)."""
        return 0.0


class LineImporter(Importer):
    """An importer of append-only logs: one stateful parser follows a file's lines."""

    empty_file: ClassVar[str] = ""  # the warning for a file without a single line ("": none)
    feeds_text: ClassVar[bool] = False  # its parser takes str lines as it takes bytes: decode a file once

    @abstractmethod
    def open_parser(self, path: Path, report: ImportReport) -> SessionParser: ...

    def follows_lines(self, path: Path) -> bool:
        return True

    def parse_file(self, path: Path, report: ImportReport, *, final: bool | None = None) -> list[ImportedSession]:
        final = is_final(path, final)
        parser = self.open_parser(path, report)
        lines = feed_file(parser, path, report, as_text=self.feeds_text, final=final)
        if lines == 0 and self.empty_file:
            report.warn(path, None, self.empty_file)
        return parser.take(final=final) if lines > 0 else []


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


def feed_file(
    parser: SessionParser, path: Path, report: ImportReport, *, as_text: bool = False, final: bool = False
) -> int:
    """Feed a whole file's lines to `parser`: how many (0: all blank; -1: unreadable, a warning is made).

    A last line without a newline is a record still being written unless it is a whole JSON
    value: it is left out, so the next read starts at it; in a `final` file (finished: quiet for
    LIVE_SECONDS) nothing will complete it, so it is a warning naming file:line, as a torn line
    in the middle is. as_text: the lines are fed as str, the
    file decoded once, when that decodes every line as json.loads would (else as bytes).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        report.warn(path, None, f"cannot read: {exc.strerror or exc}")
        return -1
    if not data.strip():
        return 0
    text = _as_text(data) if as_text else None
    lines: str | bytes = data if text is None else text
    newline: str | bytes = b"\n" if text is None else "\n"
    start, number, size = 0, 0, len(lines)
    while start < size:
        end = lines.find(newline, start)  # type: ignore[arg-type]
        line = lines[start:] if end < 0 else lines[start : end + 1]
        number += 1
        if text is not None and line.isspace():
            line = line.encode()  # str.isspace also holds for \x1c or U+00A0: the parser skips what it did
        if end >= 0 or _is_json(line):
            parser.feed_line(line, number)
        elif final and line.strip():
            report.warn(path, number, "the last line is cut off (no newline, not a whole JSON record): left out")
        if end < 0:
            break
        start = end + 1
    return number


def _as_text(data: bytes) -> str | None:
    """`data` decoded, when json.loads decodes each of its lines the same way: valid UTF-8 with no
    NUL (a line starting with one reads as UTF-16/32) and no BOM (dropped at a line's start)."""
    if b"\x00" in data or codecs.BOM_UTF8 in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # bad UTF-8 on some line: per line, its warning names that line
        return None


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


def discover_files(paths: Iterable[Path | str], pattern: str, *, given: str | None = None) -> list[Path]:
    """Files matching `pattern` under each folder of `paths` (sorted), and each file given whose
    name matches `given` (default: `pattern`)."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            if path.match(given or pattern):
                found[path] = None
        elif path.is_dir():
            for item in sorted(path.rglob(pattern)):
                if item.is_file():
                    found[item] = None
    return list(found)


def glob_files(paths: Iterable[Path | str], patterns: Iterable[str], *, suffix: str = ".jsonl") -> list[Path]:
    """Each file given whose name ends with `suffix`, and under each folder given the files that
    match one of `patterns` (globs relative to it: an agent's own layout, a level or two deep)."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file() and path.suffix == suffix:
            found[path] = None
        elif path.is_dir():
            for pattern in patterns:
                found.update(dict.fromkeys(sorted(p for p in path.glob(pattern) if p.is_file())))
    return list(found)
