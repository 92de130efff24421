"""gptme: ``~/.local/share/gptme/logs/<date>-<name>/conversation.jsonl``.

One message a line: ``{role: system | user | assistant | tool, content, timestamp (ISO, the local
time without a zone: read as UTC), pinned?, hide?, metadata {model, usage, cost}}``. A ``tool`` line is the
output of a tool the assistant message before it ran (gptme runs the code blocks of a reply):
it hangs under that reply. Hidden system prompts are not a turn. Checked against
kenn-io/agentsview internal/parser/gptme.go and its testdata (5386007).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .base import ImportedSession, ImportReport
from .record_values import parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_lines, session


def read_log(path: Path, report: ImportReport, source: str) -> list[ImportedSession]:
    b = SessionBuilder()
    owner: str | None = None
    model = ""
    for number, record in json_lines(path, report):
        role = as_str(record.get("role"))
        text = as_str(record.get("content"))
        when = parse_time(record.get("timestamp"))
        sid = f"{path.parent.name}:{number}"
        if role == "system" and record.get("hide"):
            continue
        if role == "tool" and owner is not None:
            b.tool(sid, owner, "gptme", None, text, created_at=when)
        elif role in ("user", "assistant", "system"):
            model = as_str(as_dict(record.get("metadata")).get("model")) or model
            name = model or None if role == "assistant" else None
            made = b.chain(sid, role, text, name=name, created_at=when)
            owner = made if role == "assistant" else None
        else:
            report.unknown(f"gptme:role:{role}")
    if not b.nodes:
        return []
    return [session(source, path.parent.name, path, b, final=True, title=path.parent.name, extra={"layout": "log"})]


def gptme_logs() -> Path:
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "gptme" / "logs"


class GptmeImporter(WholeImporter):
    name = "gptme"
    source = "gptme"
    label = "gptme"
    locations = ("$XDG_DATA_HOME/gptme/logs", "~/.local/share/gptme/logs")
    shape = Shape(("conversation.jsonl",), records=(("role", "content", "timestamp", "!session", "!type"),))
    reads = "user, assistant and system messages, tool output under the reply that ran it"
    looks_for = "logs/<conversation>/conversation.jsonl"

    def default_paths(self) -> list[Path]:
        return [gptme_logs()]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix == ".jsonl":
                found[path] = None
            elif path.is_dir():
                for pattern in ("conversation.jsonl", "*/conversation.jsonl"):
                    found.update(dict.fromkeys(sorted(p for p in path.glob(pattern) if p.is_file())))
        return list(found)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_log(path, report, self.source)
