"""Codex rollout lines: the record envelope, the item and event kinds, and typed payload accessors.

Accessors raise ImportFormatError for a value of the wrong shape, never TypeError or KeyError.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .base import ImportFormatError
from .record_values import as_text, load_object, parse_time

TOP_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication_metadata",
    }
)
OUTPUT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "tool_search_output", "local_shell_call_output"}
)
# Calls that never get an output item: complete when written.
SELF_CONTAINED_CALLS = frozenset({"web_search_call", "image_generation_call"})
IGNORED_ITEMS = frozenset({"other"})
# Events that add nothing the response items do not already hold, or only UI state.
IGNORED_EVENTS = frozenset(
    {
        "agent_reasoning_raw_content",
        "agent_reasoning_section_break",
        "agent_reasoning_delta",
        "context_compacted",
        "entered_review_mode",
        "undo_started",
        "undo_completed",
        "thread_goal_updated",
        "thread_settings_applied",
        "guardian_assessment",
        "sub_agent_activity",
        "session_configured",
        "mcp_list_tools_response",
        "list_custom_prompts_response",
        "plan_update",
        "shutdown_complete",
        "background_event",
        "stream_error",
        "warning",
        "deprecation_notice",
        "turn_diff",
        "get_history_entry_response",
        "conversation_path",
        "exec_approval_request",
        "apply_patch_approval_request",
        "request_user_input",
        "elicitation_request",
        "mcp_startup_update",
        "mcp_startup_complete",
        "collab_waiting_end",
        "collab_close_end",
        "collab_agent_interaction_end",
        "dynamic_tool_call_request",
        "raw_response_item",
    }
)
# Events that repeat what a call's output already says; their exit code etc. goes to metadata.
CALL_END_EVENTS = frozenset(
    {
        "exec_command_end",
        "mcp_tool_call_end",
        "patch_apply_end",
        "web_search_end",
        "dynamic_tool_call_response",
        "view_image_tool_call",
        "image_generation_end",
    }
)
INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "# AGENTS.md instructions",
    "# agents.md instructions",
)
WHOLE_TAG = re.compile(r"\A<([A-Za-z_][\w -]{0,60})>.*</\1>\Z", re.S)
INJECTED_KINDS = frozenset({"user_instructions", "environment_context"})


# ---------------------------------------------------------------------------------------------
# the line parser


@dataclass(frozen=True, slots=True)
class CodexRecord:
    kind: str  # a TOP_TYPES member, an unknown top-level type, or "legacy_state"
    payload: dict[str, Any]
    timestamp: float


def parse_line(text: str) -> CodexRecord:
    """One rollout line -> a record. Raises only ImportFormatError."""
    obj = load_object(text)
    stamp = parse_time(obj.get("timestamp"))
    if "payload" in obj or (isinstance(obj.get("type"), str) and obj["type"] in TOP_TYPES):
        kind = obj.get("type")
        if not isinstance(kind, str) or not kind:
            raise ImportFormatError("record has no 'type'")
        payload = obj.get("payload", {})
        if payload is None:
            payload = {}
        if not isinstance(payload, dict):
            raise ImportFormatError(f"'{kind}' payload must be a JSON object")
        return CodexRecord(kind, payload, stamp)
    # Builds from before mid-2025: bare SessionMeta, bare ResponseItems, state lines.
    if "record_type" in obj:
        return CodexRecord("legacy_state", obj, stamp)
    if isinstance(obj.get("type"), str):
        return CodexRecord("response_item", obj, stamp)
    if "id" in obj and ("instructions" in obj or "timestamp" in obj):
        return CodexRecord("session_meta", obj, stamp)
    raise ImportFormatError("unrecognised record: no 'type' and no session fields")


# ---------------------------------------------------------------------------------------------
# payload accessors: wrong shapes become ImportFormatError, never TypeError/KeyError


def text_field(payload: dict[str, Any], key: str, default: str = "") -> str:
    value = payload.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ImportFormatError(f"'{key}' must be a string")
    return value


def object_field(payload: dict[str, Any], key: str) -> dict[str, Any]:
    value = payload.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ImportFormatError(f"'{key}' must be a JSON object")
    return value


def content_text(payload: dict[str, Any]) -> str:
    content = payload.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise ImportFormatError("message 'content' must be a list of parts")
    texts = []
    for part in content:
        if isinstance(part, dict):
            text = part.get("text")
            if isinstance(text, str):
                texts.append(text)
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts)


def parse_arguments(value: Any) -> Any:
    """Call arguments are a JSON string in most builds; keep the raw text when it is not JSON."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def output_text(value: Any) -> tuple[str, dict[str, Any]]:
    """A call output -> (text, metadata). 0.58 wraps it in {"output", "metadata"} JSON text."""
    meta: dict[str, Any] = {}
    if isinstance(value, str):
        stripped = value.lstrip()
        if stripped.startswith("{"):
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                parsed = None
            if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
                inner = parsed.get("metadata")
                if isinstance(inner, dict):
                    for key in ("exit_code", "duration_seconds"):
                        if key in inner:
                            meta[key] = inner[key]
                return parsed["output"], meta
        return value, meta
    if isinstance(value, dict) and isinstance(value.get("success"), bool):
        meta["success"] = value["success"]
    return as_text(value), meta


def is_injected(text: str) -> bool:
    stripped = text.lstrip()
    if stripped.startswith(INJECTED_PREFIXES):
        return True
    return bool(WHOLE_TAG.match(stripped.rstrip()))


def same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())
