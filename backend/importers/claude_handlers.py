"""What each Claude Code record does to the conversation: one handler per record type, and per
content block type of an assistant message (docs/import-formats.md has the table).

- a typed prompt -> user node (a turn starts); tool_result carriers, isMeta text, command echoes,
  interrupt markers and compaction summaries -> system nodes, never turn starts;
- assistant records sharing ``message.id`` (streaming split) -> one assistant node: text is the
  content, thinking goes to metadata, model and usage (once per message id + requestId) are kept;
- each ``tool_use`` -> a tool node (called_by = that assistant node) whose content is the paired
  ``tool_result`` (``is_error`` in metadata);
- progress, attachment, hook and bookkeeping records are structural: they only pass their place in
  the conversation on to their children (and are counted in the session's ``extra``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from .base import ImportFormatError
from .claude_builds import Build, Group, Tool
from .claude_queue import delivered, queue_operation, take_queued
from .claude_records import (
    AGENT_ID_RE,
    METADATA_TYPES,
    STRUCTURAL_SYSTEM,
    STRUCTURAL_TYPES,
    TURN_END_SYSTEM,
    block_text,
    small,
    snake,
    tokens,
    user_kind,
)
from .record_values import parse_time

if TYPE_CHECKING:
    from .claude_parser import ClaudeParser


class Rec(NamedTuple):
    """One record being applied: its data, type, (possibly line-qualified) uuid, parent uuid and line.

    A NamedTuple, not a frozen dataclass: one is made per record, and a frozen dataclass's
    __init__ (object.__setattr__ per field) cost 1.5% of the parse (A/B, 50 MB corpus)."""

    data: dict[str, Any]
    kind: str
    uuid: str | None
    parent_uuid: str | None
    line: int


Handler = Callable[["ClaudeParser", Build, Rec], None]


def apply(parser: ClaudeParser, build: Build, rec: Rec) -> None:
    handler = RECORDS.get(rec.kind)
    if build.taken is not None and rec.kind == "assistant":
        take_queued(parser, build)
    if handler is not None:
        handler(parser, build, rec)
        return
    parser.report.unknown(rec.kind)
    build.count(f"unknown:{rec.kind}")
    if rec.uuid is not None:  # keep its place so children still connect
        build.anchors[rec.uuid] = build.anchor(rec.parent_uuid)


# -- user records ----------------------------------------------------------------------------


def _user(parser: ClaudeParser, build: Build, rec: Rec) -> None:
    record, uuid, parent_uuid, line_no = rec.data, rec.uuid, rec.parent_uuid, rec.line
    message = record.get("message")
    if not isinstance(message, dict):
        raise ImportFormatError("user record without a 'message' object")
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise ImportFormatError("user message content must be a string or a list of blocks")
    stamp = record.get("timestamp")
    parent = build.anchor(parent_uuid)
    blocks = content if isinstance(content, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        called_by = _tool_results(parser, build, record, results, parent, stamp, uuid)
        if uuid is not None:
            build.anchors[uuid] = called_by if called_by is not None else parent
        rest = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        text = block_text(rest).strip() if rest else ""
        if text:
            sid = parser.chain_node(
                build,
                f"{uuid or f'line-{line_no}'}.text",
                "system",
                text,
                build.anchors.get(uuid) if uuid else parent,
                stamp,
                {"claude_type": "user", "kind": "tool_result_text", "uuid": uuid},
                None,
            )
            if uuid is not None:
                build.anchors[uuid] = sid
        return
    text = block_text(content) if content is not None else ""
    build.taken = None  # a dequeued prompt, if any, is this record
    images = sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "image")
    kind = user_kind(record, text)
    metadata: dict[str, Any] = {"claude_type": "user", "uuid": uuid}
    if images:
        metadata["images"] = images
    for key in ("permissionMode", "promptId", "isMeta", "isVisibleInTranscriptOnly"):
        value = record.get(key)
        if isinstance(value, (str, bool)) and value not in ("", False):
            metadata[snake(key)] = value
    if kind == "prompt":
        role = "user"
        parser.ensure_emitted(build, parent)
        parser.flush_waiting_tools(build)  # a new turn: calls still without a result get none
    else:
        role = "system"
        metadata["kind"] = kind
    sid = uuid or f"line-{line_no}"
    parser.chain_node(build, sid, role, text.strip() if role == "system" else text, parent, stamp, metadata, uuid)


def _tool_results(
    parser: ClaudeParser,
    build: Build,
    record: dict[str, Any],
    results: list[dict[str, Any]],
    parent: str | None,
    stamp: Any,
    uuid: str | None,
) -> str | None:
    """Pair each tool_result with its tool_use; returns the assistant node that called them."""
    called_by: str | None = None
    structured = record.get("toolUseResult")
    fallback_id = record.get("sourceToolUseID")
    when = parse_time(stamp)
    for index, block in enumerate(results):
        tool_id = block.get("tool_use_id")
        if not isinstance(tool_id, str) or not tool_id:
            tool_id = fallback_id if isinstance(fallback_id, str) and fallback_id and len(results) == 1 else None
        text = block_text(block.get("content"))
        if not text and isinstance(block.get("text"), str):
            text = block["text"]
        tool = build.tools.get(tool_id) if tool_id else None
        if tool is None:
            tool = _unpaired_tool(parser, build, record, parent)
        if tool is None:
            # A result whose call is not in this file (trimmed, compacted away): keep it.
            group = build.group_of.get(parent) if parent is not None else None
            if group is None:
                parser.chain_node(
                    build,
                    f"{uuid or 'result'}.r{index}",
                    "system",
                    text,
                    parent,
                    stamp,
                    {"claude_type": "user", "kind": "orphan_tool_result", "tool_use_id": tool_id, "uuid": uuid},
                    None,
                )
                continue
            tool = Tool(
                sid=tool_id or f"{uuid or 'result'}.r{index}",
                name=None,
                input=None,
                called_by=group.sid,
                created_at=when,
            )
            if tool.sid in build.tools:
                tool.sid = f"{tool.sid}.{uuid}"
            build.tools[tool.sid] = build.waiting[tool.sid] = tool
            group.tools.append(tool.sid)
        called_by = tool.called_by
        if tool.result is not None:
            build.count("duplicate_result")
            continue
        tool.result = text
        tool.result_at = when
        tool.is_error = block.get("is_error") is True
        if structured is not None and len(results) == 1:
            tool.result_meta = small(structured)
            if isinstance(structured, dict):
                agent_id = structured.get("agentId")
                if isinstance(agent_id, str) and agent_id:
                    build.links[agent_id] = tool.sid
                    build.meta_dirty = True
        match = AGENT_ID_RE.search(text[-400:]) if tool.name in ("Task", "Agent") else None
        if match and match.group(1) not in build.links:
            build.links[match.group(1)] = tool.sid
            build.meta_dirty = True
        group = build.groups.get(tool.called_by)
        if group is not None and group.emitted:
            parser.emit_tool(build, tool)
    return called_by


def _unpaired_tool(parser: ClaudeParser, build: Build, record: dict[str, Any], parent: str | None) -> Tool | None:
    """A result without a usable tool_use_id pairs with the caller's first call still waiting."""
    source = record.get("sourceToolAssistantUUID")
    caller = build.anchors.get(source) if isinstance(source, str) else parent
    group = build.group_of.get(caller) if caller is not None else None
    if group is None:
        return None
    for tool_id in group.tools:
        tool = build.tools[tool_id]
        if tool.result is None:
            return tool
    return None


# -- assistant records -----------------------------------------------------------------------


def _assistant(parser: ClaudeParser, build: Build, rec: Rec) -> None:
    message = rec.data.get("message")
    if not isinstance(message, dict):
        raise ImportFormatError("assistant record without a 'message' object")
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    elif content is None:
        content = []
    elif not isinstance(content, list):
        raise ImportFormatError("assistant message content must be a list of blocks")
    message_id = message.get("id")
    key = message_id if isinstance(message_id, str) and message_id else (rec.uuid or f"line-{rec.line}")
    group = build.groups.get(key) or _group(parser, build, rec, key, content)
    if rec.uuid is not None:
        build.anchors[rec.uuid] = group.last
    _group_facts(build, group, rec.data, message, key)
    blocks = _Blocks(rec)
    for index, block in enumerate(content):
        if isinstance(block, dict):
            kind = block.get("type")
            handler = BLOCKS.get(kind) if isinstance(kind, str) else None
            if handler is None and isinstance(kind, str) and kind.endswith("_tool_result"):
                handler = _server_tool_result
            (handler or _other_block)(build, group, block, index, blocks)
    if blocks.late_text or blocks.late_thinking:
        _continuation(
            parser, build, group, blocks.late_text, blocks.late_thinking, rec.uuid, rec.data.get("timestamp"), rec.line
        )
    if group.emitted:
        for tool_id in group.tools:
            tool = build.tools[tool_id]
            if tool.result is not None and not tool.emitted:
                parser.emit_tool(build, tool)


def _group(parser: ClaudeParser, build: Build, rec: Rec, key: str, content: list[Any]) -> Group:
    """The model call a new message id starts (or the one it replays)."""
    stamp = str(rec.data.get("timestamp"))
    first_text = next((b.get("text") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)), "")
    parent, same = build.resolve_parent(build.anchor(rec.parent_uuid), "assistant", stamp, first_text)
    if same is not None and same in build.group_of:
        return build.group_of[same]
    sid = key if key not in build.parent_of else f"{key}.l{rec.line}"
    parser.ensure_emitted(build, parent)
    group = Group(sid=sid, parent=parent, created_at=parse_time(rec.data.get("timestamp")), uuid=rec.uuid, last=sid)
    build.groups[key] = group
    build.groups[sid] = group
    build.group_of[sid] = group
    build.open_groups[sid] = group
    build.register_chain(sid, parent, "assistant", stamp, first_text)
    return group


def _group_facts(build: Build, group: Group, record: dict[str, Any], message: dict[str, Any], key: str) -> None:
    """Model, request id, stop reason, usage and flags a record of the call carries."""
    model = message.get("model")
    if isinstance(model, str) and model:
        group.model = model
        if model == "<synthetic>":
            group.synthetic = True
        elif model != build.model:
            build.model = model
            build.meta_dirty = True
    if record.get("isApiErrorMessage") is True:
        group.synthetic = True
        group.flags["api_error"] = True
    request_id = record.get("requestId")
    if isinstance(request_id, str) and request_id:
        group.request_id = request_id
    stop = message.get("stop_reason")
    if isinstance(stop, str):
        group.stop_reason = stop
    usage = message.get("usage")
    if isinstance(usage, dict):
        _usage(build, group, key, usage)
    for flag in ("isAbortedMidStream", "supersedesUuids", "effort", "error"):
        value = record.get(flag)
        if value not in (None, False, "", []):
            group.flags[snake(flag)] = small(value, 512)


@dataclass(slots=True)
class _Blocks:
    """The record whose content blocks are read, and the text that came after its node was written."""

    rec: Rec
    late_text: list[str] = field(default_factory=list)
    late_thinking: list[str] = field(default_factory=list)


def _text_block(build: Build, group: Group, block: dict[str, Any], index: int, blocks: _Blocks) -> None:
    kind = block["type"]
    value = block.get(kind)
    if not isinstance(value, str):
        return
    mark = hash((kind, value))
    if mark in group.seen_blocks:
        return
    group.seen_blocks.add(mark)
    group.last_block = kind
    if group.emitted:
        (blocks.late_text if kind == "text" else blocks.late_thinking).append(value)
    else:
        (group.texts if kind == "text" else group.thinking).append(value)


def _redacted_thinking(build: Build, group: Group, block: dict[str, Any], index: int, blocks: _Blocks) -> None:
    group.other_blocks["redacted_thinking"] = group.other_blocks.get("redacted_thinking", 0) + 1
    group.last_block = "thinking"


def _tool_use(build: Build, group: Group, block: dict[str, Any], index: int, blocks: _Blocks) -> None:
    group.last_block = "tool_use"
    tool_id = block.get("id")
    if not isinstance(tool_id, str) or not tool_id:
        tool_id = f"{blocks.rec.uuid or f'line-{blocks.rec.line}'}.t{index}"
    if tool_id in build.tools:
        return
    name = block.get("name")
    build.tools[tool_id] = build.waiting[tool_id] = Tool(
        sid=tool_id,
        name=name if isinstance(name, str) else None,
        input=block.get("input"),
        called_by=group.sid,
        created_at=parse_time(blocks.rec.data.get("timestamp")),
        caller=block.get("caller"),
    )
    group.tools.append(tool_id)


def _server_tool_result(build: Build, group: Group, block: dict[str, Any], index: int, blocks: _Blocks) -> None:
    tool_id = block.get("tool_use_id")
    tool = build.tools.get(tool_id) if isinstance(tool_id, str) else None
    if tool is not None and tool.result is None:
        tool.result = block_text(block.get("content"))
        tool.result_at = parse_time(blocks.rec.data.get("timestamp"))


def _other_block(build: Build, group: Group, block: dict[str, Any], index: int, blocks: _Blocks) -> None:
    kind = block.get("type")
    name = kind if isinstance(kind, str) else "?"
    group.other_blocks[name] = group.other_blocks.get(name, 0) + 1


BlockHandler = Callable[[Build, Group, dict[str, Any], int, _Blocks], None]
BLOCKS: dict[str, BlockHandler] = {
    "text": _text_block,
    "thinking": _text_block,
    "redacted_thinking": _redacted_thinking,
    "tool_use": _tool_use,
    "server_tool_use": _tool_use,
    "web_search_tool_result": _server_tool_result,
}


def _usage(build: Build, group: Group, key: str, usage: dict[str, Any]) -> None:
    # Streaming records repeat the usage of their call; keep one per (message id, request id),
    # the one with the most output tokens (later records are more complete).
    ident = (key, group.request_id)
    known = build.usage.get(ident)
    if known is None or tokens(usage, "output_tokens") >= tokens(known, "output_tokens"):
        build.usage[ident] = usage
        group.usage = usage


def _continuation(
    parser: ClaudeParser,
    build: Build,
    group: Group,
    texts: list[str],
    thinking: list[str],
    uuid: str | None,
    stamp: Any,
    line_no: int,
) -> None:
    """Blocks of a model call that arrive after its node was written become a follow-on node."""
    content = "\n\n".join(t.strip() for t in texts if t.strip())
    sid = parser.chain_node(
        build,
        f"{uuid or f'line-{line_no}'}.cont",
        "assistant",
        content,
        group.last,
        stamp,
        {
            "claude_type": "assistant",
            "continuation_of": group.sid,
            "model": group.model,
            **({"thinking": "\n\n".join(thinking)} if thinking else {}),
        },
        uuid,
    )
    group.last = sid
    build.group_of[sid] = group


# -- system, structural, queue and metadata records ------------------------------------------


def _system(parser: ClaudeParser, build: Build, rec: Rec) -> None:
    record, uuid, parent_uuid, line_no = rec.data, rec.uuid, rec.parent_uuid, rec.line
    subtype = record.get("subtype")
    subtype = subtype if isinstance(subtype, str) else ""
    stamp = record.get("timestamp")
    if subtype == "compact_boundary":
        logical = record.get("logicalParentUuid")
        parent = (
            build.anchors.get(logical)
            if isinstance(logical, str) and logical in build.anchors
            else build.anchor(parent_uuid)
        )
        meta = record.get("compactMetadata")
        metadata = {"claude_type": "system", "subtype": subtype, "kind": "compact_boundary", "uuid": uuid}
        if isinstance(meta, dict):
            metadata["compact"] = small(meta, 1024)
        content = record.get("content") if isinstance(record.get("content"), str) else ""
        parser.chain_node(
            build,
            uuid or f"line-{line_no}",
            "system",
            content or "Conversation compacted",
            parent,
            stamp,
            metadata,
            uuid,
        )
        return
    parent = build.anchor(parent_uuid)
    if subtype in STRUCTURAL_SYSTEM:
        build.count(f"system:{subtype}")
        if subtype == "api_error":
            build.extra["last_api_error"] = small(record.get("error"), 512)
        if subtype in TURN_END_SYSTEM and parent is not None and parent in build.open_groups:
            parser.flush_group(build, build.open_groups[parent])
        if uuid is not None:
            build.anchors[uuid] = parent
        return
    content = record.get("content")
    text = content if isinstance(content, str) else (block_text(content) if content is not None else "")
    if not text:
        error = record.get("error")
        text = error.get("message", "") if isinstance(error, dict) and isinstance(error.get("message"), str) else ""
    metadata = {"claude_type": "system", "subtype": subtype, "uuid": uuid}
    level = record.get("level")
    if isinstance(level, str):
        metadata["level"] = level
    for key in ("apiRefusalCategory", "apiRefusalExplanation", "originalModel", "fallbackModel", "error"):
        value = record.get(key)
        if value not in (None, ""):
            metadata[snake(key)] = small(value, 512)
    if not text and subtype not in (
        "local_command",
        "api_refusal",
        "model_refusal_fallback",
        "error",
        "informational",
    ):
        build.count(f"system:{subtype or '?'}")
        if uuid is not None:
            build.anchors[uuid] = parent
        return
    parser.chain_node(build, uuid or f"line-{line_no}", "system", text, parent, stamp, metadata, uuid)


def _structural(parser: ClaudeParser, build: Build, rec: Rec) -> None:
    record, kind, uuid = rec.data, rec.kind, rec.uuid
    parent = build.anchor(rec.parent_uuid)
    if uuid is not None:
        build.anchors[uuid] = parent
    data = record.get("data") if kind == "progress" else record.get("attachment")
    if not isinstance(data, dict):
        return
    sub = data.get("type")
    if isinstance(sub, str):
        build.count(f"{kind}:{sub}")
    if kind == "progress" and sub == "agent_progress":
        agent_id = data.get("agentId")
        tool_id = record.get("parentToolUseID")
        if isinstance(agent_id, str) and isinstance(tool_id, str) and agent_id not in build.links:
            build.links[agent_id] = tool_id
            build.meta_dirty = True
    elif kind == "attachment" and sub == "queued_command":
        prompt = data.get("prompt")
        text = block_text(prompt) if prompt is not None else ""
        if text:
            delivered(parser, build, rec.data, data, text, parent, rec.uuid, rec.line)


def _metadata(parser: ClaudeParser, build: Build, rec: Rec) -> None:
    record, kind = rec.data, rec.kind
    if kind == "custom-title":
        build.title("user", record.get("customTitle") or record.get("title"))
    elif kind == "ai-title":
        build.title("llm", record.get("aiTitle") or record.get("title"))
    elif kind == "summary":
        leaf = record.get("leafUuid")
        summary = record.get("summary")
        if isinstance(leaf, str) and leaf in build.anchors:
            build.title("summary", summary)
        elif isinstance(leaf, str) and isinstance(summary, str) and summary:
            build.summaries[leaf] = summary  # often written before the record it names
    elif kind == "agent-name":
        build.set_extra("agent_name", record.get("agentName"))
    elif kind == "last-prompt":
        build.set_extra("last_prompt", small(record.get("lastPrompt"), 512))
    elif kind == "permission-mode":
        build.set_extra("permission_mode", record.get("permissionMode"))
    elif kind == "mode":
        build.set_extra("mode", record.get("mode"))
    elif kind == "pr-link":
        links = list(build.extra.get("pr_links", []))
        entry = {k: record.get(k) for k in ("prNumber", "prUrl", "prRepository") if record.get(k) is not None}
        if entry and entry not in links:
            links.append(small(entry, 512))
            build.set_extra("pr_links", links)
    elif kind == "worktree-state":
        build.set_extra("worktree", small(record.get("worktreeSession"), 1024))
    elif kind == "relocated":
        build.set_extra("relocated_cwd", record.get("relocatedCwd"))


RECORDS: dict[str, Handler] = {
    "user": _user,
    "assistant": _assistant,
    "system": _system,
    **dict.fromkeys(STRUCTURAL_TYPES, _structural),
    "queue-operation": queue_operation,
    **dict.fromkeys(METADATA_TYPES, _metadata),
}
