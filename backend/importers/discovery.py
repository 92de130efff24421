"""Which agents keep sessions on this machine: `opmem import` with no source, `opmem import --list`.

Each importer knows its default locations (with the agents' own environment overrides:
``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``, ``XDG_DATA_HOME``, ``OPENCODE_DB``,
``COPILOT_HOME``, ``GOOSE_PATH_ROOT``, ``CLINE_DIR``, ``XDG_CONFIG_HOME`` ..., and the user
folders of VS Code and its forks: Code, Code - Insiders, VSCodium, Cursor, Windsurf, ...).
`find_agents` looks in each and counts what an import would bring: session files for the
transcript formats, and for stores holding many sessions per file (SQLite databases, state.vscdb)
the sessions with at least one message, read as the import reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .base import Importer, ImportReport
from .whole import WholeImporter


@dataclass(slots=True)
class Found:
    """One agent present on this machine."""

    name: str  # the registry name ("claude")
    label: str  # "Claude Code"
    roots: list[Path]  # its default locations that exist
    files: list[Path] = field(default_factory=list)
    sessions: int = 0
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        unit = "session" if self.sessions == 1 else "sessions"
        return f"{self.label} {self.sessions} {unit}"


def count_sessions(importer: Importer, files: Iterable[Path], report: ImportReport) -> int:
    """What an import would bring: one session per file, or for a whole-read store the sessions it holds with a message."""
    if not isinstance(importer, WholeImporter):
        return sum(1 for _ in files)
    total = 0
    for path in files:
        total += sum(1 for s in importer.parse_file(path, report, final=True) if s.nodes)
    return total


def find_agents(
    sources: dict[str, Importer], *, count: bool = True, progress: Callable[[str], object] | None = None
) -> list[Found]:
    """Every agent of `sources` whose default locations exist and hold at least one session file."""
    out: list[Found] = []
    for name, importer in sources.items():
        if not importer.discoverable:  # no home of its own: paths are always given
            continue
        if progress is not None:
            progress(name)
        try:
            roots = [Path(p) for p in importer.default_paths()]
        except OSError:
            continue
        existing = [r for r in roots if r.exists()]
        if name == "aider":  # it reads the current folder: only where aider has written
            existing = [r for r in existing if (r / ".aider.chat.history.md").exists()]
        if not existing:
            continue
        files = importer.discover(existing)
        if not files:
            continue
        found = Found(name, importer.label, existing, list(files))
        if count:
            report = ImportReport()
            found.sessions = count_sessions(importer, found.files, report)
            found.warnings = report.warnings
        else:
            found.sessions = len(found.files)
        out.append(found)
    return out
