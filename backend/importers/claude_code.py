"""Claude Code transcripts: ``~/.claude/projects/<encoded-cwd>/*.jsonl`` -> ImportedSession.

One file is parsed on its own (a trunk ``<sessionId>.jsonl``, or a subagent ``agent-<id>.jsonl``
beside it or under ``<sessionId>/subagents/``) by a `ClaudeParser` (claude_parser.py), which
also follows lines appended later (``opmem watch``). Records become nodes as
claude_handlers.py says; a ``--resume`` copy of another session file is found by
claude_resume.py.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from .base import ImportedSession, ImportReport, LineImporter, discover_files
from .claude_parser import ClaudeParser
from .claude_records import is_agent_file
from .claude_resume import ResumeIndex
from .shape import Probe, Shape

SESSION_FILE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl", re.IGNORECASE)


class ClaudeImporter(LineImporter):
    name = "claude"
    source = "claude-code"
    label = "Claude Code"
    id_prefix = "cc"
    aliases = ("claude-code", "claude_code", "cc")
    rank = 0
    locations = ("$CLAUDE_CONFIG_DIR/projects", "~/.claude/projects")
    shape = Shape(
        ("*.jsonl",),
        records=(
            ("sessionId", "isSidechain"),
            ("type=file-history-snapshot", "snapshot"),
            ("type=summary", "leafUuid"),
            ("sessionId", "type=permission-mode"),
        ),
        also=("<id>.meta.json", "<id>/subagents/agent-*.jsonl"),
    )
    reads = "user, assistant (text, thinking, tool_use), tool_result, system, summary, compaction and subagent records"
    looks_for = "*.jsonl transcripts"
    feeds_text = False  # bytes: orjson reads them as they are (record_values.loads_exact)
    parses_apart = True  # its ResumeIndex reads sibling files: a worker's own index reads the same

    def __init__(self) -> None:
        self.resumes = ResumeIndex()  # first record uuids of the files seen, kept between files

    def default_paths(self) -> list[Path]:
        """``$CLAUDE_CONFIG_DIR/projects`` if set, else ``~/.claude/projects``."""
        root = os.environ.get("CLAUDE_CONFIG_DIR")
        base = Path(root).expanduser() if root else Path.home() / ".claude"
        return [base / "projects"]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        """Every transcript under `paths`: trunk files first, so parents exist before subagents. A file
        found in a folder is one when Claude named it (``<uuid>.jsonl``, a subagent's ``agent-*.jsonl``)
        or it has Claude's shape: another agent's ``*.jsonl`` beside them is not read as Claude's."""
        given = list(dict.fromkeys(Path(p).expanduser() for p in paths))
        files = discover_files(given, "*.jsonl")
        return self.ordered([p for p in files if p in given or self._named_or_shaped(p)])

    def _named_or_shaped(self, path: Path) -> bool:
        return bool(SESSION_FILE.fullmatch(path.name)) or is_agent_file(path) or self.claims(Probe(path)) is not None

    def ordered(self, files: list[Path]) -> list[Path]:
        return [p for p in files if not is_agent_file(p)] + [p for p in files if is_agent_file(p)]

    def open_parser(self, path: Path, report: ImportReport) -> ClaudeParser:
        return ClaudeParser(path, report, self.resumes)


class IflowImporter(ClaudeImporter):
    """iFlow CLI (a Gemini CLI fork) writes Claude Code's transcript format under ``~/.iflow/projects``
    (checked against kenn-io/agentsview internal/parser/iflow.go, 5386007): read by Claude's parser."""

    name = "iflow"
    source = "iflow"
    label = "iFlow CLI"
    id_prefix = ""
    aliases = ()
    rank = 1
    locations = ("$IFLOW_HOME/projects", "~/.iflow/projects")
    shape = replace(ClaudeImporter.shape, within=(".iflow",))
    parses_apart = False

    def default_paths(self) -> list[Path]:
        root = os.environ.get("IFLOW_HOME")
        return [(Path(root).expanduser() if root else Path.home() / ".iflow") / "projects"]

    def follows_lines(self, path: Path) -> bool:
        return False  # read whole, so each session is named as iFlow's

    def parse_file(self, path: Path, report: ImportReport, *, final: bool | None = None) -> list[ImportedSession]:
        return [replace(s, source=self.source) for s in super().parse_file(path, report, final=final)]
