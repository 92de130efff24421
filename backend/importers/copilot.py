"""GitHub Copilot CLI: ``~/.copilot/session-state/`` (``$COPILOT_HOME``; up to 0.0.421
``$XDG_CONFIG_HOME/.copilot``).

Two layouts: now ``session-state/<id>/events.jsonl`` with ``workspace.yaml`` beside it (``id``,
``cwd``, ``branch``, ``summary``, times); before, a flat ``session-state/<id>.jsonl`` (and
``history-session-state/``). Each line is an event ``{type, id, timestamp, parentId, data}``:

- ``session.start`` / ``session.resume`` (``sessionId``, ``selectedModel``, ``context {cwd,
  branch}``), ``session.model_change`` (``newModel``): session facts;
- ``user.message`` -> user; ``system.message`` -> system (injected); ``assistant.message`` ->
  assistant (``content``, ``model``, ``outputTokens``, ``reasoningText``) with one tool node per
  ``toolRequests[]``; ``tool.execution_complete`` fills its tool node (``result.content``,
  ``success``); ``session.error``, ``abort``, ``session.truncation`` -> system nodes;
- ``assistant.turn_start`` / ``turn_end`` bound a turn: while Copilot writes, a turn without its
  end (or a tool without its result) is held back. Messages of a subagent carry
  ``parentToolCallId``, kept in their metadata.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_lines, json_value, session

SOURCE = "copilot"
QUIET = frozenset(
    {
        "session.info",
        "hook.start",
        "hook.end",
        "session.usage_checkpoint",
        "session.auto_mode_resolved",
        "session.shutdown",
        "subagent.started",
        "subagent.completed",
        "system.notification",
        "tool.execution_start",
    }
)


def copilot_home() -> Path:
    env = os.environ.get("COPILOT_HOME")
    return Path(env).expanduser() if env else Path.home() / ".copilot"


def read_workspace(path: Path) -> dict[str, str]:
    """``workspace.yaml``: flat ``key: value`` lines (all Copilot writes there)."""
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        return out
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key and not key.startswith((" ", "#", "-")):
            out[key.strip()] = value.strip().strip("'\"")
    return out


class _Events:
    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path, self.report = path, report
        self.b = SessionBuilder()
        self.facts: dict[str, Any] = {}
        self.model = ""
        self.tools: dict[str, str] = {}  # toolCallId -> tool node
        self.results: dict[str, tuple[str, bool, float]] = {}
        self.owner: str | None = None
        self.turn_open_at: int | None = None

    def event(self, record: dict[str, Any], number: int) -> None:
        kind = as_str(record.get("type"))
        data = as_dict(record.get("data"))
        eid = as_str(record.get("id"))
        sid = eid if eid and not eid.startswith("[") else f"{self.path.stem}:{number}"
        when = parse_time(record.get("timestamp"))
        if kind in ("session.start", "session.resume"):
            self.facts.setdefault("sessionId", data.get("sessionId"))
            self.model = as_str(data.get("selectedModel")) or self.model
            context = as_dict(data.get("context"))
            for key in ("cwd", "branch", "repository"):
                if as_str(context.get(key)) and not context[key].startswith("["):
                    self.facts[key] = context[key]
            self.facts.setdefault("copilotVersion", data.get("copilotVersion"))
        elif kind == "session.model_change":
            self.model = as_str(data.get("newModel")) or self.model
        elif kind == "user.message":
            attachments = [a.get("path") for a in data.get("attachments") or [] if isinstance(a, dict)]
            self.b.chain(
                sid, "user", as_str(data.get("content")), created_at=when, metadata={"attachments": attachments}
            )
            self.owner = None
        elif kind == "system.message":
            self.b.chain(sid, "system", as_text(data.get("content")), created_at=when, metadata={"injected": True})
        elif kind == "assistant.message":
            self.assistant(sid, data, when)
        elif kind == "tool.execution_complete":
            self.result(sid, data, when)
        elif kind == "assistant.turn_start":
            self.turn_open_at = len(self.b.nodes)
        elif kind == "assistant.turn_end":
            self.turn_open_at = None
        elif kind in ("session.error", "abort", "session.truncation"):
            text = as_str(data.get("message")) or as_str(data.get("reason")) or f"[{kind}]"
            self.b.chain(sid, "system", text, created_at=when, metadata={"event": kind})
        elif kind not in QUIET and not kind.startswith("hook."):
            self.report.unknown(f"copilot:{kind or 'untyped'}")

    def assistant(self, sid: str, data: dict[str, Any], when: float) -> None:
        model = as_str(data.get("model")) or self.model or None
        meta = {
            "tokens": data.get("outputTokens"),
            "thinking": data.get("reasoningText"),
            "subagent_of": data.get("parentToolCallId"),
        }
        self.owner = self.b.chain(
            sid, "assistant", as_str(data.get("content")), name=model, created_at=when, metadata=meta
        )
        for index, call in enumerate(data.get("toolRequests") or []):
            if not isinstance(call, dict):
                continue
            call_id = as_str(call.get("toolCallId"))
            args = call.get("arguments")
            args = json_value(args) if isinstance(args, str) and json_value(args) is not None else args
            tid = self.b.tool(
                call_id if call_id and not call_id.startswith("[") else f"{sid}:tool{index}",
                self.owner,
                as_str(call.get("name")) or "tool",
                args,
                "",
                created_at=when,
                metadata={"call_id": call_id, "intention": call.get("intentionSummary")},
            )
            if call_id:
                self.tools[call_id] = tid

    def result(self, sid: str, data: dict[str, Any], when: float) -> None:
        call_id = as_str(data.get("toolCallId"))
        result = as_dict(data.get("result"))
        text = as_text(result.get("content")) or as_text(result.get("detailedContent"))
        failed = data.get("success") is False
        if call_id in self.tools:
            self.results[self.tools[call_id]] = (text, failed, when)
        elif self.owner is not None:  # a result whose request was never logged
            tid = self.b.tool(
                call_id if call_id and not call_id.startswith("[") else f"{sid}:result",
                self.owner,
                as_str(data.get("toolName")) or "tool",
                None,
                text,
                created_at=when,
                metadata={"call_id": call_id, "is_error": failed or None},
            )
            self.tools[call_id] = tid
        else:
            self.report.unknown("copilot:tool.execution_complete:orphan")

    def finish(self, final: bool) -> SessionBuilder:
        b = self.b
        done = set(self.results)
        nodes = []
        for n in b.nodes:
            if n.id in self.results:
                text, failed, ended = self.results[n.id]
                meta = {**n.metadata, "is_error": True} if failed else dict(n.metadata)
                if ended:
                    meta["ended_at"] = ended
                n = replace(n, content=text, metadata=meta)
            nodes.append(n)
        b.nodes = nodes
        if not final:
            waiting = [
                i
                for i, n in enumerate(b.nodes)
                if n.role == "tool" and n.id not in done and n.id in self.tools.values()
            ]
            cut = [i for i in (self.turn_open_at, *waiting[:1]) if i is not None]
            if cut:
                first = min(cut)
                while first > 0 and b.nodes[first].role == "tool":
                    first -= 1  # hold the calling reply with its tools
                b.first_open = first
        return b


def read_events(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    events = _Events(path, report)
    for number, record in json_lines(path, report):
        events.event(record, number)
    b = events.finish(final)
    nested = path.name == "events.jsonl"
    workspace = read_workspace(path.parent / "workspace.yaml") if nested else {}
    native = as_str(events.facts.get("sessionId"))
    if not native or native.startswith("["):
        native = workspace.get("id") or (path.parent.name if nested else path.stem)
    title = workspace.get("summary", "")
    extra = {
        "layout": "session-folder" if nested else "flat",
        "copilot_version": events.facts.get("copilotVersion"),
        "repository": events.facts.get("repository"),
    }
    return [
        session(
            SOURCE,
            native,
            path,
            b,
            final=final,
            title=title,
            cwd=as_str(events.facts.get("cwd")) or workspace.get("cwd", ""),
            git_branch=as_str(events.facts.get("branch")) or workspace.get("branch", ""),
            model=b.model or events.model,
            extra={k: v for k, v in extra.items() if v},
        )
    ]


class CopilotImporter(WholeImporter):
    name = "copilot"
    source = SOURCE
    label = "Copilot CLI"
    locations = ("$COPILOT_HOME/session-state", "~/.copilot/session-state", "~/.copilot/history-session-state")
    shape = Shape(("*.jsonl",), records=(("type*=.", "data", "id", "timestamp"),), also=("workspace.yaml",))
    reads = "session.start, user.message, assistant.message with tool requests, tool.execution_complete"
    looks_for = "session-state/<id>/events.jsonl or session-state/<id>.jsonl"

    def default_paths(self) -> list[Path]:
        xdg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / ".copilot"
        return [copilot_home() / "session-state", copilot_home() / "history-session-state", xdg / "session-state"]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix == ".jsonl":
                found[path] = None
            elif path.is_dir():
                for item in sorted(path.glob("*/events.jsonl")):
                    found[item] = None
                for item in sorted(path.glob("*.jsonl")):
                    found[item] = None
                for sub in ("session-state", "history-session-state"):
                    if (path / sub).is_dir():
                        found.update(dict.fromkeys(self.discover([path / sub])))
        return list(found)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_events(path, report, final=final)
