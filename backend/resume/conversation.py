"""What a resumed session holds, whatever agent it goes to: the chosen branch up to a turn, as messages.

`conversation_of` reads the store through the export's `select` (the one place the privacy gate is
passed for a session handed out), so a resume is redacted unless `raw`, exactly as an export is.
System nodes (injected context, compaction markers) stay behind: the target agent injects its own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..export.session import select
from ..model import Node, OpmemError, Turn

if TYPE_CHECKING:
    from ..store.sessions import SessionStore


class ResumeError(OpmemError):
    """A resume that cannot be made as asked: the text says why."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    call_id: str  # opmem's tool node id: writers derive the target's own call ids from it
    name: str
    input: Any
    output: str
    is_error: bool = False

    def input_object(self) -> dict[str, Any]:
        """The input as a JSON object (every target's tool call takes one): a bare value is wrapped."""
        if isinstance(self.input, dict):
            return dict(self.input)
        if isinstance(self.input, str):
            try:
                value = json.loads(self.input)
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value
            return {"input": self.input}
        return {} if self.input is None else {"input": self.input}


@dataclass(frozen=True, slots=True)
class Message:
    role: str  # user | assistant
    text: str
    created_at: float
    node_id: str
    turn: int
    model: str = ""
    tools: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class Conversation:
    session_id: str  # opmem's id of the session resumed
    title: str
    cwd: str
    model: str  # the last model named, "" when none
    messages: tuple[Message, ...]
    turns: int  # turns carried (the last one is the turn asked for)
    redacted: bool


def _model_of(node: Node) -> str:
    for key in ("model",):
        value = node.metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return node.name or ""


def messages_of(turns: Sequence[Turn]) -> tuple[Message, ...]:
    """User and assistant nodes in order, each assistant with the tool calls it made."""
    out: list[Message] = []
    for turn in turns:
        calls: dict[str, list[ToolCall]] = {}
        for node in turn.nodes:
            if node.is_tool:
                calls.setdefault(node.called_by or "", []).append(
                    ToolCall(node.id, node.name or "tool", node.input, node.content or "", _is_error(node))
                )
        for node in turn.nodes:
            if node.is_tool or node.role not in ("user", "assistant"):
                continue
            tools = tuple(calls.get(node.id, ())) if node.role == "assistant" else ()
            if node.role == "assistant" and not node.content and not tools:
                continue  # an empty reply (a stream cut off) is nothing to carry
            model = _model_of(node) if node.role == "assistant" else ""
            out.append(Message(node.role, node.content or "", node.created_at, node.id, turn.number, model, tools))
    return tuple(out)


def _is_error(node: Node) -> bool:
    return node.metadata.get("is_error") is True or node.metadata.get("status") == "error"


def conversation_of(
    store: SessionStore, session_id: str, *, turn: int | None = None, branch: str | None = None, raw: bool = False
) -> Conversation:
    """The session's branch up to `turn` (all of it when None), redacted unless `raw`."""
    if turn is not None and turn < 1:
        raise ResumeError(f"--turn {turn}: turns are counted from 1")
    chosen = select(store, session_id, turns=None if turn is None else f"..{turn}", branch=branch, raw=raw)
    messages = messages_of(chosen.turns)
    if not any(m.role == "user" for m in messages):
        raise ResumeError(f"session {session_id}: nothing to resume (no user message on this branch)")
    extra = chosen.meta.extra
    cwd = extra.get("cwd") if isinstance(extra.get("cwd"), str) else ""
    model = next((m.model for m in reversed(messages) if m.model), "")
    if not model and isinstance(extra.get("model"), str):
        model = extra["model"]
    return Conversation(
        session_id=session_id,
        title=chosen.meta.title or next(m.text for m in messages if m.role == "user")[:80],
        cwd=cwd or "",
        model=model,
        messages=messages,
        turns=max((t.number for t in chosen.turns), default=0),
        redacted=chosen.redacted,
    )
