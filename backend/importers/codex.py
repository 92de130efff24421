"""OpenAI Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` -> ImportedSession.

A rollout has no parent pointers; the conversation is rebuilt in file order:

- chain: injected context (environment, AGENTS.md, developer instructions) -> system nodes;
  the typed prompt (``event_msg/user_message`` and its ``response_item`` copy, deduplicated)
  -> a user node; each model response (reasoning, assistant text, tool calls) -> one assistant
  node, reasoning and token usage in its metadata; ``compacted`` -> a system node.
- tools: every call item (function_call, custom_tool_call, local_shell_call, tool_search_call,
  web_search_call, image_generation_call) -> a tool node hanging off its assistant node,
  paired with its output by ``call_id``.
- branches: ``thread_rolled_back{num_turns: N}`` drops the last N user turns from the
  effective history; their nodes stay as an abandoned branch and the next prompt forks from
  the node before them.
- links: ``forked_from_id`` -> kind "fork", ``source.subagent`` -> kind "subagent", both with
  parent_native_id. Lines a fork copied from its parent are marked ``metadata.replayed``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .base import ImportedSession, ImportReport, LineImporter, discover_files
from .codex_reader import CodexReader
from .codex_records import parse_line
from .drafts import LineParser
from .shape import Shape


class CodexParser(LineParser):
    """Stateful line parser for `opmem watch`: feed_line() then take() (see drafts.LineParser)."""

    def __init__(self, path: Path | str, report: ImportReport) -> None:
        super().__init__(path, report)
        self.reader = CodexReader(self.path, report)

    def _feed(self, text: str, offset: int, line: int) -> None:
        self.reader.feed(parse_line(text), offset, line)

    def _idle(self) -> None:
        self.reader.idle_flush(self.offset)

    def holding(self) -> bool:
        return self.reader.graph.holding()

    def _sessions(
        self, *, end_offset: int, start_offset: int, live: bool, skip: set[str] | None
    ) -> list[ImportedSession]:
        return [self.reader.session(end_offset=end_offset, start_offset=start_offset, live=live, skip=skip)]


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex").expanduser()


class CodexImporter(LineImporter):
    name = "codex"
    source = "codex"
    label = "Codex"
    rank = 0
    locations = ("$CODEX_HOME/sessions", "~/.codex/sessions", "~/.codex/archived_sessions")
    shape = Shape(
        ("*.jsonl",),
        records=(
            ("type=session_meta", "payload"),
            ("type=response_item", "payload"),
            ("type=turn_context", "payload"),
            ("id", "timestamp", "instructions"),
        ),
    )
    reads = "session_meta, response_item (messages, reasoning, function and custom tool calls), event_msg, turn_context"
    looks_for = "rollout-*.jsonl"
    empty_file = "no Codex records found"

    def default_paths(self) -> list[Path]:
        return [codex_home() / folder for folder in ("sessions", "archived_sessions")]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return discover_files(paths, "rollout-*.jsonl", given="*.jsonl")

    def open_parser(self, path: Path, report: ImportReport) -> CodexParser:
        return CodexParser(path, report)
