"""Kimi: Kimi Code (0.28+) and the older Python Kimi CLI, both as ``wire.jsonl`` event logs.

- Kimi Code: ``$KIMI_CODE_HOME`` (default ``~/.kimi-code``) ``/sessions/<wd key>/<sessionId>/``:
  ``state.json`` (``title``, ``isCustomTitle``, ``workDir``, ``createdAt``, ``agents``) and
  ``agents/<agentId>/wire.jsonl`` with lines ``{type, time (ms), ...}``: ``config.update``
  (``modelAlias``, ``cwd``), ``turn.prompt`` / ``turn.steer`` (the user's input),
  ``context.append_loop_event`` (``step.begin``, ``content.part`` text|think, ``tool.call
  {toolCallId, name, args}``, ``tool.result {toolCallId, result {output, isError}}``,
  ``step.end {usage, finishReason}``), ``usage.record`` (``model``), ``turn.cancel``. An agent
  other than ``main`` is a subagent session of the session.
- Kimi CLI: ``$KIMI_SHARE_DIR`` (default ``~/.kimi``) ``/sessions/<md5(workdir)>/<sessionId>/
  wire.jsonl``: a metadata header, then ``{timestamp, message: {type: TurnBegin | StepBegin |
  ContentPart | ToolCall | ToolResult | StepInterrupted ..., payload}}``.

One assistant node per step (its text, thinking and usage), one tool node per call. While Kimi
writes, a step without its ``step.end`` (or a call without its result) is held back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_lines, load_json, session, split_injected

SOURCE = "kimi"
QUIET_PREFIXES = (
    "plan_mode.",
    "full_compaction.",
    "permission.",
    "profile.",
    "plugin.",
    "runtime.",
    "token_counting.",
    "turn.ended",
    "hook.",
)
QUIET = frozenset(
    {
        "metadata",
        "tools.set_active_tools",
        "llm.tools_snapshot",
        "llm.request",
        "permission.record_approval_result",
        "context.append_message",
        "llm.response",
    }
)


class _Wire:
    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path, self.report = path, report
        self.items: list[tuple[str, Any]] = []  # ("user" | "system", (id, text, when)) | ("step", step)
        self.steps: dict[str, dict[str, Any]] = {}
        self.calls: dict[str, dict[str, Any]] = {}
        self.step: dict[str, Any] | None = None
        self.facts: dict[str, Any] = {}

    def _step(self, key: str, when: float) -> dict[str, Any]:
        step = self.steps.get(key) if key else self.step
        if step is None:
            step = {
                "id": key or f"{self.path.stem}:step{len(self.steps)}",
                "texts": [],
                "thinks": [],
                "tools": [],
                "ended": False,
                "when": when,
            }
            self.steps[step["id"]] = step
            self.items.append(("step", step))
        self.step = step
        return step

    def user(self, sid: str, text: str, when: float, origin: str) -> None:
        added, said = split_injected(text)
        if said.strip() or not added:
            self.items.append(("user", (sid, said, when, origin)))
        if added:
            self.items.append(("system", (f"{sid}:context", added, when)))
        self.step = None

    def event(self, record: dict[str, Any], number: int) -> None:
        kind = as_str(record.get("type"))
        when = parse_time(record.get("time") or record.get("timestamp"))
        sid = f"{self.path.stem}:{number}"
        if "message" in record and isinstance(record["message"], dict) and "payload" in record["message"]:
            self.legacy(record["message"], sid, when)
        elif kind == "config.update":
            for key in ("cwd", "modelAlias"):
                if as_str(record.get(key)):
                    self.facts[key] = record[key]
        elif kind in ("turn.prompt", "turn.steer"):
            text = as_text(record.get("input")) if record.get("input") is not None else as_text(record.get("content"))
            self.user(sid, text, when, as_str(as_dict(record.get("origin")).get("kind")))
        elif kind == "context.append_loop_event":
            self.loop(as_dict(record.get("event")), when)
        elif kind == "usage.record":
            self.facts["model"] = as_str(record.get("model")) or self.facts.get("model", "")
        elif kind == "turn.cancel":
            self.items.append(("system", (sid, "[turn cancelled]", when)))
        elif kind == "context.apply_compaction":
            self.items.append(("system", (sid, "[compaction]", when)))
            self.step = None
        elif kind not in QUIET and not kind.startswith(QUIET_PREFIXES):
            self.report.unknown(f"kimi:{kind or 'untyped'}")

    def loop(self, event: dict[str, Any], when: float) -> None:
        kind = event.get("type")
        if kind == "step.begin":
            self._step(as_str(event.get("uuid")), when)
        elif kind == "content.part":
            step = self._step(as_str(event.get("stepUuid")), when)
            part = as_dict(event.get("part"))
            if part.get("type") == "think":
                step["thinks"].append(as_str(part.get("think")))
            else:
                step["texts"].append(as_str(part.get("text")))
        elif kind == "tool.call":
            step = self._step(as_str(event.get("stepUuid")), when)
            call = {
                "id": as_str(event.get("toolCallId")) or as_str(event.get("uuid")),
                "name": as_str(event.get("name")),
                "args": event.get("args"),
                "when": when,
                "result": None,
                "error": False,
            }
            step["tools"].append(call)
            self.calls[call["id"]] = call
        elif kind == "tool.result":
            call = self.calls.get(as_str(event.get("toolCallId")) or as_str(event.get("parentUuid")))
            result = as_dict(event.get("result"))
            if call is not None:
                call["result"] = as_text(result.get("output")) if "output" in result else as_text(result)
                call["error"] = bool(result.get("isError"))
        elif kind == "step.end":
            step = self._step(as_str(event.get("uuid")), when)
            step["ended"] = True
            step["usage"] = event.get("usage")
            step["finish"] = event.get("finishReason")

    def legacy(self, message: dict[str, Any], sid: str, when: float) -> None:
        """The Python Kimi CLI's wire messages, read as the same events."""
        kind, payload = as_str(message.get("type")), message.get("payload")
        data = as_dict(payload)
        if kind == "TurnBegin":
            self.user(sid, as_text(data.get("user_input", payload)), when, "user")
        elif kind == "StepBegin":
            self.step = None
            self._step("", when)
        elif kind == "ContentPart":
            step = self._step("", when)
            if data.get("type") == "think":
                step["thinks"].append(as_str(data.get("think")))
            else:
                step["texts"].append(as_str(data.get("text")))
        elif kind == "ToolCall":
            function = as_dict(data.get("function"))
            args = function.get("arguments")
            try:
                args = json.loads(args) if isinstance(args, str) else args
            except ValueError:
                pass
            self.loop(
                {"type": "tool.call", "toolCallId": data.get("id"), "name": function.get("name"), "args": args}, when
            )
        elif kind == "ToolResult":
            value = as_dict(data.get("return_value"))
            self.loop(
                {
                    "type": "tool.result",
                    "toolCallId": data.get("tool_call_id"),
                    "result": {"output": value.get("output", value), "isError": value.get("is_error")},
                },
                when,
            )
        elif kind in ("StepInterrupted", "TurnEnd", "StatusUpdate", "CompactionBegin", "CompactionEnd"):
            if self.step is not None:
                self.step["ended"] = True
        else:
            self.report.unknown(f"kimi:{kind or 'untyped'}")

    def build(self) -> SessionBuilder:
        b = SessionBuilder()
        model = as_str(self.facts.get("model")) or as_str(self.facts.get("modelAlias")) or None
        for kind, item in self.items:
            if kind == "user":
                sid, text, when, origin = item
                b.chain(sid, "user", text, created_at=when, metadata={"origin": origin if origin != "user" else None})
            elif kind == "system":
                sid, text, when = item
                b.chain(sid, "system", text, created_at=when, metadata={"injected": True})
            else:
                step = item
                if not (step["texts"] or step["thinks"] or step["tools"]):
                    continue
                meta = {
                    "thinking": "\n".join(step["thinks"]),
                    "tokens": step.get("usage"),
                    "finish": step.get("finish"),
                }
                owner = b.chain(
                    step["id"],
                    "assistant",
                    "".join(step["texts"]),
                    name=model,
                    created_at=step["when"],
                    metadata=meta,
                    done=step["ended"],
                )
                for call in step["tools"]:
                    b.tool(
                        call["id"] or f"{owner}:tool",
                        owner,
                        call["name"] or "tool",
                        call["args"],
                        call["result"] or "",
                        created_at=call["when"],
                        metadata={"call_id": call["id"], "is_error": call["error"] or None},
                        done=call["result"] is not None,
                    )
        return b


def read_wire(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    wire = _Wire(path, report)
    for number, record in json_lines(path, report):
        wire.event(record, number)
    b = wire.build()
    native, parent, state_path = path.stem, None, path.with_name(f"{path.stem}.state.json")
    if path.name == "wire.jsonl" and path.parent.parent.name == "agents":  # Kimi Code
        session_dir = path.parent.parent.parent
        agent = path.parent.name
        native = session_dir.name if agent == "main" else f"{session_dir.name}.{agent}"
        parent = session_dir.name if agent != "main" else None
        state_path = session_dir / "state.json"
    elif path.name == "wire.jsonl":  # the Python Kimi CLI
        native, state_path = path.parent.name, path.parent / "state.json"
    state: dict[str, Any] = {}
    if state_path.exists():
        try:
            state = as_dict(load_json(state_path))
        except (OSError, ValueError, RecursionError) as exc:
            report.warn(state_path, None, f"not readable JSON ({exc})")
    title = as_str(state.get("title")) if parent is None else ""
    cwd = as_str(wire.facts.get("cwd")) or as_str(state.get("workDir"))
    return [
        session(
            SOURCE,
            native,
            path,
            b,
            final=final,
            title=title,
            title_source="user" if state.get("isCustomTitle") else "llm",
            cwd=cwd,
            model=as_str(wire.facts.get("model")) or as_str(wire.facts.get("modelAlias")),
            kind="subagent" if parent else "trunk",
            parent_native_id=parent,
            extra={"layout": "kimi-code" if "agents" in path.parts else "wire"},
        )
    ]


class KimiImporter(WholeImporter):
    name = "kimi"
    source = SOURCE
    label = "Kimi"
    locations = ("$KIMI_CODE_HOME/sessions", "~/.kimi-code/sessions", "$KIMI_SHARE_DIR/sessions", "~/.kimi/sessions")
    shape = Shape(("*.jsonl",), records=(("type=metadata", "protocol_version"),), also=("state.json",))
    reads = "turn prompts, content parts (text, think), tool calls and results, usage records"
    looks_for = "sessions/<workdir>/<session>/.../wire.jsonl"

    def default_paths(self) -> list[Path]:
        code = Path(os.environ.get("KIMI_CODE_HOME") or Path.home() / ".kimi-code").expanduser()
        cli = Path(os.environ.get("KIMI_SHARE_DIR") or Path.home() / ".kimi").expanduser()
        return [code / "sessions", cli / "sessions"]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix == ".jsonl":
                found[path] = None
            elif path.is_dir():
                wires = sorted(p for p in path.rglob("wire.jsonl") if p.is_file())
                found.update(
                    dict.fromkeys(sorted(wires, key=lambda p: p.parent.name not in ("main",) and "agents" in p.parts))
                )
        return list(found)

    def ordered(self, files: list[Path]) -> list[Path]:
        return sorted(files, key=lambda p: p.parent.name != "main" and "agents" in p.parts)  # main agents first

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_wire(path, report, final=final)
