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

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .base import ImportedSession, ImportFormatError, ImportReport
from .drafts import Draft, DraftGraph, LineParser, as_text, count_images, feed_file, is_final, parse_time

SOURCE = "codex"
LOOKS_FOR = "rollout-*.jsonl"  # what discover() finds, for "nothing to import"

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
CALL_ITEMS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "tool_search_call",
        "web_search_call",
        "image_generation_call",
    }
)
OUTPUT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "tool_search_output", "local_shell_call_output"}
)
# Calls that never get an output item: complete when written.
SELF_CONTAINED_CALLS = frozenset({"web_search_call", "image_generation_call"})
IGNORED_ITEMS = frozenset({"ghost_snapshot", "other"})
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
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "# AGENTS.md instructions",
    "# agents.md instructions",
)
_WHOLE_TAG = re.compile(r"\A<([A-Za-z_][\w -]{0,60})>.*</\1>\Z", re.S)
_INJECTED_KINDS = frozenset({"user_instructions", "environment_context"})


# ---------------------------------------------------------------------------------------------
# the line parser


@dataclass(frozen=True, slots=True)
class CodexRecord:
    kind: str  # a TOP_TYPES member, an unknown top-level type, or "legacy_state"
    payload: dict[str, Any]
    timestamp: float


def parse_line(text: str) -> CodexRecord:
    """One rollout line -> a record. Raises only ImportFormatError."""
    try:
        obj = json.loads(text)
    except RecursionError:
        raise ImportFormatError("record nested too deeply") from None
    except ValueError as exc:
        raise ImportFormatError(f"not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise ImportFormatError(f"a record must be a JSON object, not {type(obj).__name__}")
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


def _str(payload: dict[str, Any], key: str, default: str = "") -> str:
    value = payload.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ImportFormatError(f"'{key}' must be a string")
    return value


def _dict(payload: dict[str, Any], key: str) -> dict[str, Any]:
    value = payload.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ImportFormatError(f"'{key}' must be a JSON object")
    return value


def _content_text(payload: dict[str, Any]) -> str:
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


def _parse_arguments(value: Any) -> Any:
    """Call arguments are a JSON string in most builds; keep the raw text when it is not JSON."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _output_text(value: Any) -> tuple[str, dict[str, Any]]:
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


def _is_injected(text: str) -> bool:
    stripped = text.lstrip()
    if stripped.startswith(_INJECTED_PREFIXES):
        return True
    return bool(_WHOLE_TAG.match(stripped.rstrip()))


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


# ---------------------------------------------------------------------------------------------
# the reader: feeds records into a DraftGraph


class CodexReader:
    """Builds one session from the records of one rollout, in file order."""

    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path = path
        self.report = report
        self.graph = DraftGraph()
        self.meta: dict[str, Any] | None = None
        self.meta_time = 0.0
        self.ancestor_ids: list[str] = []
        self.replay_open = False
        self.head: str | None = None  # tip of the effective chain
        self.turn_users: list[str] = []  # user nodes on the effective chain, oldest first
        self.unsettled_chain: list[Draft] = []
        self.assistant: Draft | None = None  # the latest assistant node
        self.group_open = False  # model-output items still join self.assistant
        self.pending_calls: dict[str, Draft] = {}
        self.prompt: Draft | None = None  # the latest user node
        self.prompt_origins: set[str] = set()
        self.tentative: list[Draft] = []  # user items no user_message event has matched yet
        self.user_events = False  # the rollout writes user_message events
        self.system_origins: dict[str, set[str]] = {}  # injected node -> the copies seen (item, event)
        self.after_prompt_only_system = False
        self.messages: list[tuple[str, set[str]]] = []  # assistant texts of self.assistant
        self.reasoning: list[tuple[str, set[str]]] = []
        self.last_total: Any = None
        self.pending_usage: dict[str, Any] | None = None
        self.pending_turn_id: str | None = None
        self.pending_rollback: int | None = None
        self.model = ""
        self.cwd = ""
        self.title = ""
        self.rollbacks: list[dict[str, Any]] = []
        self.spawned: dict[str, str] = {}
        self.ghosts: list[str] = []
        self.prefix = path.name
        self.offset, self.line, self.time = 0, 0, 0.0  # of the record being applied

    # -- records -------------------------------------------------------------------------

    def feed(self, record: CodexRecord, offset: int, line: int) -> None:
        """Apply one record. Raises only ImportFormatError."""
        self.offset, self.line, self.time = offset, line, record.timestamp
        # A fork's copied lines are re-stamped to the fork instant; the first genuine one is later.
        if (
            self.replay_open
            and record.kind != "session_meta"
            and record.timestamp
            and self.meta_time
            and record.timestamp > self.meta_time + 1.0
        ):
            self.replay_open = False
        kind, payload = record.kind, record.payload
        if kind == "session_meta":
            self._session_meta(payload, record.timestamp)
        elif kind == "response_item":
            self._response_item(payload)
        elif kind == "event_msg":
            self._event(payload)
        elif kind == "turn_context":
            self.model = _str(payload, "model") or self.model
            self.cwd = self.cwd or _str(payload, "cwd")
        elif kind == "compacted":
            self._compacted(payload)
        elif kind in ("world_state", "inter_agent_communication_metadata", "legacy_state"):
            pass
        else:
            self.report.unknown(f"codex:{kind}")

    def _session_meta(self, payload: dict[str, Any], stamp: float) -> None:
        native = payload.get("id") or payload.get("session_id")
        if native is not None and not isinstance(native, str):
            raise ImportFormatError("session_meta 'id' must be a string")
        if self.meta is None:
            self.meta = payload
            self.meta_time = parse_time(payload.get("timestamp")) or stamp
            self.cwd = _str(payload, "cwd") or self.cwd
            if self._parent_link()[1] == "fork":
                self.replay_open = True
        elif native and native != self.native_id:
            # A fork or subagent file copies its ancestors' session_meta lines before the copied history.
            self.ancestor_ids.append(native)
            if not self.graph.drafts and self.meta_time:
                self.replay_open = True

    @property
    def native_id(self) -> str:
        if self.meta is not None:
            native = self.meta.get("id") or self.meta.get("session_id")
            if isinstance(native, str) and native:
                return native
        match = re.search(
            r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})", self.path.stem
        )
        return match.group(1) if match else self.path.stem

    def _parent_link(self) -> tuple[str | None, str]:
        meta = self.meta or {}
        source = meta.get("source")
        if isinstance(source, dict) and "subagent" in source:
            sub = source.get("subagent")
            parent = None
            if isinstance(sub, dict):
                spawn = sub.get("thread_spawn")
                if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str):
                    parent = spawn["parent_thread_id"]
            if parent is None and isinstance(meta.get("parent_thread_id"), str):
                parent = meta["parent_thread_id"]
            return parent, "subagent"
        forked = meta.get("forked_from_id")
        if isinstance(forked, str) and forked:
            return forked, "fork"
        return None, "trunk"

    # -- response items --------------------------------------------------------------------

    def _response_item(self, p: dict[str, Any]) -> None:
        item = p.get("type")
        if not isinstance(item, str):
            raise ImportFormatError("response_item has no 'type'")
        if item == "message":
            role = _str(p, "role")
            text = _content_text(p)
            extra = {"codex_id": p["id"]} if isinstance(p.get("id"), str) else {}
            if role == "assistant":
                self._assistant_text(text, "item", _str(p, "phase"), extra)
            elif role == "user":
                if _is_injected(text):
                    self._system(text, {"injected": True, **extra})
                else:
                    self._prompt(text, "item", {"images": count_images(p.get("content"))} | extra)
            else:  # developer / system instructions
                self._system(text, {"injected": True, "codex_role": role, **extra})
        elif item == "reasoning":
            summary = p.get("summary")
            texts = [as_text(s) for s in summary] if isinstance(summary, list) else []
            self._model_output()
            for text in texts:
                self._add_once(self.reasoning, text, "item")
            if not texts and p.get("encrypted_content"):
                self.assistant.metadata["encrypted_reasoning"] = True
        elif item in CALL_ITEMS:
            self._call(item, p)
        elif item in OUTPUT_ITEMS:
            self._output(item, p)
        elif item == "compaction":
            self._system("[context compacted]", {"compaction": True})
        elif item == "ghost_snapshot":
            ghost = _dict(p, "ghost_commit")
            commit = ghost.get("id")
            if isinstance(commit, str):
                self.ghosts.append(commit)
                if self.prompt is not None and not self.prompt.settled:
                    self.prompt.metadata["ghost_commit"] = commit
        elif item == "agent_message":
            # A message from another agent of the same run (multi-agent builds).
            text = _content_text(p)
            self._system(text, {"agent_message": True, "author": p.get("author"), "recipient": p.get("recipient")})
        elif item in IGNORED_ITEMS:
            pass
        else:
            self.report.unknown(f"codex:response_item:{item}")

    def _call(self, item: str, p: dict[str, Any]) -> None:
        call_id = p.get("call_id")
        if call_id is not None and not isinstance(call_id, str):
            raise ImportFormatError("'call_id' must be a string")
        if item == "function_call":
            name, args = _str(p, "name"), _parse_arguments(p.get("arguments"))
        elif item == "custom_tool_call":
            name, args = _str(p, "name"), _parse_arguments(p.get("input"))
        elif item == "local_shell_call":
            name, args = "local_shell", p.get("action")
        elif item == "tool_search_call":
            name, args = "tool_search", p.get("arguments")
        elif item == "web_search_call":
            name, args = "web_search", p.get("action")
        else:
            name, args = "image_generation", {"revised_prompt": p.get("revised_prompt")}
        if isinstance(p.get("namespace"), str) and p["namespace"]:
            name = f"{p['namespace']}.{name}"
        owner = self._model_output()
        meta: dict[str, Any] = {"codex_type": item}
        if call_id:
            meta["call_id"] = call_id
        if isinstance(p.get("status"), str):
            meta["status"] = p["status"]
        content = ""
        if item == "web_search_call" and isinstance(args, dict):
            content = as_text(args.get("query") or args.get("url") or "")
        sid = self.graph.unique_id(call_id, f"{self.prefix}:{self.line}")
        tool = self._add(
            Draft(
                sid,
                "tool",
                content,
                parent=owner.source_id,
                called_by=owner.source_id,
                name=name or "tool",
                input=args,
                metadata=meta,
            )
        )
        calls = owner.metadata.setdefault("tool_calls", [])
        calls.append(sid)
        if item in SELF_CONTAINED_CALLS or not call_id:
            self.graph.settle(tool, self.offset)
        else:
            self.pending_calls[call_id] = tool

    def _output(self, item: str, p: dict[str, Any]) -> None:
        call_id = p.get("call_id")
        if call_id is not None and not isinstance(call_id, str):
            raise ImportFormatError("'call_id' must be a string")
        value = p.get("tools") if item == "tool_search_output" else p.get("output")
        text, meta = _output_text(value)
        self._close_group()
        tool = self.pending_calls.pop(call_id, None) if call_id else None
        if tool is None:
            owner = self.assistant
            if owner is None:
                raise ImportFormatError(f"{item} for unknown call {call_id!r} before any model response")
            sid = self.graph.unique_id(None, f"{self.prefix}:{self.line}")
            tool = self._add(
                Draft(
                    sid,
                    "tool",
                    text,
                    parent=owner.source_id,
                    called_by=owner.source_id,
                    name="output",
                    metadata={"call_id": call_id, "unpaired": True, "codex_type": item, **meta},
                )
            )
        else:
            tool.content = text
            tool.metadata.update(meta)
        self.graph.settle(tool, self.offset)
        self._settle_assistant_if_done()

    # -- events ----------------------------------------------------------------------------

    def _event(self, p: dict[str, Any]) -> None:
        event = p.get("type")
        if not isinstance(event, str):
            raise ImportFormatError("event_msg has no 'type'")
        if event == "user_message":
            text = _str(p, "message")
            kind = p.get("kind")
            if (isinstance(kind, str) and kind.lower() in _INJECTED_KINDS) or _is_injected(text):
                self._system(text, {"injected": True}, origin="event")
            else:
                images = p.get("images")
                n = len(images) if isinstance(images, list) else 0
                local = p.get("local_images")
                n += len(local) if isinstance(local, list) else 0
                self._prompt(text, "event", {"images": n})
        elif event == "agent_message":
            self._assistant_text(_str(p, "message"), "event", _str(p, "phase"), {})
        elif event == "agent_reasoning":
            self._model_output()
            self._add_once(self.reasoning, _str(p, "text"), "event")
        elif event == "token_count":
            self._token_count(p)
        elif event in ("task_started", "turn_started"):
            turn_id = p.get("turn_id")
            if isinstance(turn_id, str):
                if self.prompt is not None and not self.prompt.settled and "turn_id" not in self.prompt.metadata:
                    self.prompt.metadata["turn_id"] = turn_id
                else:
                    self.pending_turn_id = turn_id
        elif event in ("task_complete", "turn_complete"):
            if self.assistant is not None and not self.assistant.settled:
                for key in ("duration_ms", "time_to_first_token_ms"):
                    if isinstance(p.get(key), (int, float)):
                        self.assistant.metadata[key] = p[key]
                if isinstance(p.get("error"), dict):
                    self.assistant.metadata["error"] = as_text(p["error"].get("message"))
            self._end_turn()
        elif event == "turn_aborted":
            last = self.unsettled_chain[-1] if self.unsettled_chain else None
            if last is not None and not last.settled:
                last.metadata["turn_aborted"] = _str(p, "reason") or "aborted"
            self._end_turn()
        elif event == "thread_rolled_back":
            self._rollback(p.get("num_turns"))
        elif event == "thread_name_updated":
            self.title = _str(p, "thread_name") or self.title
        elif event == "error":
            self._system(f"error: {_str(p, 'message')}", {"event": "error"})
        elif event == "exited_review_mode":
            self._system(_review_text(_dict(p, "review_output")), {"review": True})
        elif event == "item_completed":
            self._item_completed(_dict(p, "item"))
        elif event == "collab_agent_spawn_end":
            thread = p.get("new_thread_id")
            if isinstance(thread, str):
                call = self.graph.get(p.get("call_id")) if isinstance(p.get("call_id"), str) else None
                anchor = call or self.assistant or (self.graph.get(self.head))
                if anchor is not None:
                    self.spawned[thread] = anchor.source_id
                    if not anchor.settled:
                        anchor.metadata.setdefault("spawned_threads", []).append(thread)
        elif event in CALL_END_EVENTS:
            call_id = p.get("call_id")
            tool = self.pending_calls.get(call_id) if isinstance(call_id, str) else None
            if tool is not None:
                for key in ("exit_code", "status", "success"):
                    if isinstance(p.get(key), (int, str, bool)):
                        tool.metadata.setdefault(key, p[key])
        elif event in IGNORED_EVENTS:
            pass
        else:
            self.report.unknown(f"codex:event_msg:{event}")

    def _item_completed(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "UserMessage":
            self._prompt(as_text(item.get("content")), "item_completed", {})
        elif kind == "AgentMessage":
            self._assistant_text(as_text(item.get("content")), "item_completed", "", {})
        elif kind == "Reasoning":
            texts = item.get("summary_text")
            if isinstance(texts, list) and texts:
                self._model_output()
                for text in texts:
                    self._add_once(self.reasoning, as_text(text), "item_completed")
        elif kind == "Plan" and self.assistant is not None and not self.assistant.settled:
            self.assistant.metadata["plan"] = as_text(item.get("text"))

    def _token_count(self, p: dict[str, Any]) -> None:
        info = p.get("info")
        if not isinstance(info, dict):
            return
        total = info.get("total_token_usage")
        if total is not None and total == self.last_total:
            return  # 0.58 repeats each count after the turn context
        self.last_total = total
        usage = {k: info[k] for k in ("last_token_usage", "total_token_usage", "model_context_window") if k in info}
        target = self.assistant
        if target is not None and not target.settled and "token_usage" not in target.metadata:
            target.metadata["token_usage"] = usage
            self._settle_assistant_if_done()
        else:
            self.pending_usage = usage

    # -- chain building -------------------------------------------------------------------

    def _add(self, draft: Draft) -> Draft:
        draft.created_at = draft.created_at or self.time
        draft.metadata.setdefault("line", self.line)
        if self.replay_open:
            draft.metadata["replayed"] = True
        return self.graph.add(draft)

    def _chain(self, role: str, content: str, meta: dict[str, Any], name: str | None = None) -> Draft:
        """A new node on the chain; everything before it is final now."""
        self._close_group()
        for draft in self.unsettled_chain:
            self.graph.settle(draft, self.offset)
        sid = self.graph.unique_id(None, f"{self.prefix}:{self.line}")
        draft = self._add(Draft(sid, role, content, parent=self.head, name=name, metadata=meta))
        self.head = sid
        self.unsettled_chain = [draft]
        return draft

    def _system(self, text: str, meta: dict[str, Any], origin: str = "item") -> None:
        # The same injected text can arrive as an item and as an event: keep one.
        last = self.unsettled_chain[-1] if self.unsettled_chain else None
        if last is not None and last.role == "system" and self._copy_of(last, text, origin):
            return
        draft = self._chain("system", text, dict(meta))
        self.system_origins[draft.source_id] = {origin}

    def _copy_of(self, node: Draft, text: str, origin: str) -> bool:
        """`text` from `origin` repeats `node`, written from another origin: note it, no new node."""
        seen = self.system_origins.setdefault(node.source_id, set())
        if origin in seen or not _same(node.content, text):
            return False
        seen.add(origin)
        return True

    def _prompt(self, text: str, origin: str, meta: dict[str, Any]) -> None:
        last = self.unsettled_chain[-1] if self.unsettled_chain else None
        if last is not None and last.metadata.get("injected") and self._copy_of(last, text, origin):
            return  # the plain copy of an injected event
        prompt = self.prompt
        if (
            prompt is not None
            and self.after_prompt_only_system
            and origin not in self.prompt_origins
            and _same(prompt.content, text)
        ):
            self.prompt_origins.add(origin)
            if not prompt.settled and meta.get("images"):
                prompt.metadata["images"] = max(prompt.metadata.get("images", 0), meta["images"])
            return
        if origin == "item":
            # Typed prompts also come as a user_message event; until one matches, this may be
            # injected context the prefix list does not know (newer Codex Desktop builds).
            draft = self._user_node(text, meta)
            self.unsettled_chain.remove(draft)  # settled when decided
            self.tentative.append(draft)
            return
        self.user_events = True
        match = next((d for d in reversed(self.tentative) if _same(d.content, text)), None)
        if match is not None:
            self._decide_tentative(confirmed=match)
            self._confirm(match, {"item", origin})
            return
        self._decide_tentative()
        self._confirm(self._user_node(text, meta), {origin})

    def _user_node(self, text: str, meta: dict[str, Any]) -> Draft:
        meta = {k: v for k, v in meta.items() if v}
        if self.pending_turn_id:
            meta["turn_id"] = self.pending_turn_id
            self.pending_turn_id = None
        if self.pending_rollback is not None:
            meta["after_rollback"] = self.pending_rollback
            self.pending_rollback = None
        return self._chain("user", text, meta)

    def _confirm(self, draft: Draft, origins: set[str]) -> None:
        """`draft` is a typed prompt: the turn starts here."""
        self._settle_pending_calls()  # calls of the last turn get no more output
        self.prompt, self.prompt_origins = draft, origins
        self.after_prompt_only_system = True
        self.turn_users.append(draft.source_id)
        self.assistant = None
        if draft not in self.unsettled_chain:
            self.unsettled_chain.append(draft)

    def _decide_tentative(self, confirmed: Draft | None = None) -> None:
        """Settle the user items no event has matched (up to `confirmed`, which is a prompt).

        In a rollout with user_message events an unmatched user item is injected context;
        in one without (the oldest builds) it is the prompt itself.
        """
        cut = len(self.tentative) if confirmed is None else self.tentative.index(confirmed)
        undecided = self.tentative[:cut]
        del self.tentative[: cut + 1]
        for draft in undecided:
            if not self.user_events:
                self._confirm(draft, {"item"})
                continue
            draft.role = "system"
            draft.metadata.update(injected=True, unmatched_user_item=True)
            for key in ("turn_id", "after_rollback"):  # they belong to the prompt that follows
                if key in draft.metadata and confirmed is not None:
                    confirmed.metadata.setdefault(key, draft.metadata.pop(key))
            self.graph.settle(draft, self.offset)

    def _model_output(self) -> Draft:
        """The assistant node that model-output items join; a new one when the last closed."""
        if self.assistant is not None and self.group_open:
            return self.assistant
        meta: dict[str, Any] = {}
        if self.pending_usage is not None:
            meta["token_usage"] = self.pending_usage
            self.pending_usage = None
        self._decide_tentative()
        draft = self._chain("assistant", "", meta, name=self.model or None)
        self.assistant, self.group_open = draft, True
        self.messages, self.reasoning = [], []
        self.after_prompt_only_system = False
        return draft

    def _assistant_text(self, text: str, origin: str, phase: str, meta: dict[str, Any]) -> None:
        if not text:
            return
        # The event copy of a reply may come after the response group closed.
        if self.assistant is not None and not self.assistant.settled and self._has_copy(self.messages, text, origin):
            return
        draft = self._model_output()
        self._add_once(self.messages, text, origin)
        draft.content = "\n\n".join(t for t, _ in self.messages)
        if phase:
            draft.metadata["phase"] = phase
        draft.metadata.update(meta)

    @staticmethod
    def _has_copy(entries: list[tuple[str, set[str]]], text: str, origin: str) -> bool:
        for existing, origins in entries:
            if origin not in origins and _same(existing, text):
                origins.add(origin)
                return True
        return False

    def _add_once(self, entries: list[tuple[str, set[str]]], text: str, origin: str) -> None:
        if not text or self._has_copy(entries, text, origin):
            return
        entries.append((text, {origin}))
        if entries is self.reasoning and self.assistant is not None:
            self.assistant.metadata["reasoning"] = [t for t, _ in entries]

    def _close_group(self) -> None:
        self.group_open = False

    def _settle_assistant_if_done(self) -> None:
        a = self.assistant
        if a is not None and not self.group_open and "token_usage" in a.metadata and not self.pending_calls_of(a):
            self.graph.settle(a, self.offset)

    def pending_calls_of(self, assistant: Draft) -> bool:
        return any(t.called_by == assistant.source_id for t in self.pending_calls.values())

    def _settle_pending_calls(self) -> None:
        for tool in self.pending_calls.values():
            tool.metadata.setdefault("status", "no_output")
            self.graph.settle(tool, self.offset)
        self.pending_calls.clear()

    def _end_turn(self) -> None:
        self._close_group()
        self._decide_tentative()
        for draft in self.unsettled_chain:
            self.graph.settle(draft, self.offset)
        self.unsettled_chain = []
        self.after_prompt_only_system = False

    def _rollback(self, num_turns: Any) -> None:
        if isinstance(num_turns, bool) or not isinstance(num_turns, int) or num_turns < 0:
            raise ImportFormatError("thread_rolled_back 'num_turns' must be a non-negative integer")
        self._end_turn()
        self._settle_pending_calls()
        if num_turns == 0 or not self.turn_users:
            return
        dropped = self.turn_users[-num_turns:]
        del self.turn_users[-num_turns:]
        first = self.graph.get(dropped[0])
        self.head = first.parent if first is not None else self.head
        self.rollbacks.append({"line": self.line, "num_turns": num_turns, "dropped": dropped, "fork_from": self.head})
        self.pending_rollback = num_turns
        self.assistant, self.prompt = None, None

    def _compacted(self, p: dict[str, Any]) -> None:
        message = _str(p, "message")
        history = p.get("replacement_history")
        items = history if isinstance(history, list) else []
        if not message and items:
            lines = []
            for item in items:
                if isinstance(item, dict) and item.get("type") == "message":
                    lines.append(f"[{item.get('role', '?')}] {_content_text(item)}")
            message = "\n\n".join(lines)
        meta: dict[str, Any] = {"compacted": True, "replacement_items": len(items)}
        for key in ("window_id", "previous_window_id"):
            if isinstance(p.get(key), str):
                meta[key] = p[key]
        self._system(message or "[context compacted]", meta)

    # -- result ----------------------------------------------------------------------------

    def idle_flush(self, offset: int) -> None:
        """The file has been quiet: settle what only a later record would have settled.

        A prompt or context node waiting for the next node, and a model response waiting only
        for its token count, are done. An open response group or a running tool is not.
        """
        for draft in self.unsettled_chain:
            if draft is not self.assistant:
                self.graph.settle(draft, offset)
        a = self.assistant
        if a is not None and not self.group_open and not self.pending_calls_of(a):
            self.graph.settle(a, offset)

    def session(
        self, *, end_offset: int, start_offset: int, live: bool, skip: set[str] | None = None
    ) -> ImportedSession:
        meta = self.meta or {}
        parent, kind = self._parent_link()
        git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
        if not live:
            self._decide_tentative()
            for tool in self.pending_calls.values():
                tool.metadata.setdefault("status", "no_output")
        nodes = self.graph.nodes(end_offset=end_offset, start_offset=start_offset, live=live, skip=skip)
        extra: dict[str, Any] = {"end_offset": end_offset}
        for key in ("originator", "cli_version", "model_provider", "agent_nickname", "agent_role"):
            if isinstance(meta.get(key), str):
                extra[key] = meta[key]
        if isinstance(meta.get("source"), (str, dict)):
            extra["codex_source"] = meta["source"]
        if isinstance(git.get("commit_hash"), str):
            extra["git_commit"] = git["commit_hash"]
        if isinstance(git.get("repository_url"), str):
            extra["git_remote"] = git["repository_url"]
        if self.rollbacks:
            extra["rollbacks"] = self.rollbacks
        if self.spawned:
            extra["children"] = self.spawned  # subagent thread id -> the node that spawned it
        if self.ghosts:
            extra["ghost_commits"] = self.ghosts
        if self.ancestor_ids:
            extra["copied_session_metas"] = self.ancestor_ids
        title = self.title or _thread_name(self.path, self.native_id)
        if title:
            extra["title_source"] = "user"  # Codex thread names are given by the user
        return ImportedSession(
            source=SOURCE,
            native_id=self.native_id,
            source_file=str(self.path),
            nodes=nodes,
            kind=kind,
            title=title,
            cwd=self.cwd,
            model=self.model,
            git_branch=git.get("branch") if isinstance(git.get("branch"), str) else "",
            head=self.graph.visible_head(self.head),
            parent_native_id=parent,
            extra=MappingProxyType(extra),
        )


def _review_text(output: dict[str, Any]) -> str:
    lines = ["review:"]
    explanation = output.get("overall_explanation")
    if isinstance(explanation, str) and explanation:
        lines.append(explanation)
    findings = output.get("findings")
    if isinstance(findings, list):
        for finding in findings:
            if isinstance(finding, dict):
                lines.append(f"- {as_text(finding.get('title'))}: {as_text(finding.get('body'))}")
    return "\n".join(lines)


def _thread_name(path: Path, native_id: str) -> str:
    """The name the user gave the thread, from <codex home>/session_index.jsonl (newest wins)."""
    for home in path.parents[:5]:
        index = home / "session_index.jsonl"
        if index.is_file():
            return _read_index(index).get(native_id, "")
    return ""


def _read_index(index: Path) -> dict[str, str]:
    names: dict[str, tuple[float, str]] = {}
    try:
        text = index.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    for raw in text.splitlines():
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(row, dict) and isinstance(row.get("id"), str) and isinstance(row.get("thread_name"), str):
            stamp = parse_time(row.get("updated_at"))
            if row["id"] not in names or stamp >= names[row["id"]][0]:
                names[row["id"]] = (stamp, row["thread_name"])
    return {k: v for k, (_, v) in names.items()}


# ---------------------------------------------------------------------------------------------
# module interface


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex").expanduser()


def default_paths() -> list[Path]:
    home = codex_home()
    return [home / "sessions", home / "archived_sessions"]


def discover(paths: Iterable[Path | str]) -> list[Path]:
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            if path.suffix == ".jsonl":
                found[path] = None
        elif path.is_dir():
            for file in sorted(path.rglob("rollout-*.jsonl")):
                if file.is_file():
                    found[file] = None
    return list(found)


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


def open_parser(path: Path | str, report: ImportReport) -> CodexParser:
    return CodexParser(path, report)


def is_complete(path: Path | str) -> bool:
    """A rollout not written to for LIVE_SECONDS is taken as finished."""
    return is_final(Path(path), None)


def parse_file(
    path: Path | str, report: ImportReport, start_offset: int = 0, *, final: bool | None = None
) -> list[ImportedSession]:
    """One rollout file -> one session holding the nodes settled at or after start_offset.

    final=None: final when the file has been quiet for LIVE_SECONDS (see drafts.py).
    """
    path = Path(path)
    parser = CodexParser(path, report)
    if not feed_file(parser, path):
        return []
    parser.taken_to = start_offset
    sessions = parser.take(final=is_final(path, final))
    if not sessions and start_offset == 0 and parser.reader.meta is None and not parser.reader.graph.drafts:
        report.warn(path, None, "no Codex records found")
    return sessions
