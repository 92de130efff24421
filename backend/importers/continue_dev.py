"""Continue.dev: ``$CONTINUE_GLOBAL_DIR`` (default ``~/.continue``) ``/sessions/``; the VS Code and
JetBrains extensions and the ``cn`` CLI write the same files.

Checked against continuedev/continue d0a3c0b (core/util/history.ts, core/index.d.ts,
gui/src/redux/slices/sessionSlice.ts, extensions/cli/src/session.ts). ``sessions.json`` is the
index (``[{sessionId, title, dateCreated (ms, as text), workspaceDirectory, messageCount}]``);
``<sessionId>.json`` holds ``{sessionId, title, workspaceDirectory, history, mode,
chatModelTitle, usage}``. A history item is ``{message, contextItems, editorState, promptLogs,
toolCallStates, reasoning, conversationSummary}``; ``message`` is ``{id?, role (user | assistant
| thinking | system | tool), content}`` (text, or ``text`` / ``imageUrl`` parts). An assistant
message's ``toolCalls [{id, function {name, arguments (JSON text)}}]`` are tracked by the item's
``toolCallStates [{toolCallId, toolCall, status, parsedArgs, output [context items]}]``; the
extension also answers each call with a ``tool`` message (``toolCallId``), the CLI only fills
``output``. Reasoning is a ``thinking`` message (Anthropic) or the item's ``reasoning {text,
startAt}`` (``<think>`` models). The extension gives each message an ``id``; the CLI does not,
and rewrites the history on compaction, so an id-less message's id is its place in the chain.
``contextItems`` the user attached are kept as the user node's metadata (names only).
Times: a history item has no time of its own (``ChatHistoryItem`` in core/index.d.ts; the GUI's
sessionSlice.ts and the CLI's session.ts write none), only ``reasoning.startAt`` (ms) when the
model thought; the first message is dated ``dateCreated`` and every other one the time before it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_value, load_json, session

SOURCE = "continue"
UNTITLED = frozenset({"New Session", "Untitled Session"})  # the extension's and the CLI's placeholder
OPEN_TOOL = frozenset({"generating", "generated", "calling"})  # not answered yet: the call waits
FAILED_TOOL = frozenset({"errored", "canceled"})


def continue_home() -> Path:
    env = os.environ.get("CONTINUE_GLOBAL_DIR")
    return Path(env).expanduser() if env else Path.home() / ".continue"


def _index(folder: Path, report: ImportReport) -> dict[str, dict[str, Any]]:
    path = folder / "sessions.json"
    if not path.exists():
        return {}
    try:
        items = load_json(path)
    except (OSError, ValueError, RecursionError) as exc:
        report.warn(path, None, f"not readable JSON ({exc})")
        return {}
    return {str(i.get("sessionId")): i for i in items if isinstance(i, dict)} if isinstance(items, list) else {}


def _when(value: Any) -> float:
    """``dateCreated``: ms as text ("1767300000000"), or ISO text."""
    if isinstance(value, str) and value.strip().isdigit():
        return parse_time(int(value))
    return parse_time(value)


def _content(value: Any) -> str:
    """MessageContent: text, or ``text`` / ``imageUrl`` parts (an image is "[image]", never its data URL)."""
    if isinstance(value, list):
        parts = ["[image]" if as_dict(p).get("type") == "imageUrl" else as_text(p) for p in value]
        return "\n".join(p for p in parts if p)
    return as_text(value)


def _tool_states(item: dict[str, Any]) -> list[dict[str, Any]]:
    states = item.get("toolCallStates")
    if isinstance(states, list):
        return [s for s in states if isinstance(s, dict)]
    return [item["toolCallState"]] if isinstance(item.get("toolCallState"), dict) else []


def _source_id(native: str, index: int, msg: dict[str, Any], text: str, parent: str | None) -> str:
    """The message's own id; an id-less one (the CLI's) is named by its place and what it says."""
    own = as_str(msg.get("id"))
    if own:
        return own
    seen = f"{parent}\0{msg.get('role')}\0{text}".encode("utf-8", "replace")
    return f"{native}:{index}:{hashlib.sha1(seen).hexdigest()[:12]}"


def _output(state: dict[str, Any]) -> str | None:
    output = state.get("output")
    if output is None:
        return None
    return as_text([as_str(as_dict(o).get("content")) for o in output] if isinstance(output, list) else output)


def _calls(msg: dict[str, Any], states: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The message's toolCalls, then any call only its toolCallStates hold."""
    calls = [as_dict(c) for c in msg.get("toolCalls") or [] if isinstance(c, dict)]
    listed = {as_str(c.get("id")) for c in calls}
    calls += [as_dict(s.get("toolCall")) for cid, s in states.items() if cid not in listed and s.get("toolCall")]
    return calls


def _arguments(function: dict[str, Any], state: dict[str, Any]) -> Any:
    raw = function.get("arguments")
    parsed = json_value(raw) if isinstance(raw, str) else None
    if parsed is not None:
        return parsed
    return state["parsedArgs"] if state.get("parsedArgs") not in (None, {}) else raw


def read_session(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        report.warn(path, None, "not a Continue session: expected an object with a 'history' list")
        return []
    native = as_str(data.get("sessionId")) or path.stem
    listed = _index(path.parent, report).get(native, {})
    created = _when(listed.get("dateCreated")) or _when(data.get("dateCreated"))
    b = SessionBuilder()
    tools: dict[str, str] = {}
    results: dict[str, str] = {}
    thinking: list[str] = []
    thought_at = 0.0  # when the pending reasoning began
    model = as_str(data.get("chatModelTitle"))
    for index, item in enumerate(data["history"]):
        if not isinstance(item, dict):
            report.warn(path, None, f"history item {index + 1} is not an object; skipped")
            continue
        msg = as_dict(item.get("message"))
        role = msg.get("role")
        text = _content(msg.get("content"))
        reasoning = as_dict(item.get("reasoning"))
        when = parse_time(reasoning.get("startAt")) or (created if index == 0 else 0.0)
        if as_str(reasoning.get("text")).strip():
            thinking.append(as_str(reasoning["text"]))
            thought_at = thought_at or when
        summary = {"conversation_summary": as_str(item.get("conversationSummary")) or None}
        if role == "user":
            sid = _source_id(native, index, msg, text, b.tip)
            names = [as_str(c.get("name")) for c in item.get("contextItems") or [] if isinstance(c, dict)]
            b.chain(sid, "user", text, created_at=when, metadata={"context_items": names, **summary})
        elif role == "thinking":
            thinking.append(text)
        elif role == "assistant":
            states = {as_str(s.get("toolCallId")): s for s in _tool_states(item)}
            calls = _calls(msg, states)
            if not text.strip() and not calls and not summary["conversation_summary"]:
                continue  # a reply not begun, or one whose reasoning the next item answers
            logs = [as_dict(p) for p in item.get("promptLogs") or [] if isinstance(p, dict)]
            name = next((as_str(p.get("modelTitle")) for p in reversed(logs) if as_str(p.get("modelTitle"))), model)
            sid = _source_id(native, index, msg, text, b.tip)
            meta = {"thinking": "\n".join(thinking), "tokens": as_dict(msg.get("usage")) or None, **summary}
            when = when or thought_at
            owner = b.chain(sid, "assistant", text, name=name or None, created_at=when, metadata=meta)
            thinking, thought_at = [], 0.0
            for number, call in enumerate(calls):
                function = as_dict(call.get("function"))
                call_id = as_str(call.get("id"))
                state = states.get(call_id, {})
                status = as_str(state.get("status"))
                output = _output(state)
                tid = b.tool(
                    call_id or f"{sid}:tool{number}",
                    owner,
                    as_str(function.get("name")) or "tool",
                    _arguments(function, state),
                    output or "",
                    created_at=when,
                    metadata={"call_id": call_id, "status": status, "is_error": status in FAILED_TOOL or None},
                    done=status not in OPEN_TOOL,
                )
                tools[call_id or tid] = tid
        elif role == "tool":
            results[as_str(msg.get("toolCallId"))] = text
        elif role == "system":
            b.chain(_source_id(native, index, msg, text, b.tip), "system", text, created_at=when)
        else:
            report.unknown(f"continue:role:{role}")
    filled = {tid: results[cid] for cid, tid in tools.items() if cid in results}
    b.nodes = [replace(n, content=filled[n.id]) if n.id in filled else n for n in b.nodes]
    title = as_str(data.get("title")) or as_str(listed.get("title"))
    if title in UNTITLED:
        title = ""
    cwd = as_str(data.get("workspaceDirectory")) or as_str(listed.get("workspaceDirectory"))
    if cwd.startswith("file://"):
        cwd = unquote(urlparse(cwd).path)
    return [
        session(
            SOURCE,
            native,
            path,
            b,
            final=final,
            title=title,
            cwd=cwd,
            model=model,
            extra={"layout": "sessions", "mode": data.get("mode"), "usage": data.get("usage")},
        )
    ]


class ContinueImporter(WholeImporter):
    name = "continue"
    source = SOURCE
    label = "Continue"
    locations = ("$CONTINUE_GLOBAL_DIR/sessions", "~/.continue/sessions")
    shape = Shape(("*.json",), records=(("sessionId", "history", "workspaceDirectory"),), also=("sessions.json",))
    reads = "history items: messages, tool calls and their states, reasoning, context items"
    looks_for = "sessions/<sessionId>.json"

    def default_paths(self) -> list[Path]:
        return [continue_home() / "sessions"]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix == ".json" and path.name != "sessions.json":
                found[path] = None
            elif path.is_dir():
                for base in (path, path / "sessions"):
                    for item in sorted(base.glob("*.json")):
                        if item.name != "sessions.json" and item.is_file():
                            found[item] = None
        return list(found)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_session(path, report, final=final)
