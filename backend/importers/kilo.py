"""Kilo Code on OpenCode's core (the Kilo CLI, and the VS Code extension since 2026-03):
``~/.local/share/kilo/kilo.db`` (``$XDG_DATA_HOME/kilo``), OpenCode's SQLite store under
another name (tables ``session``, ``message``, ``part``), read as opencode.py reads it. The
extension's earlier task folders are cline.py's `KiloLegacyImporter`. Checked against
kenn-io/agentsview internal/parser/kilo.go and types.go (5386007), and against Kilo's own source,
Kilo-Org/kilocode: packages/opencode/src/storage/db.ts at f10b24f (``Global.Path.data/kilo.db``)
and packages/opencode/src/global/index.ts at 30e1f28 (xdg-basedir's data dir joined with
``kilo``: ``~/.local/share/kilo`` on macOS as well).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from .base import ImportedSession, ImportReport
from .opencode import read_db
from .shape import Shape
from .whole import WholeImporter, sqlite_files


def kilo_home() -> Path:
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "kilo"


class KiloImporter(WholeImporter):
    name = "kilo"
    source = "kilo"
    label = "Kilo Code"
    locations = ("$XDG_DATA_HOME/kilo/kilo.db", "~/.local/share/kilo/kilo.db")
    shape = Shape(("kilo*.db",), tables=(("session", "message", "part"),))
    reads = "sessions, their messages and parts (text, reasoning, tool with state, step-finish), as OpenCode's"
    looks_for = "kilo.db"

    def default_paths(self) -> list[Path]:
        return [kilo_home()]

    def is_db(self, path: Path) -> bool:
        return True

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return sqlite_files(paths, ("kilo*.db",))

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return [replace(s, source=self.source) for s in read_db(path, report, final=final)]
