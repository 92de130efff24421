"""Cline's ``ui_messages.json``: what the panel showed, read for message times, and read whole when
a task folder holds nothing else (a copied or partly exported task).

Checked against cline/cline 21cb8d2 (apps/vscode/src/shared/ExtensionMessage.ts): a message is
``{ts (ms), type: ask | say, ask?, say?, text?, reasoning?, images?, partial?}``. Said by the
user: ``say: task``, ``say: user_feedback``. By the assistant: ``say: text | completion_result``,
``ask: followup | plan_mode_respond | act_mode_respond | completion_result`` (followup's text is
JSON ``{question, options}``), ``say: reasoning``. Tool calls: ``say | ask: tool`` (text is JSON
``ClineSayTool {tool, path, diff, content, ...}``), ``ask | say: command`` answered by
``command_output``, ``browser_action_launch`` / ``browser_action`` answered by
``browser_action_result``, ``use_mcp_server`` answered by ``mcp_server_response``. ``say: error``
is a system note; ``api_req_started`` (JSON ``{request, tokensIn, ...}``) starts a model request.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from .whole import SessionBuilder, as_str

USER_SAYS = frozenset({"task", "user_feedback"})
REPLY_SAYS = frozenset({"text", "completion_result", "plan_completion_result"})
REPLY_ASKS = frozenset({"followup", "plan_mode_respond", "act_mode_respond", "completion_result"})
CALLS = {"tool": "", "command": "execute_command", "browser_action_launch": "browser_action"}
CALLS.update({"browser_action": "browser_action", "use_mcp_server": "use_mcp_server", "use_subagents": "use_subagents"})
RESULTS = frozenset({"command_output", "browser_action_result", "mcp_server_response"})


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def request_times(ui: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """(start, end) in seconds of each model request the panel shows (``say: api_req_started``):
    the i-th is the i-th assistant message of the conversation history."""
    out: list[tuple[float, float]] = []
    for message in ui:
        ts = message.get("ts")
        when = ts / 1000.0 if isinstance(ts, (int, float)) and not isinstance(ts, bool) and ts > 0 else 0.0
        if message.get("say") == "api_req_started":
            out.append((when, when))
        elif out and when:
            out[-1] = (out[-1][0], max(out[-1][1], when))
    return out


def read_ui(prefix: str, ui: list[dict[str, Any]]) -> SessionBuilder:
    """A task's conversation and tool calls from its ui messages alone."""
    b = SessionBuilder()
    owner: str | None = None  # the assistant node the next tool call hangs under
    last_tool: str | None = None
    thinking: list[str] = []
    for index, message in enumerate(ui):
        kind = message.get("say") if message.get("type") == "say" else message.get("ask")
        kind = as_str(kind)
        text = as_str(message.get("text"))
        when = _seconds(message.get("ts"))
        sid = f"{prefix}:ui{index}"
        done = not message.get("partial")
        if kind in USER_SAYS:
            images = message.get("images")
            meta = {"images": len(images) if isinstance(images, list) and images else None}
            b.chain(sid, "user", text, created_at=when, metadata=meta, done=done)
            owner = last_tool = None
        elif kind == "reasoning":
            thinking.append(text)
        elif (message.get("type") == "say" and kind in REPLY_SAYS) or (
            message.get("type") == "ask" and kind in REPLY_ASKS
        ):
            if kind == "followup":
                asked = _json(text)
                text = as_str(asked.get("question")) if isinstance(asked, dict) else text
            if not text.strip():
                continue
            meta = {"thinking": "\n".join(thinking)}
            owner = b.chain(sid, "assistant", text, created_at=when, metadata=meta, done=done)
            thinking, last_tool = [], None
        elif kind in CALLS:
            if owner is None:
                owner = b.chain(
                    f"{sid}:reply", "assistant", "", created_at=when, metadata={"thinking": "\n".join(thinking)}
                )
                thinking = []
            name, call = _call(kind, text)
            content = as_str(call.get("content")) or as_str(call.get("diff")) if isinstance(call, dict) else ""
            last_tool = b.tool(sid, owner, name, call, content, created_at=when, done=done)
        elif kind in RESULTS and last_tool is not None:
            _append_result(b, last_tool, text)
        elif kind == "error" and text:
            b.chain(sid, "system", text, created_at=when, metadata={"error": True})
            owner = None
    return b


def _call(kind: str, text: str) -> tuple[str, Any]:
    value = _json(text)
    if kind == "tool" and isinstance(value, dict):
        return as_str(value.get("tool")) or "tool", value
    if kind == "command":
        return "execute_command", {"command": text}
    return CALLS[kind], value if value is not None else {"text": text}


def _append_result(b: SessionBuilder, tool_id: str, text: str) -> None:
    for i, node in enumerate(b.nodes):
        if node.id == tool_id:
            joined = f"{node.content}\n{text}" if node.content else text
            b.nodes[i] = replace(node, content=joined)
            return


def _seconds(ts: Any) -> float:
    if isinstance(ts, bool) or not isinstance(ts, (int, float)) or ts <= 0:
        return 0.0
    return ts / 1000.0
