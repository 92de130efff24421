"""The core.md files as the app shows them: which exist, their text and size, and the turn a
line's pointer leads to.

A core line ends with `↪ session:<id>` (a short id: a unique prefix, backend/session_pointers); the turn is found by matching the line back to the
record it was written from (core.py's own wording): an event of that session on that day with
that summary, or an edge of that session with that relation between those names. A line whose
record is gone (or a file edited by hand) still names its session: the target then has no turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..model import SESSION_ID_RE, OpmemError
from .core import CORE_BUDGET, NAME_CHARS, SUMMARY_CHARS, clean, core_path
from .store import MemoryStore

POINTER = "  ↪ session:"
_EVENT_LINE = re.compile(r"· (\d{4}-\d{2}-\d{2}) (.*)")
_FACT_LINE = re.compile(r"· (.*?) ──(.+?)──► (.*)")
MAX_CORE_READ = 64 * 1024  # a core.md is 2 KB; anything past this is not one


@dataclass(frozen=True, slots=True)
class CoreFile:
    """One core.md: the global one (project_id "") or a project's."""

    project_id: str
    label: str  # "global" or the project's name
    path: Path


@dataclass(frozen=True, slots=True)
class CoreText:
    file: CoreFile
    text: str  # as read (decoded with replacement); "" when the file does not exist yet
    size: int  # bytes on disk
    budget: int = CORE_BUDGET
    exists: bool = True
    stamp: tuple[int, int] = (0, 0)  # (mtime_ns, size): changes when the file does


@dataclass(frozen=True, slots=True)
class CoreLineTarget:
    """Where a core line points: its session and, when the record is found, the turn and nodes."""

    session_id: str
    turn: int | None = None
    node_ids: tuple[str, ...] = ()


def core_files(memory_root: Path, project_names: Mapping[str, str]) -> list[CoreFile]:
    """The global core.md and every project core.md present, the global one first."""
    files = [CoreFile("", "global", core_path(memory_root))]
    for project_id, name in sorted(project_names.items(), key=lambda item: item[1].casefold()):
        path = core_path(memory_root, project_id)
        if path.is_file():
            files.append(CoreFile(project_id, name or project_id, path))
    return files


def core_stamp(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (0, 0)
    return (info.st_mtime_ns, info.st_size)


def read_core(file: CoreFile) -> CoreText:
    """The file's text (at most MAX_CORE_READ bytes of it); a missing file reads as empty."""
    try:
        with open(file.path, "rb") as handle:
            data = handle.read(MAX_CORE_READ + 1)
    except FileNotFoundError:
        return CoreText(file, "", 0, exists=False)
    except OSError as exc:
        raise OpmemError(f"{file.path}: cannot read ({exc.strerror or exc})") from None
    size = core_stamp(file.path)[1] or len(data)
    return CoreText(file, data[:MAX_CORE_READ].decode("utf-8", "replace"), size, stamp=core_stamp(file.path))


def line_pointer(line: str) -> tuple[str, str] | None:
    """(text before the pointer, session id) of a content line; None for any other line."""
    text, sep, session_id = line.rstrip("\n").rpartition(POINTER)
    if not sep or not SESSION_ID_RE.fullmatch(session_id.strip()):
        return None
    return text, session_id.strip()


def line_target(memory: MemoryStore, line: str, session_id: str | None = None) -> CoreLineTarget | None:
    """The session and, when its record is found, the turn a core line points at. `session_id`:
    the whole id the pointer's short one names (backend/naming resolves it); default, as written."""
    pointer = line_pointer(line)
    if pointer is None:
        return None
    text, session_id = pointer[0], session_id or pointer[1]
    event = _EVENT_LINE.fullmatch(text)
    if event is not None:
        found = _event_target(memory, session_id, event.group(1), event.group(2))
        if found is not None:
            return found
    fact = _FACT_LINE.fullmatch(text)
    if fact is not None:
        found = _fact_target(memory, session_id, *fact.groups())
        if found is not None:
            return found
    return CoreLineTarget(session_id)


def _event_target(memory: MemoryStore, session_id: str, day: str, summary: str) -> CoreLineTarget | None:
    try:
        start = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None
    end = start + timedelta(days=1)
    page = memory.timeline(since=start.timestamp(), until=end.timestamp(), limit=None)
    for ev in page.events:
        prov = ev.provenance
        if prov.session_id == session_id and clean(ev.summary, SUMMARY_CHARS) == summary:
            return CoreLineTarget(session_id, prov.turn, prov.node_ids)
    return None


def _fact_target(
    memory: MemoryStore, session_id: str, source: str, relation: str, target: str
) -> CoreLineTarget | None:
    edges = memory.edges(relations={relation}, limit=None)
    candidates = [g for g in edges if g.edge.provenance.session_id == session_id]
    names = memory.entity_refs({g.source for g in candidates} | {g.target for g in candidates})
    for g in candidates:
        if clean(names[g.source].name, NAME_CHARS) == source and clean(names[g.target].name, NAME_CHARS) == target:
            prov = g.edge.provenance
            return CoreLineTarget(session_id, prov.turn, prov.node_ids)
    return None


BRIEF_MARK = "[Project · "


def opening_core(files: Sequence[CoreFile], here: str = "") -> CoreFile | None:
    """The core.md a first look opens on: the project `here` (an id) when it has one, else the
    first project whose core.md holds a brief (a project's stack, commands, state), else the
    first file (the global one)."""
    projects = [file for file in files if file.project_id]
    for file in projects:
        if here and file.project_id == here:
            return file
    for file in projects:
        if BRIEF_MARK in read_core(file).text:
            return file
    return files[0] if files else None
