"""Importers of stores read whole on every change: SQLite databases, JSON task folders, JSON files.

Such a store is not an append-only log, so these importers re-read it whole; ingest keeps that
idempotent (deterministic ids: nothing new, nothing written) and incremental (a grown session
adds only its new nodes).

A store being written while it is read may hold a reply still being streamed. A node is written
once and never rewritten, so `SessionBuilder` marks such nodes as not done; unless the read is
final, the first node not done and every node after it are held back until a later read finds
them finished.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..model import Node, OpmemError
from . import base
from .agent_db import AgentDbError, DbStamp, db_stamp, is_sqlite
from .base import UNSTORED, ImportedSession, Importer, ImportReport, is_final
from .record_values import as_text

INJECTED_PREFIXES = (
    "<environment_details>",
    "<system-reminder>",
    "<user-memory-input>",
    "<session_context>",
    "<environment_context>",
    "<user_instructions>",
    "<context>",
)


def injected(text: str) -> bool:
    """Text the agent added to a user message (environment, reminders): a system node."""
    return text.lstrip().startswith(INJECTED_PREFIXES)


_LEADING_BLOCK = re.compile(r"\s*<(" + "|".join(p[1:-1] for p in INJECTED_PREFIXES) + r")>.*?</\1>\s*", re.S)


def split_injected(text: str) -> tuple[str, str]:
    """(the leading blocks the agent added, what the user wrote after them)."""
    added, rest = [], text
    while True:
        match = _LEADING_BLOCK.match(rest)
        if match is None:
            break
        added.append(match.group(0).strip())
        rest = rest[match.end() :]
    return "\n".join(added), rest if added else text


class SessionBuilder:
    """The nodes of one session in order: the chain (user/assistant/system) and tool nodes under their caller."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.ids: set[str] = set()
        self.tip: str | None = None
        self.first_open: int | None = None  # index of the first node not done
        self.model = ""

    def _id(self, wanted: str) -> str:
        sid, n = wanted, 2
        while sid in self.ids:
            sid = f"{wanted}#{n}"
            n += 1
        self.ids.add(sid)
        return sid

    def _add(self, node: Node, done: bool) -> str:
        if not done and self.first_open is None:
            self.first_open = len(self.nodes)
        self.nodes.append(node)
        return node.id

    def chain(
        self,
        source_id: str,
        role: str,
        content: Any,
        *,
        name: str | None = None,
        created_at: float = 0.0,
        metadata: Mapping[str, Any] | None = None,
        parent: str | bool | None = True,
        done: bool = True,
    ) -> str:
        """A chain node after the current tip (parent=None: a root; a str: that node); it becomes the tip."""
        sid = self._id(source_id)
        parent_id = self.tip if parent is True else (None if parent is False else parent)
        text = content if isinstance(content, str) else as_text(content)
        meta = MappingProxyType({k: v for k, v in (metadata or {}).items() if v not in (None, "", [], {})})
        self._add(Node(sid, UNSTORED, role, text, parent_id, None, name, None, (), created_at, meta), done)
        if role == "assistant" and name:
            self.model = name
        self.tip = sid
        return sid

    def tool(
        self,
        source_id: str,
        owner: str,
        name: str,
        input: Any,
        content: Any,
        *,
        created_at: float = 0.0,
        metadata: Mapping[str, Any] | None = None,
        done: bool = True,
    ) -> str:
        sid = self._id(source_id)
        text = content if isinstance(content, str) else as_text(content)
        meta = MappingProxyType({k: v for k, v in (metadata or {}).items() if v not in (None, "", [], {})})
        self._add(Node(sid, UNSTORED, "tool", text, owner, owner, name or "tool", input, (), created_at, meta), done)
        return sid

    def holding(self, final: bool) -> bool:
        return not final and self.first_open is not None

    def finished(self, final: bool) -> tuple[tuple[Node, ...], str | None]:
        """The nodes to write now and the head: all of them when final, else those before the first open one."""
        nodes = self.nodes if final or self.first_open is None else self.nodes[: self.first_open]
        head = next((n.id for n in reversed(nodes) if n.called_by is None), None)
        return tuple(nodes), head


def session(
    source: str,
    native_id: str,
    path: Path,
    builder: SessionBuilder,
    *,
    final: bool,
    title: str = "",
    title_source: str = "llm",
    cwd: str = "",
    model: str = "",
    git_branch: str = "",
    kind: str = "trunk",
    parent_native_id: str | None = None,
    parent_node: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> ImportedSession:
    nodes, head = builder.finished(final)
    more = dict(extra or {})
    if title:
        more["title_source"] = title_source
    if builder.holding(final):
        more["held_back"] = len(builder.nodes) - len(nodes)
    return ImportedSession(
        source=source,
        native_id=native_id,
        source_file=str(path),
        nodes=nodes,
        kind=kind,  # type: ignore[arg-type]
        title=title,
        cwd=cwd,
        model=model or builder.model,
        git_branch=git_branch,
        head=head,
        parent_native_id=parent_native_id,
        parent_node=parent_node,
        extra=MappingProxyType(more),
    )


class WholeImporter(Importer):
    """parse_file = read(): any unreadable file becomes one warning naming it, never a traceback."""

    def is_db(self, path: Path) -> bool:
        """The file is a SQLite database (its -wal counts as part of it)."""
        return False

    def parse_file(self, path: Path, report: ImportReport, *, final: bool | None = None) -> list[ImportedSession]:
        final = self.is_complete(path) if final is None else final
        try:
            return self.read(path, report, final=final)
        except AgentDbError as exc:
            report.warn(path, None, str(exc).removeprefix(f"{path}: "))
        except sqlite3.Error as exc:
            report.warn(path, None, f"cannot read the database: {exc}")
        except OSError as exc:
            report.warn(path, None, f"cannot read: {exc.strerror or exc}")
        except (ValueError, RecursionError) as exc:
            report.warn(path, None, f"not valid JSON ({exc})")
        except OpmemError as exc:
            report.warn(path, None, str(exc))
        return []

    @abstractmethod
    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]: ...

    def file_stat(self, path: Path) -> Any:
        return db_stamp(path) if self.is_db(path) else super().file_stat(path)

    def is_complete(self, path: Path) -> bool:
        if not self.is_db(path):
            return is_final(path, None)
        try:
            return time.time() - db_stamp(path).st_mtime_ns / 1e9 > base.LIVE_SECONDS
        except OSError:
            return True

    def companion(self, path: Path) -> Path | None:
        """The store file a changed `path` belongs to (a database's -wal), for `opmem watch`."""
        if path.name.endswith("-wal"):
            store = path.with_name(path.name[: -len("-wal")])
            return store if self.is_db(store) else None
        return None


def session_folders(
    paths: Iterable[Path | str],
    given: Iterable[str],
    markers: Iterable[str],
    keep: Callable[[Path], bool] = lambda folder: True,
) -> list[Path]:
    """Sessions that are folders: the folder of a file given by one of the `given` names, and
    under each folder given those holding a file matching one of `markers` (globs, shallow first)
    that `keep` accepts."""
    names = set(given)
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file() and path.name in names:
            found[path.parent] = None
        elif path.is_dir():
            for marker in markers:
                found.update(dict.fromkeys(f.parent for f in sorted(path.glob(marker)) if keep(f.parent)))
    return list(found)


def folder_stamp(path: Path) -> DbStamp:
    """A session folder whose files are rewritten in place: the sizes of its files and the newest
    mtime among them and it (import-state.json compares it as a file's stat)."""
    size, mtime = 0, os.stat(path).st_mtime_ns
    for item in path.iterdir():
        try:
            stat = item.stat()
        except OSError:
            continue
        if item.is_file():
            size += stat.st_size
            mtime = max(mtime, stat.st_mtime_ns)
    return DbStamp(size, mtime)


def load_json(path: Path) -> Any:
    """A whole JSON file; ValueError (a warning) when cut short or invalid."""
    data = path.read_bytes()
    if not data.strip():
        raise ValueError("empty file")
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} at line {exc.lineno} column {exc.colno}; cut short or damaged") from None


def json_lines(path: Path, report: ImportReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each line of a JSON-lines file read whole, in order; a line that
    is not a JSON object is a warning naming file:line, except a last line without its newline
    (still being written). A generator: the caller's own warnings stay in line order."""
    lines = path.read_bytes().split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            if number < len(lines):  # a last line without its newline is still being written
                report.warn(path, number, "not valid JSON; line skipped")
            continue
        if isinstance(record, dict):
            yield number, record
        else:
            report.warn(path, number, "expected a JSON object; line skipped")


def json_value(text: Any) -> Any:
    """A JSON column or field holding JSON text: its value (None when it is not JSON)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def sqlite_files(paths: Iterable[Path | str], names: Iterable[str]) -> list[Path]:
    """SQLite files named like one of `names` (globs) given or directly under the given folders."""
    found: dict[Path, None] = {}
    patterns = list(names)
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            if is_sqlite(path):
                found[path] = None
        elif path.is_dir():
            for pattern in patterns:
                for item in sorted(path.glob(pattern)):
                    if item.is_file() and is_sqlite(item):
                        found[item] = None
    return list(found)


def as_dict(value: Any) -> dict[str, Any]:
    """A record's field when it is a JSON object, else {} (stores of other agents drift)."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str:
    """A record's field when it is text, else ""."""
    return value if isinstance(value, str) else ""


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else as_text(value)
