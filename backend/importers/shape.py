"""What a session of an agent looks like on disk, and finding sessions by that shape at any depth.

Each importer declares a `Shape` (its `shape` class attribute): the names of the file that marks
a session, the keys one of its first records holds (JSON lines) or the document holds (a JSON
file), or the tables a SQLite store has. `find_units` walks the folders it is given, whatever
they are called, and asks each importer whether a file is one of its sessions (`Importer.claims`);
each file is read at most once (`Probe`), however many importers ask.

A key condition is ``key`` (present), ``!key`` (absent), ``key=value`` (equal, as text) or
``key*=part`` (the value contains it); a table condition is ``table`` or ``table.column``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..model import OpmemError
from .agent_db import open_agent_db, tables

if TYPE_CHECKING:
    from .base import Importer

HEAD_BYTES = 1 << 20  # the first records of a JSON-lines file: enough for a long first line
HEAD_RECORDS = 40
MAX_JSON_BYTES = 64 << 20  # a JSON document is parsed whole up to this size
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", ".hg", ".svn", ".tox"})
SQLITE_MAGIC = b"SQLite format 3\x00"

Condition = tuple[str, ...]  # all must hold


@dataclass(frozen=True, slots=True)
class Shape:
    """One agent's session as found on disk (see the module docstring for the conditions)."""

    names: tuple[str, ...]  # the marking file: a name glob ("*.jsonl") or a tail ("session/*/*.json")
    records: tuple[Condition, ...] = ()  # any one holds in one of the first records / the document
    tables: tuple[Condition, ...] = ()  # any one holds in a SQLite database
    starts: str = ""  # a text file: its first bytes
    folder: bool = False  # the session is the folder holding the marking file
    # a fork writing another agent's format: a folder of the path is named so (its sessions
    # differ in nothing else); such a session is this importer's, not the other's
    within: tuple[str, ...] = ()
    also: tuple[str, ...] = ()  # other files of a session, read when present (for the docs)

    def describe(self) -> str:
        """One line for docs/import-formats.md."""
        parts = [" or ".join(f"`{n}`" for n in self.names)]
        if self.records:
            parts.append("with " + " or ".join("{" + ", ".join(c) + "}" for c in self.records))
        if self.tables:
            parts.append("tables " + " or ".join("{" + ", ".join(c) + "}" for c in self.tables))
        if self.starts:
            parts.append(f"starting `{self.starts}`")
        if self.folder:
            parts.append("(the folder holding it is the session)")
        if self.also:
            parts.append("beside it " + ", ".join(f"`{n}`" for n in self.also))
        if self.within:
            parts.append("in a folder named " + " or ".join(f"`{n}`" for n in self.within))
        return " ".join(parts)

    def named(self, path: Path) -> bool:
        return any(_name_fits(path, pattern) for pattern in self.names)

    def fits(self, probe: Probe) -> bool:
        """The file has this shape (its name, then its content)."""
        if not self.named(probe.path):
            return False
        if self.within and not any(fnmatch.fnmatchcase(p, w) for p in probe.path.parts[:-1] for w in self.within):
            return False
        if probe.is_sqlite:
            return any(all(probe.has_table(t) for t in cond) for cond in self.tables)
        if self.starts:
            return probe.head.startswith(self.starts.encode())
        if self.records:
            return any(_holds(record, cond) for record in probe.records() for cond in self.records)
        return not self.tables  # a store of tables only: no other file is one

    def unit(self, path: Path) -> Path:
        return path.parent if self.folder else path


def _name_fits(path: Path, pattern: str) -> bool:
    if "/" not in pattern:
        return fnmatch.fnmatchcase(path.name, pattern)
    return path.match(pattern)


def _holds(record: Mapping[str, Any], condition: Condition) -> bool:
    for term in condition:
        if term.startswith("!"):
            if term[1:] in record:
                return False
        elif "*=" in term:
            key, _, part = term.partition("*=")
            value = record.get(key)
            if not isinstance(value, str) or part not in value:
                return False
        elif "=" in term:
            key, _, want = term.partition("=")
            if key not in record or str(record[key]) != want:
                return False
        elif term not in record:
            return False
    return True


class Probe:
    """One file, read as each importer's shape asks (once)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @cached_property
    def head(self) -> bytes:
        try:
            with self.path.open("rb") as fh:
                return fh.read(HEAD_BYTES)
        except OSError:
            return b""

    def records(self) -> list[Mapping[str, Any]]:
        """The first JSON objects: the document's (or its first item's) for a JSON file, else the first lines'."""
        return self._records

    @cached_property
    def _records(self) -> list[Mapping[str, Any]]:
        head = self.head.lstrip()
        if head[:1] in (b"{", b"[") and self.path.suffix != ".jsonl":
            document = self._document()
            if isinstance(document, dict):
                return [document]
            if isinstance(document, list):
                return [x for x in document[:1] if isinstance(x, dict)]
        out: list[Mapping[str, Any]] = []
        for line in head.splitlines()[:HEAD_RECORDS]:
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                value = _first_value(line)  # records glued on one line: the first of them
            if isinstance(value, dict):
                out.append(value)
        return out

    def _document(self) -> Any:
        try:
            if self.path.stat().st_size > MAX_JSON_BYTES:
                return None
            return orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None

    @property
    def is_sqlite(self) -> bool:
        return self.head.startswith(SQLITE_MAGIC)

    def has_table(self, term: str) -> bool:
        table, _, column = term.partition(".")
        columns = self._tables.get(table)
        return columns is not None and (not column or column in columns)

    @cached_property
    def _tables(self) -> dict[str, set[str]]:
        if not self.head.startswith(SQLITE_MAGIC):
            return {}
        try:
            with open_agent_db(self.path) as conn:
                return tables(conn)
        except (sqlite3.Error, OpmemError, OSError):
            return {}


def _first_value(line: bytes) -> Any:
    try:
        return json.JSONDecoder().raw_decode(line.decode("utf-8", "replace").strip())[0]
    except (ValueError, RecursionError):
        return None


def walk_files(paths: Iterable[Path | str]) -> list[Path]:
    """Every file given, and every file under each folder given (any depth, sorted; no VCS or
    dependency folders, no symbolic links followed)."""
    out: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            out[path] = None
            continue
        if not path.is_dir():
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            base = Path(folder)
            out.update(dict.fromkeys(base / name for name in sorted(files)))
    return list(out)


def find_units(paths: Iterable[Path | str], importers: Iterable[Importer]) -> dict[Path, list[Importer]]:
    """Each session (file or folder) under `paths` and the importers that claim it, in walk order."""
    chosen = list(importers)
    units: dict[Path, list[Importer]] = {}
    for file in walk_files(paths):
        probe = Probe(file)
        for importer in chosen:
            unit = importer.claims(probe)
            if unit is None:
                continue
            claimed = units.setdefault(unit, [])
            if importer not in claimed:
                claimed.append(importer)
    return units
