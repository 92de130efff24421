"""What each Codex record does to the conversation: one handler per record, item and event type.

`apply(reader, record)` looks the record up in the tables below; a type no table knows is
counted as unknown (docs/import-formats.md lists what each one becomes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import ImportFormatError
from .codex_records import (
    CALL_END_EVENTS,
    IGNORED_EVENTS,
    IGNORED_ITEMS,
    INJECTED_KINDS,
    OUTPUT_ITEMS,
    SELF_CONTAINED_CALLS,
    CodexRecord,
    content_text,
    is_injected,
    object_field,
    output_text,
    parse_arguments,
    text_field,
)
from .record_values import as_text, count_images

if TYPE_CHECKING:
    from .codex_reader import CodexReader

Handler = Callable[["CodexReader", dict[str, Any]], None]
IGNORED_TOP = frozenset({"world_state", "inter_agent_communication_metadata", "legacy_state"})


def apply(reader: CodexReader, record: CodexRecord) -> None:
    kind = record.kind
    if kind == "response_item" or kind == "event_msg":
        p = record.payload
        sub = p.get("type")
        if not isinstance(sub, str):
            raise ImportFormatError(f"{kind} has no 'type'")
        table, ignored = (ITEMS, IGNORED_ITEMS) if kind == "response_item" else (EVENTS, IGNORED_EVENTS)
        handler = table.get(sub)
        if handler is not None:
            handler(reader, p)
        elif sub not in ignored:
            reader.report.unknown(f"codex:{kind}:{sub}")
    elif kind == "session_meta":
        reader.session_meta(record.payload, record.timestamp)
    elif kind in TOP:
        TOP[kind](reader, record.payload)
    elif kind not in IGNORED_TOP:
        reader.report.unknown(f"codex:{kind}")


# -- top-level records -----------------------------------------------------------------------


def _turn_context(reader: CodexReader, p: dict[str, Any]) -> None:
    reader.model = text_field(p, "model") or reader.model
    reader.cwd = reader.cwd or text_field(p, "cwd")


def _compacted(reader: CodexReader, p: dict[str, Any]) -> None:
    message = text_field(p, "message")
    history = p.get("replacement_history")
    items = history if isinstance(history, list) else []
    if not message and items:
        lines = [
            f"[{item.get('role', '?')}] {content_text(item)}"
            for item in items
            if isinstance(item, dict) and item.get("type") == "message"
        ]
        message = "\n\n".join(lines)
    meta: dict[str, Any] = {"compacted": True, "replacement_items": len(items)}
    for key in ("window_id", "previous_window_id"):
        if isinstance(p.get(key), str):
            meta[key] = p[key]
    reader.system(message or "[context compacted]", meta)


TOP: dict[str, Handler] = {"turn_context": _turn_context, "compacted": _compacted}


# -- response items ------------------------------------------------------------------------


def _message(reader: CodexReader, p: dict[str, Any]) -> None:
    role = text_field(p, "role")
    text = content_text(p)
    extra = {"codex_id": p["id"]} if isinstance(p.get("id"), str) else {}
    if role == "assistant":
        reader.assistant_text(text, "item", text_field(p, "phase"), extra)
    elif role == "user" and not is_injected(text):
        reader.prompt_text(text, "item", {"images": count_images(p.get("content"))} | extra)
    elif role == "user":
        reader.system(text, {"injected": True, **extra})
    else:  # developer / system instructions
        reader.system(text, {"injected": True, "codex_role": role, **extra})


def _reasoning(reader: CodexReader, p: dict[str, Any]) -> None:
    summary = p.get("summary")
    texts = [as_text(s) for s in summary] if isinstance(summary, list) else []
    owner = reader.model_output()
    for text in texts:
        reader.add_reasoning(text, "item")
    if not texts and p.get("encrypted_content"):
        owner.metadata["encrypted_reasoning"] = True


def _call_id(p: dict[str, Any]) -> str | None:
    call_id = p.get("call_id")
    if call_id is not None and not isinstance(call_id, str):
        raise ImportFormatError("'call_id' must be a string")
    return call_id or None


# item type -> (tool name, its arguments) of a call item
CALL_SHAPES: dict[str, Callable[[dict[str, Any]], tuple[str, Any]]] = {
    "function_call": lambda p: (text_field(p, "name"), parse_arguments(p.get("arguments"))),
    "custom_tool_call": lambda p: (text_field(p, "name"), parse_arguments(p.get("input"))),
    "local_shell_call": lambda p: ("local_shell", p.get("action")),
    "tool_search_call": lambda p: ("tool_search", p.get("arguments")),
    "web_search_call": lambda p: ("web_search", p.get("action")),
    "image_generation_call": lambda p: ("image_generation", {"revised_prompt": p.get("revised_prompt")}),
}
CALL_ITEMS = frozenset(CALL_SHAPES)


def _call(reader: CodexReader, p: dict[str, Any]) -> None:
    item = p["type"]
    call_id = _call_id(p)
    name, args = CALL_SHAPES[item](p)
    if isinstance(p.get("namespace"), str) and p["namespace"]:
        name = f"{p['namespace']}.{name}"
    owner = reader.model_output()
    meta: dict[str, Any] = {"codex_type": item}
    if call_id:
        meta["call_id"] = call_id
    if isinstance(p.get("status"), str):
        meta["status"] = p["status"]
    content = ""
    if item == "web_search_call" and isinstance(args, dict):
        content = as_text(args.get("query") or args.get("url") or "")
    tool = reader.tool(reader.synthetic_id(call_id), owner, content, name or "tool", args, meta)
    owner.metadata.setdefault("tool_calls", []).append(tool.id)
    if item in SELF_CONTAINED_CALLS or not call_id:
        reader.graph.settle(tool, reader.offset)
    else:
        reader.pending_calls[call_id] = tool


def _output(reader: CodexReader, p: dict[str, Any]) -> None:
    item = p["type"]
    call_id = _call_id(p)
    text, meta = output_text(p.get("tools") if item == "tool_search_output" else p.get("output"))
    reader.group_open = False
    tool = reader.pending_calls.pop(call_id, None) if call_id else None
    if tool is None:
        owner = reader.assistant
        if owner is None:
            raise ImportFormatError(f"{item} for unknown call {call_id!r} before any model response")
        meta = {"call_id": call_id, "unpaired": True, "codex_type": item, **meta}
        tool = reader.tool(reader.synthetic_id(), owner, text, "output", None, meta)
    else:
        tool.content = text
        tool.metadata.update(meta)
    reader.graph.settle(tool, reader.offset)
    reader.settle_assistant_if_done()


def _ghost_snapshot(reader: CodexReader, p: dict[str, Any]) -> None:
    commit = object_field(p, "ghost_commit").get("id")
    if isinstance(commit, str):
        reader.ghosts.append(commit)
        if reader.prompt is not None and not reader.prompt.settled:
            reader.prompt.metadata["ghost_commit"] = commit


def _agent_message_item(reader: CodexReader, p: dict[str, Any]) -> None:
    # A message from another agent of the same run (multi-agent builds).
    meta = {"agent_message": True, "author": p.get("author"), "recipient": p.get("recipient")}
    reader.system(content_text(p), meta)


ITEMS: dict[str, Handler] = {
    "message": _message,
    "reasoning": _reasoning,
    **dict.fromkeys(CALL_ITEMS, _call),
    **dict.fromkeys(OUTPUT_ITEMS, _output),
    "compaction": lambda reader, p: reader.system("[context compacted]", {"compaction": True}),
    "ghost_snapshot": _ghost_snapshot,
    "agent_message": _agent_message_item,
}


# -- events ----------------------------------------------------------------------------------


def _user_message(reader: CodexReader, p: dict[str, Any]) -> None:
    text = text_field(p, "message")
    kind = p.get("kind")
    if (isinstance(kind, str) and kind.lower() in INJECTED_KINDS) or is_injected(text):
        reader.system(text, {"injected": True}, origin="event")
        return
    images = sum(len(p[key]) for key in ("images", "local_images") if isinstance(p.get(key), list))
    reader.prompt_text(text, "event", {"images": images})


def _token_count(reader: CodexReader, p: dict[str, Any]) -> None:
    info = p.get("info")
    if isinstance(info, dict):
        usage = {k: info[k] for k in ("last_token_usage", "total_token_usage", "model_context_window") if k in info}
        reader.token_count(usage, info.get("total_token_usage"))


def _turn_started(reader: CodexReader, p: dict[str, Any]) -> None:
    turn_id = p.get("turn_id")
    if not isinstance(turn_id, str):
        return
    prompt = reader.prompt
    if prompt is not None and not prompt.settled and "turn_id" not in prompt.metadata:
        prompt.metadata["turn_id"] = turn_id
    else:
        reader.pending_turn_id = turn_id


def _turn_complete(reader: CodexReader, p: dict[str, Any]) -> None:
    assistant = reader.assistant
    if assistant is not None and not assistant.settled:
        for key in ("duration_ms", "time_to_first_token_ms"):
            if isinstance(p.get(key), (int, float)):
                assistant.metadata[key] = p[key]
        if isinstance(p.get("error"), dict):
            assistant.metadata["error"] = as_text(p["error"].get("message"))
    reader.end_turn()


def _turn_aborted(reader: CodexReader, p: dict[str, Any]) -> None:
    last = reader.unsettled_chain[-1] if reader.unsettled_chain else None
    if last is not None and not last.settled:
        last.metadata["turn_aborted"] = text_field(p, "reason") or "aborted"
    reader.end_turn()


def _thread_name_updated(reader: CodexReader, p: dict[str, Any]) -> None:
    reader.title = text_field(p, "thread_name") or reader.title


def _review(reader: CodexReader, p: dict[str, Any]) -> None:
    output = object_field(p, "review_output")
    lines = ["review:"]
    explanation = output.get("overall_explanation")
    if isinstance(explanation, str) and explanation:
        lines.append(explanation)
    findings = output.get("findings")
    for finding in findings if isinstance(findings, list) else []:
        if isinstance(finding, dict):
            lines.append(f"- {as_text(finding.get('title'))}: {as_text(finding.get('body'))}")
    reader.system("\n".join(lines), {"review": True})


def _spawn_end(reader: CodexReader, p: dict[str, Any]) -> None:
    thread = p.get("new_thread_id")
    if not isinstance(thread, str):
        return
    call = reader.graph.get(p.get("call_id")) if isinstance(p.get("call_id"), str) else None
    anchor = call or reader.assistant or reader.graph.get(reader.head)
    if anchor is not None:
        reader.spawned[thread] = anchor.id
        if not anchor.settled:
            anchor.metadata.setdefault("spawned_threads", []).append(thread)


def _call_end(reader: CodexReader, p: dict[str, Any]) -> None:
    call_id = p.get("call_id")
    tool = reader.pending_calls.get(call_id) if isinstance(call_id, str) else None
    if tool is not None:
        for key in ("exit_code", "status", "success"):
            if isinstance(p.get(key), (int, str, bool)):
                tool.metadata.setdefault(key, p[key])


def _plan(reader: CodexReader, item: dict[str, Any]) -> None:
    if reader.assistant is not None and not reader.assistant.settled:
        reader.assistant.metadata["plan"] = as_text(item.get("text"))


def _reasoning_completed(reader: CodexReader, item: dict[str, Any]) -> None:
    texts = item.get("summary_text")
    for text in texts if isinstance(texts, list) else []:
        reader.add_reasoning(as_text(text), "item_completed")


COMPLETED_ITEMS: dict[str, Handler] = {
    "UserMessage": lambda reader, item: reader.prompt_text(as_text(item.get("content")), "item_completed", {}),
    "AgentMessage": lambda reader, item: reader.assistant_text(as_text(item.get("content")), "item_completed", "", {}),
    "Reasoning": _reasoning_completed,
    "Plan": _plan,
}


def _item_completed(reader: CodexReader, p: dict[str, Any]) -> None:
    item = object_field(p, "item")
    kind = item.get("type")
    handler = COMPLETED_ITEMS.get(kind) if isinstance(kind, str) else None
    if handler is not None:
        handler(reader, item)


EVENTS: dict[str, Handler] = {
    "user_message": _user_message,
    "agent_message": lambda reader, p: reader.assistant_text(
        text_field(p, "message"), "event", text_field(p, "phase"), {}
    ),
    "agent_reasoning": lambda reader, p: reader.add_reasoning(text_field(p, "text"), "event"),
    "token_count": _token_count,
    "task_started": _turn_started,
    "turn_started": _turn_started,
    "task_complete": _turn_complete,
    "turn_complete": _turn_complete,
    "turn_aborted": _turn_aborted,
    "thread_rolled_back": lambda reader, p: reader.rollback(p.get("num_turns")),
    "thread_name_updated": _thread_name_updated,
    "error": lambda reader, p: reader.system(f"error: {text_field(p, 'message')}", {"event": "error"}),
    "exited_review_mode": _review,
    "item_completed": _item_completed,
    "collab_agent_spawn_end": _spawn_end,
    **dict.fromkeys(CALL_END_EVENTS, _call_end),
}
